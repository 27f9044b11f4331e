package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Every mistake is a typed AttrflowException carrying the core's message unchanged. */
class ErrorTest {
    private val flowId = subscriberArchiveFlowId()

    @Test
    fun `malformed page tokens are InvalidPageToken`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            for (bad in listOf("7", "archive", "00000000000000000002", "000000000000000000101", "Current")) {
                val error = assertThrows<AttrflowException.InvalidPageToken> { store.getSubscriberPage(flowId, bad) }
                assertEquals("invalid page token \"$bad\"", error.message)
            }
            val logError = assertThrows<AttrflowException.InvalidPageToken> { store.getLogPage("app", "audit", "12") }
            assertEquals("invalid page token \"12\"", logError.message)
        }
    }

    @Test
    fun `a well formed token with no chunk is PageNotFound`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            val error = assertThrows<AttrflowException.PageNotFound> {
                store.getSubscriberPage(flowId, "00000000000000000301")
            }
            assertEquals("subscriber page \"00000000000000000301\" not found", error.message)
        }
    }

    @Test
    fun `a flow never started is FlowNotFound`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException.FlowNotFound> {
                store.registerSubscriber("nobody", "s", "s@example.com")
            }
            assertEquals("flow \"nobody\" not found", error.message)
        }
    }

    @Test
    fun `missing fields and bad names are InvalidInput and write nothing`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            val missing = assertThrows<AttrflowException.InvalidInput> {
                store.registerSubscriber(flowId, "", "s@example.com")
            }
            assertEquals("subscriberId is required", missing.message)
            assertThrows<AttrflowException.InvalidInput> { store.registerSubscriber("a/b", "s", "s@example.com") }
            assertTrue(store.getSubscriberPage(flowId, "current").subscribers.isEmpty())

            store.startAppLog("app")
            val notJson = assertThrows<AttrflowException.InvalidInput> { store.appendLogRecord("app", "audit", "{oops") }
            assertTrue(notJson.message!!.startsWith("record of log \"audit\" is not JSON"), notJson.message)
            assertThrows<AttrflowException.InvalidInput> { store.appendLogRecord("app", "a/b", "1") }
            assertTrue(store.getLogPage("app", "audit", "current").entries.isEmpty())
        }
    }

    @Test
    fun `a store that is not a database is Storage`() {
        val file = java.nio.file.Files.createTempFile("attrflow-kotlin", ".db")
        java.nio.file.Files.writeString(file, "this is not an SQLite database, it is text long enough to be read")
        val error = assertThrows<AttrflowException.Storage> {
            Store.open(file.toString()).use { it.startSubscriberArchive(flowId) }
        }
        assertTrue(error.message!!.startsWith("storage error:"), error.message)
    }

    @Test
    fun `every error is an AttrflowException`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException> { store.getSubscriberPage("nobody", "current") }
            assertTrue(error is AttrflowException.FlowNotFound)
        }
    }
}
