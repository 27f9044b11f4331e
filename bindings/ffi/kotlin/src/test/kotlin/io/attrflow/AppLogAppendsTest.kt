package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Batch and idempotent appends to app logs, with the subscriber archive's rules. */
class AppLogAppendsTest {
    private val flowId = "my-app"

    /** This test's AppLog of the store. */
    private val Store.logs: AppLog get() = appLog(flowId)

    private fun records(range: IntRange) = range.map { """{"n":$it}""" }

    private fun Store.allSequences(log: String): List<ULong> {
        val sequences = mutableListOf<ULong>()
        var token = "current"
        while (token.isNotEmpty()) {
            val page = logs.page(log, token)
            sequences += page.entries.map { it.sequence }
            token = page.nextPageToken
        }
        return sequences
    }

    @Test
    fun `a batch crossing chunk boundaries pages back whole`() {
        freshStore().use { store ->
            store.logs.start()
            store.logs.append("chat", """{"n":1}""")
            val batch = store.logs.appendBatch("chat", records(2..215))
            assertEquals((2..215).map { it.toULong() }, batch.map { it.sequence })
            assertEquals("""{"n":2}""", batch.first().recordJson)
            val current = store.logs.page("chat", "current")
            assertEquals(15, current.entries.size)
            assertEquals("00000000000000000101", current.nextPageToken)
            assertEquals((215 downTo 1).map { it.toULong() }, store.allSequences("chat"))
        }
    }

    @Test
    fun `keyed appends retried from a fresh Store keep their sequences`() {
        val (location, first, batch) = freshStore().use { store ->
            store.logs.start()
            val first = store.logs.appendOnce("audit", "login-1", """{"user":"ada"}""")
            val batch = store.logs.appendBatch("audit", records(1..120), "import-1")
            assertEquals(first, store.logs.appendOnce("audit", "login-1", """{"user":"ada"}"""))
            Triple(store.location(), first, batch)
        }
        Store.open(location, Durability.NORMAL).use { reopened ->
            assertEquals(first, reopened.logs.appendOnce("audit", "login-1", """{"user":"ada"}"""))
            assertEquals(batch, reopened.logs.appendBatch("audit", records(1..120), "import-1"))
            assertEquals((121 downTo 1).map { it.toULong() }, reopened.allSequences("audit"))
            assertEquals(1uL, reopened.logs.appendOnce("chat", "login-1", "{}").sequence, "keys are per log")
            assertThrows<AttrflowException.InvalidInput> {
                reopened.logs.appendOnce("audit", "login-1", """{"user":"bob"}""")
            }
        }
    }

    @Test
    fun `bad batches and keys are InvalidInput and store nothing`() {
        freshStore().use { store ->
            store.logs.start()
            val oversize = assertThrows<AttrflowException.InvalidInput> {
                store.logs.appendBatch("audit", records(1..1001))
            }
            assertEquals("a batch holds at most 1000 records, got 1001", oversize.reason)
            val notJson = assertThrows<AttrflowException.InvalidInput> {
                store.logs.appendBatch("audit", listOf("1", "{oops"))
            }
            assertTrue(notJson.reason.startsWith("records[1]: record of log \"audit\" is not JSON"), notJson.reason)
            val nullRecord = assertThrows<AttrflowException.InvalidInput> {
                store.logs.appendBatch("audit", listOf("1", "null"))
            }
            assertEquals("records[1]: record is required", nullRecord.reason)
            val badKey = assertThrows<AttrflowException.InvalidInput> {
                store.logs.appendOnce("audit", "has space", "1")
            }
            assertTrue(badKey.reason.startsWith("idempotency key must be"), badKey.reason)
            assertTrue(store.logs.page("audit", "current").entries.isEmpty())
        }
    }
}
