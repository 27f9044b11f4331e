package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Every mistake is a typed AttrflowException carrying the core's message unchanged and its fields. */
class ErrorTest {
    private val flowId = subscriberArchiveFlowId()

    /** This test's SubscriberArchive of the store. */
    private val Store.archive: SubscriberArchive get() = subscriberArchive(flowId)

    @Test
    fun `malformed page tokens are InvalidPageToken`() {
        freshStore().use { store ->
            store.archive.start()
            for (bad in listOf("7", "archive", "00000000000000000002", "000000000000000000101", "Current")) {
                val error = assertThrows<AttrflowException.InvalidPageToken> { store.archive.page(bad) }
                assertEquals("invalid page token \"$bad\"", error.reason)
                assertEquals(bad, error.token)
            }
            val logError = assertThrows<AttrflowException.InvalidPageToken> { store.appLog("app").page("audit", "12") }
            assertEquals("invalid page token \"12\"", logError.reason)
        }
    }

    @Test
    fun `a well formed token with no chunk is PageNotFound`() {
        freshStore().use { store ->
            store.archive.start()
            val error = assertThrows<AttrflowException.PageNotFound> {
                store.archive.page("00000000000000000301")
            }
            assertEquals("subscriber page \"00000000000000000301\" not found", error.reason)
        }
    }

    @Test
    fun `a flow never started is FlowNotFound`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException.FlowNotFound> {
                store.subscriberArchive("nobody").register("s", "s@example.com")
            }
            assertEquals("flow \"nobody\" not found", error.reason)
            assertEquals("nobody", error.flowId)
        }
    }

    @Test
    fun `the flow clients report the same typed errors with their fields`() {
        freshStore().use { store ->
            val archive = store.subscriberArchive(flowId)
            val missing = assertThrows<AttrflowException.FlowNotFound> { archive.register("s", "s@example.com") }
            assertEquals(flowId, missing.flowId)
            val runId = archive.start()
            assertEquals(runId, store.archive.start(), "starting again returns the running run")
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
            store.archive.start()
            val missing = assertThrows<AttrflowException.InvalidInput> {
                store.archive.register("", "s@example.com")
            }
            assertEquals("subscriberId is required", missing.reason)
            assertThrows<AttrflowException.InvalidInput> { store.subscriberArchive("a/b").register("s", "s@example.com") }
            assertTrue(store.archive.page("current").subscribers.isEmpty())

            store.appLog("app").start()
            val notJson = assertThrows<AttrflowException.InvalidInput> { store.appLog("app").append("audit", "{oops") }
            assertTrue(notJson.reason.startsWith("record of log \"audit\" is not JSON"), notJson.reason)
            assertThrows<AttrflowException.InvalidInput> { store.appLog("app").append("a/b", "1") }
            assertTrue(store.appLog("app").page("audit", "current").entries.isEmpty())
        }
    }

    @Test
    fun `a store that is not a database is Storage`() {
        val file = scratchFolder().resolve("not-a-database.db")
        java.nio.file.Files.writeString(file, "this is not an SQLite database, it is text long enough to be read")
        val error = assertThrows<AttrflowException.Storage> {
            Store.open(file.toString()).use { it.archive.start() }
        }
        assertTrue(error.reason.startsWith("storage error:"), error.reason)
    }

    @Test
    fun `every error is an AttrflowException`() {
        freshStore().use { store ->
            val error = assertThrows<AttrflowException> { store.subscriberArchive("nobody").page("current") }
            assertTrue(error is AttrflowException.FlowNotFound)
        }
    }

    @Test
    fun `a handler that throws an attrflow error fails with that error's own message, for every kind`() {
        val thrown = listOf(
            AttrflowException.RunNotCurrent("flow \"f\" has no run \"r1\"; its run is \"r2\"", "f", "r1", "r2"),
            AttrflowException.StorageFull("storage error: disk full"),
            AttrflowException.Storage("storage error: locked"),
        )
        freshStore().use { store ->
            store.registerFlowType(
                flowType("Rethrow") {
                    rpc<Int, Unit>("Throw") { index -> throw thrown[index] }
                },
            )
            store.startFlow("Rethrow", "rethrow")
            thrown.forEachIndexed { index, error ->
                val failure = assertThrows<AttrflowException.HandlerFailure> {
                    store.invoke<Int, Unit>("Rethrow", "rethrow", "Throw", index)
                }
                assertEquals(error.coreMessage, failure.reason)
                assertEquals(error::class.qualifiedName, failure.errorType)
            }
        }
    }

    @Test
    fun `a full disk is StorageFull, apart from other storage errors, with the core's message`() {
        val full = AttrflowException.StorageFull("storage error: disk full")
        val asAny: AttrflowException = full
        assertTrue(asAny !is AttrflowException.Storage)
        assertEquals("storage error: disk full", asAny.coreMessage)
    }
}
