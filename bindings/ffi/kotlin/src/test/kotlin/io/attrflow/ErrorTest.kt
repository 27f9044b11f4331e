package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Every mistake is a typed AttrflowException carrying the core's message unchanged and its fields. */
class ErrorTest {
    private val flowId = subscriberArchiveFlowId()

    @Test
    fun `malformed page tokens are InvalidPageToken`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            for (bad in listOf("7", "archive", "00000000000000000002", "000000000000000000101", "Current")) {
                val error = assertThrows<AttrflowException.InvalidPageToken> { store.getSubscriberPage(flowId, bad) }
                assertEquals("invalid page token \"$bad\"", error.reason)
                assertEquals(bad, error.token)
            }
            val logError = assertThrows<AttrflowException.InvalidPageToken> { store.getLogPage("app", "audit", "12") }
            assertEquals("invalid page token \"12\"", logError.reason)
        }
    }

    @Test
    fun `a well formed token with no chunk is PageNotFound`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            val error = assertThrows<AttrflowException.PageNotFound> {
                store.getSubscriberPage(flowId, "00000000000000000301")
            }
            assertEquals("subscriber page \"00000000000000000301\" not found", error.reason)
        }
    }

    @Test
    fun `a flow never started is FlowNotFound`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException.FlowNotFound> {
                store.registerSubscriber("nobody", "s", "s@example.com")
            }
            assertEquals("flow \"nobody\" not found", error.reason)
            assertEquals("nobody", error.flowId)
        }
    }

    @Test
    fun `the flow clients report the same typed errors with their fields`() {
        freshStore().use { store ->
            val archive = store.subscriberArchive(flowId)
            val missing = assertThrows<AttrflowException.FlowNotFound> { archive.registerWithRetry("s", "s@example.com") }
            assertEquals(flowId, missing.flowId)
            val runId = archive.start()
            assertEquals(runId, store.startSubscriberArchive(flowId), "starting again returns the running run")
            val bad = assertThrows<AttrflowException.InvalidPageToken> { archive.page("7") }
            assertEquals("7", bad.token)
            assertEquals("invalid page token \"7\"", bad.reason)
            assertEquals("current", archive.page("").pageToken)
            val badPolicy = assertThrows<AttrflowException.InvalidInput> {
                store.subscriberArchive(flowId, RetryPolicy(0u, 1u, 1u, 0u))
            }
            assertEquals("a retry policy needs at least 1 attempt", badPolicy.reason)
        }
    }

    @Test
    fun `missing fields and bad names are InvalidInput and write nothing`() {
        freshStore().use { store ->
            store.startSubscriberArchive(flowId)
            val missing = assertThrows<AttrflowException.InvalidInput> {
                store.registerSubscriber(flowId, "", "s@example.com")
            }
            assertEquals("subscriberId is required", missing.reason)
            assertThrows<AttrflowException.InvalidInput> { store.registerSubscriber("a/b", "s", "s@example.com") }
            assertTrue(store.getSubscriberPage(flowId, "current").subscribers.isEmpty())

            store.startAppLog("app")
            val notJson = assertThrows<AttrflowException.InvalidInput> { store.appendLogRecord("app", "audit", "{oops") }
            assertTrue(notJson.reason.startsWith("record of log \"audit\" is not JSON"), notJson.reason)
            assertThrows<AttrflowException.InvalidInput> { store.appendLogRecord("app", "a/b", "1") }
            assertTrue(store.getLogPage("app", "audit", "current").entries.isEmpty())
        }
    }

    @Test
    fun `a store that is not a database is Storage`() {
        val file = scratchFolder().resolve("not-a-database.db")
        java.nio.file.Files.writeString(file, "this is not an SQLite database, it is text long enough to be read")
        val error = assertThrows<AttrflowException.Storage> {
            Store.open(file.toString()).use { it.startSubscriberArchive(flowId) }
        }
        assertTrue(error.reason.startsWith("storage error:"), error.reason)
    }

    @Test
    fun `every error is an AttrflowException`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException> { store.getSubscriberPage("nobody", "current") }
            assertTrue(error is AttrflowException.FlowNotFound)
        }
    }
}
