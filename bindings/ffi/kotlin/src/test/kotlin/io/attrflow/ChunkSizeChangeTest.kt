package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Changing the archive's chunk size from 100 to 50: old tokens keep naming their chunks. */
class ChunkSizeChangeTest {
    private val flowId = subscriberArchiveFlowId()

    /** This test's SubscriberArchive of the store. */
    private val Store.archive: SubscriberArchive get() = subscriberArchive(flowId)

    private fun Store.registerRange(from: Int, to: Int) =
        archive.registerBatch((from..to).map { NewSubscriber("s-$it", "s-$it@example.com") })

    @Test
    fun `a change from 100 to 50 applies from the next boundary and old tokens still resolve`() {
        freshStore().use { store ->
            store.archive.start()
            store.registerRange(1, 130)
            val oldestBefore = store.archive.page("00000000000000000001")

            val change = store.archive.changeChunkSize(50u)
            assertEquals(ChunkSizeChange(50u, 201u, listOf(ChunkLayout(1u, 100u), ChunkLayout(201u, 50u))), change)

            store.registerRange(131, 260)
            val pages = store.allSubscriberPages(flowId)
            assertEquals(
                listOf("current", "00000000000000000201", "00000000000000000101", "00000000000000000001"),
                pages.map { it.pageToken },
            )
            assertEquals(listOf(10, 50, 100, 100), pages.map { it.subscribers.size })
            assertEquals((260 downTo 1).map { it.toULong() }, pages.flatMap { it.subscribers }.map { it.sequence })
            assertEquals(oldestBefore, store.archive.page("00000000000000000001"))

            val notABoundary = assertThrows<AttrflowException.InvalidPageToken> {
                store.archive.page("00000000000000000226")
            }
            assertEquals("invalid page token \"00000000000000000226\"", notABoundary.reason)
        }
    }

    @Test
    fun `chunk sizes out of range are InvalidInput`() {
        freshStore().use { store ->
            store.archive.start()
            for (size in listOf(0uL, 128uL, 10_000uL)) {
                val error = assertThrows<AttrflowException.InvalidInput> { store.archive.changeChunkSize(size) }
                assertEquals("chunk size must be between 1 and 127, got $size", error.reason)
            }
        }
    }
}
