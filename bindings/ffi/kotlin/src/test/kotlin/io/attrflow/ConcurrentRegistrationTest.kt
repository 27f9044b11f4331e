package io.attrflow

import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** 20 JVM threads register 115 subscribers at once on one store, retrying lock conflicts by the core's policy. */
class ConcurrentRegistrationTest {
    private val flowId = subscriberArchiveFlowId()

    @Test
    fun `concurrent registrations get exactly the sequences 1 to 115`() {
        freshStore().use { store ->
            store.subscriberArchive(flowId).start()
            val archive = store.subscriberArchive(flowId, patientRetry)
            val next = AtomicInteger(1)
            val start = CountDownLatch(1)
            val sequences = java.util.concurrent.ConcurrentLinkedQueue<ULong>()
            val threads = (1..20).map {
                Thread {
                    start.await()
                    while (true) {
                        val n = next.getAndIncrement()
                        if (n > 115) break
                        val id = "subscriber-%03d".format(n)
                        sequences += archive.register(id, "$id@example.com").sequence
                    }
                }.apply { start() }
            }
            start.countDown()
            threads.forEach { it.join() }

            assertEquals((1..115).map { it.toULong() }, sequences.sorted())
            val pages = store.allSubscriberPages(flowId)
            assertEquals(listOf("current", "00000000000000000001"), pages.map { it.pageToken })
            assertEquals(15, pages[0].subscribers.size)
            assertEquals((115 downTo 1).map { it.toULong() }, pages.flatMap { it.subscribers }.map { it.sequence })
            assertEquals(115, pages.flatMap { it.subscribers }.map { it.subscriberId }.toSet().size)
        }
    }
}
