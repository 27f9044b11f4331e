package io.attrflow

import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.concurrent.thread

/**
 * The core's follow cursors, stepped directly and as Kotlin `Flow`s: history then live
 * records, in order, each once, of one run; resuming exactly after the last delivery; the
 * core's errors.
 */
class FollowTest {
    @Test
    fun `follow gives an app log's history then its new entries, in order and each once`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.appendBatch("audit", (1..30).map { "{\"n\":$it}" })
            val appender = thread {
                for (n in 31..50) logs.append("audit", "{\"n\":$n}")
            }
            val followed = runBlocking { logs.follow("audit", after = 0u, limit = 7u).asFlow().take(50).toList() }
            appender.join()
            assertEquals((1..50).map { it.toULong() }, followed.map { it.sequence })
            assertEquals((1..50).map { "{\"n\":$it}" }, followed.map { it.recordJson })
        }
    }

    @Test
    fun `follow of a subscriber archive resumes after the sequence it is given`() {
        freshStore().use { store ->
            val flowId = subscriberArchiveFlowId()
            val archive = store.subscriberArchive(flowId)
            archive.start()
            store.subscriberArchive(flowId).registerBatch((1..12).map { NewSubscriber("s-$it", "s-$it@example.com") })
            val registrar = thread {
                for (n in 13..20) store.subscriberArchive(flowId).registerBatch(listOf(NewSubscriber("s-$n", "s-$n@example.com")))
            }
            val followed = runBlocking { archive.follow(after = 10u, limit = 3u).asFlow().take(10).toList() }
            registrar.join()
            assertEquals((11..20).map { it.toULong() }, followed.map { it.sequence })
            assertEquals((11..20).map { "s-$it" }, followed.map { it.subscriberId })
        }
    }

    @Test
    fun `follow surfaces the core's errors - a trimmed start and a batch out of range`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.appendBatch("audit", (1..400).map { "{\"n\":$it}" })
            logs.trim("audit", TrimRule.DropBefore(300u))
            val trimmed = assertThrows<AttrflowException.PageTrimmed> {
                runBlocking { logs.follow("audit", after = 5u).asFlow().take(1).toList() }
            }
            assertEquals(trimmed.oldestSequence, logs.readFrom("audit", trimmed.oldestSequence, 1u).entries[0].sequence)
            val refused = assertThrows<AttrflowException.InvalidInput> {
                runBlocking { logs.follow("audit", after = 0u, limit = 0u).asFlow().take(1).toList() }
            }
            assertEquals("limit must be from 1 to 1000, not 0", refused.reason)
        }
    }

    @Test
    fun `follow ends with RunNotCurrent when its logs are started again, delivering none of the new run`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            val first = logs.start()
            logs.appendBatch("audit", (1..3).map { "{\"n\":$it}" })
            var second = ""
            val seen = mutableListOf<String>()
            val ended = assertThrows<AttrflowException.RunNotCurrent> {
                runBlocking {
                    logs.follow("audit", limit = 2u).asFlow().collect { entry ->
                        seen.add(entry.recordJson)
                        if (entry.sequence == 3uL) {
                            // The new run's entries 1 to 5 are not the old run's 4 and 5.
                            second = store.startFlow("ChunkedLogFlow", "app", idReusePolicy = IdReusePolicy.TERMINATE_IF_RUNNING)
                            logs.appendBatch("audit", (1..5).map { "{\"new\":$it}" })
                        }
                    }
                }
            }
            assertEquals((1..3).map { "{\"n\":$it}" }, seen)
            assertEquals(Triple("app", first, second), Triple(ended.flowId, ended.runId, ended.currentRunId))
            val newRun = runBlocking { logs.follow("audit", runId = second).asFlow().take(5).toList() }
            assertEquals((1..5).map { "{\"new\":$it}" }, newRun.map { it.recordJson })
            assertEquals(second, logs.readFrom("audit", 1u, 1u).runId)
        }
    }

    @Test
    fun `a cursor resumes exactly after the last record it delivered`() {
        freshStore().use { store ->
            val archive = store.subscriberArchive(subscriberArchiveFlowId())
            archive.start()
            archive.registerBatch((1..250).map { NewSubscriber("s-$it", "s-$it@example.com") })
            val cursor = archive.follow(limit = 40u)
            assertEquals((1..40).map { it.toULong() }, cursor.next(1_000u).map { it.sequence })
            assertEquals(40uL, cursor.after())
            assertEquals((41..80).map { it.toULong() }, cursor.next(1_000u).map { it.sequence })
            archive.changeChunkSize(7u)
            archive.registerBatch((251..260).map { NewSubscriber("s-$it", "s-$it@example.com") })
            val rest = generateSequence { cursor.next(100u).ifEmpty { null } }.flatten().toList()
            assertEquals((81..260).map { it.toULong() }, rest.map { it.sequence })
            assertEquals(260uL, cursor.after())
            assertEquals(archive.readFrom(1u, 1u).runId, cursor.runId())
            assertEquals(emptyList<Subscriber>(), cursor.next(10u), "none on timeout")
        }
    }

    @Test
    fun `a cursor from the start of a trimmed log begins at its oldest record, one with a position fails`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.appendBatch("audit", (1..400).map { """{"n":$it}""" })
            val outcome = logs.trim("audit", TrimRule.DropBefore(300u))
            val fromStart = logs.follow("audit", limit = 5u)
            assertEquals(
                (outcome.oldestSequence until outcome.oldestSequence + 5u).toList(),
                fromStart.next(1_000u).map { it.sequence },
            )
            val behind = logs.follow("audit", after = 10u)
            val trimmed = assertThrows<AttrflowException.PageTrimmed> { behind.next(1_000u) }
            assertEquals(outcome.oldestSequence, trimmed.oldestSequence)
            assertEquals(10uL, behind.after(), "a failed step leaves the cursor where it was")
            assertEquals("audit", behind.log())
        }
    }
}
