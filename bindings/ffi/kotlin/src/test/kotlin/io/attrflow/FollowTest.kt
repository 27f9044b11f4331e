package io.attrflow

import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.concurrent.thread

/**
 * The Kotlin `Flow`s over tails: history then live records, in order, each once, of one run;
 * the core's errors.
 */
class FollowTest {
    @Test
    fun `follow gives an app log's history then its new entries, in order and each once`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.appendBatchWithRetry("audit", (1..30).map { "{\"n\":$it}" })
            val appender = thread {
                for (n in 31..50) logs.appendWithRetry("audit", "{\"n\":$n}")
            }
            val followed = runBlocking { logs.follow("audit", after = 0u, batch = 7u).take(50).toList() }
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
            store.registerSubscribers(flowId, (1..12).map { NewSubscriber("s-$it", "s-$it@example.com") })
            val registrar = thread {
                for (n in 13..20) store.registerSubscribers(flowId, listOf(NewSubscriber("s-$n", "s-$n@example.com")))
            }
            val followed = runBlocking { archive.follow(after = 10u, batch = 3u).take(10).toList() }
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
            logs.appendBatchWithRetry("audit", (1..400).map { "{\"n\":$it}" })
            logs.trimWithRetry("audit", TrimRule.DropBefore(300u))
            val trimmed = assertThrows<AttrflowException.PageTrimmed> {
                runBlocking { logs.follow("audit", after = 5u).take(1).toList() }
            }
            assertEquals(trimmed.oldestSequence, logs.readFrom("audit", trimmed.oldestSequence, 1u).entries[0].sequence)
            val refused = assertThrows<AttrflowException.InvalidInput> {
                runBlocking { logs.follow("audit", after = 0u, batch = 0u).take(1).toList() }
            }
            assertEquals("limit must be from 1 to 1000, not 0", refused.reason)
        }
    }

    @Test
    fun `follow ends with RunNotCurrent when its logs are started again, delivering none of the new run`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            val first = logs.start()
            logs.appendBatchWithRetry("audit", (1..3).map { "{\"n\":$it}" })
            var second = ""
            val seen = mutableListOf<String>()
            val ended = assertThrows<AttrflowException.RunNotCurrent> {
                runBlocking {
                    logs.follow("audit", batch = 2u).collect { entry ->
                        seen.add(entry.recordJson)
                        if (entry.sequence == 3uL) {
                            // The new run's entries 1 to 5 are not the old run's 4 and 5.
                            second = store.startFlow("ChunkedLogFlow", "app", idReusePolicy = IdReusePolicy.TERMINATE_IF_RUNNING)
                            logs.appendBatchWithRetry("audit", (1..5).map { "{\"new\":$it}" })
                        }
                    }
                }
            }
            assertEquals((1..3).map { "{\"n\":$it}" }, seen)
            assertEquals(Triple("app", first, second), Triple(ended.flowId, ended.runId, ended.currentRunId))
            val newRun = runBlocking { logs.follow("audit", runId = second).take(5).toList() }
            assertEquals((1..5).map { "{\"new\":$it}" }, newRun.map { it.recordJson })
            assertEquals(second, logs.readFrom("audit", 1u, 1u).runId)
        }
    }
}
