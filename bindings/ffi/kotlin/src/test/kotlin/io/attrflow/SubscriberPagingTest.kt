package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The Dex paging scenario: 201 subscribers page back as one open and two archived chunks. */
class SubscriberPagingTest {
    private val flowId = subscriberArchiveFlowId()

    @Test
    fun `201 subscribers page back newest first in three chunks`() {
        freshStore().use { store ->
            val runId = store.subscriberArchive(flowId).start()
            assertEquals(runId, store.subscriberArchive(flowId).start(), "start is idempotent")
            assertTrue(store.subscriberArchive(flowId).page("current").subscribers.isEmpty())

            for (n in 1..201) {
                assertEquals(n.toULong(), store.registerRetrying(flowId, n).sequence)
            }

            val current = store.subscriberArchive(flowId).page("")
            assertEquals("current", current.pageToken)
            assertEquals(listOf(Subscriber(201u, "subscriber-201", "subscriber-201@example.com")), current.subscribers)
            assertEquals("00000000000000000101", current.nextPageToken)

            val second = store.subscriberArchive(flowId).page(current.nextPageToken)
            assertEquals((200 downTo 101).map { it.toULong() }, second.subscribers.map { it.sequence })
            assertEquals("00000000000000000001", second.nextPageToken)

            val first = store.subscriberArchive(flowId).page(second.nextPageToken)
            assertEquals((100 downTo 1).map { it.toULong() }, first.subscribers.map { it.sequence })
            assertEquals("subscriber-001", first.subscribers.last().subscriberId)
            assertEquals("", first.nextPageToken)

            assertEquals(first, store.subscriberArchive(flowId).page("00000000000000000001"), "archived pages never change")
        }
    }
}
