package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The Dex paging scenario: 201 subscribers page back as one open and two archived chunks. */
class SubscriberPagingTest {
    private val flowId = subscriberArchiveFlowId()

    /** This test's SubscriberArchive of the store. */
    private val Store.archive: SubscriberArchive get() = subscriberArchive(flowId)

    @Test
    fun `201 subscribers page back newest first in three chunks`() {
        freshStore().use { store ->
            val runId = store.archive.start()
            assertEquals(runId, store.archive.start(), "start is idempotent")
            assertTrue(store.archive.page("current").subscribers.isEmpty())

            for (n in 1..201) {
                assertEquals(n.toULong(), store.registerRetrying(flowId, n).sequence)
            }

            val current = store.archive.page("")
            assertEquals("current", current.pageToken)
            assertEquals(listOf(Subscriber(201u, "subscriber-201", "subscriber-201@example.com")), current.subscribers)
            assertEquals("00000000000000000101", current.nextPageToken)

            val second = store.archive.page(current.nextPageToken)
            assertEquals((200 downTo 101).map { it.toULong() }, second.subscribers.map { it.sequence })
            assertEquals("00000000000000000001", second.nextPageToken)

            val first = store.archive.page(second.nextPageToken)
            assertEquals((100 downTo 1).map { it.toULong() }, first.subscribers.map { it.sequence })
            assertEquals("subscriber-001", first.subscribers.last().subscriberId)
            assertEquals("", first.nextPageToken)

            assertEquals(first, store.archive.page("00000000000000000001"), "archived pages never change")
        }
    }
}
