package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.concurrent.thread

/** Trimming, retention, reading forward and tailing from Kotlin: the core's calls and errors. */
class RetentionTest {
    private val flowId = subscriberArchiveFlowId()

    private fun Store.registerRange(from: Int, to: Int) =
        subscriberArchive(flowId).registerBatch((from..to).map { NewSubscriber("s-$it", "s-$it@example.com") })

    @Test
    fun `a trim keeps the retained pages and a trimmed token is PageTrimmed naming the oldest`() {
        freshStore().use { store ->
            val archive = store.subscriberArchive(flowId)
            archive.start()
            store.registerRange(1, 450)
            val kept = archive.page("00000000000000000301")

            val outcome = archive.trim(TrimRule.DropBefore(250u))
            assertEquals(TrimOutcome(2u, 200u, 250u, 201u, "00000000000000000201"), outcome)
            assertEquals(kept, archive.page("00000000000000000301"))
            val trimmed = assertThrows<AttrflowException.PageTrimmed> { archive.page("00000000000000000001") }
            assertEquals("00000000000000000201", trimmed.oldestToken)
            assertEquals(201uL, trimmed.oldestSequence)
            assertThrows<AttrflowException.PageTrimmed> { archive.readFrom(5u, 10u) }

            val read = archive.readFrom(295u, 10u)
            assertEquals((295..304).map { it.toULong() }, read.subscribers.map { it.sequence })
            assertEquals(305uL, read.nextSequence)

            val refused = assertThrows<AttrflowException.InvalidInput> { archive.trim(TrimRule.KeepNewest(0u)) }
            assertEquals("keepNewest must be from 1 to 18446744073709551615, not 0", refused.reason)
        }
    }

    @Test
    fun `a retention holds an app log near its bound and a tail waits for the next entry`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            assertEquals(150uL, logs.setRetention("audit", 150u).keepNewest)
            logs.appendBatch("audit", (1..400).map { "{\"n\":$it}" })
            val held = logs.trim("audit", TrimRule.KeepNewest(150u))
            assertEquals(0uL, held.droppedChunks)
            assertTrue(held.retainedRecords in 150uL until 250uL)

            assertEquals(emptyList<LogEntry>(), logs.tail("audit", 400u, 10u, 0u).entries)
            val appender = thread { logs.append("audit", "{\"n\":401}") }
            var read = logs.tail("audit", 400u, 10u, 60_000u)
            while (read.entries.isEmpty()) read = logs.tail("audit", 400u, 10u, 60_000u)
            appender.join()
            assertEquals(listOf(401uL), read.entries.map { it.sequence })
            assertEquals("{\"n\":401}", read.entries[0].recordJson)
        }
    }
}
