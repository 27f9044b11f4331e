package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The core's counters, read from Kotlin, follow the calls made: by outcome, and commits. */
class MetricsTest {
    private val flowId = subscriberArchiveFlowId()

    @Test
    fun `counters follow calls, errors and commits`() {
        freshStore().use { store ->
            val before = store.metrics()
            store.subscriberArchive(flowId).start()
            for (n in 1..3) {
                store.registerRetrying(flowId, n)
            }
            assertThrows<AttrflowException.FlowNotFound> {
                store.subscriberArchive("nobody").register("s", "s@example.com")
            }
            val after = store.metrics()

            assertTrue(after.callsOk - before.callsOk >= 3UL, "$before -> $after")
            assertTrue(after.callsError - before.callsError >= 1UL, "$before -> $after")
            assertTrue(after.commits - before.commits >= 1UL, "$before -> $after")
            assertTrue(after.membersCommitted - before.membersCommitted >= 4UL, "$before -> $after")
            assertTrue(after.membersCommitted >= after.commits)
            assertTrue(after.callsBatched >= before.callsBatched, "$before -> $after")

            val buckets = after.commitLatencyBuckets
            assertEquals(Double.POSITIVE_INFINITY, buckets.last().upperBoundSeconds)
            assertEquals(after.commits, buckets.last().count)
            buckets.zipWithNext().forEach { (lower, upper) ->
                assertTrue(lower.upperBoundSeconds < upper.upperBoundSeconds)
                assertTrue(lower.count <= upper.count, "buckets are cumulative")
            }
            assertTrue(after.commitLatencySumSeconds > before.commitLatencySumSeconds)
        }
    }
}
