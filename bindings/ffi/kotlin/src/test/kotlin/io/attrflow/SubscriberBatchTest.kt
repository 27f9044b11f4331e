package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Batch and idempotent registration of the subscriber archive, and their typed errors. */
class SubscriberBatchTest {
    private val flowId = subscriberArchiveFlowId()

    /** This test's SubscriberArchive of the store. */
    private val Store.archive: SubscriberArchive get() = subscriberArchive(flowId)

    private fun batch(from: Int, to: Int): List<NewSubscriber> =
        (from..to).map { n -> "subscriber-%03d".format(n).let { NewSubscriber(it, "$it@example.com") } }

    @Test
    fun `a batch crossing two chunk boundaries gets dense sequences and pages back whole`() {
        freshStore().use { store ->
            store.archive.start()
            assertEquals((1..95).map { it.toULong() }, store.archive.registerBatch(batch(1, 95)).map { it.sequence })

            val registered = store.archive.registerBatch(batch(96, 215))
            assertEquals((96..215).map { it.toULong() }, registered.map { it.sequence })
            assertEquals("subscriber-096", registered.first().subscriberId)

            val pages = store.allSubscriberPages(flowId)
            assertEquals(listOf("current", "00000000000000000101", "00000000000000000001"), pages.map { it.pageToken })
            assertEquals(listOf(15, 100, 100), pages.map { it.subscribers.size })
            assertEquals((215 downTo 1).map { it.toULong() }, pages.flatMap { it.subscribers }.map { it.sequence })
            assertEquals(
                (215 downTo 1).map { "subscriber-%03d".format(it) },
                pages.flatMap { it.subscribers }.map { it.subscriberId },
            )
        }
    }

    @Test
    fun `a keyed batch retried returns the first call's subscribers and appends nothing`() {
        freshStore().use { store ->
            store.archive.start()
            val first = store.archive.registerBatch(batch(1, 150), "import-2026-12")
            val retry = store.archive.registerBatch(batch(1, 150), "import-2026-12")
            assertEquals(first, retry)
            assertEquals(150, store.allSubscriberPages(flowId).sumOf { it.subscribers.size })

            val changed = assertThrows<AttrflowException.InvalidInput> {
                store.archive.registerBatch(batch(1, 149), "import-2026-12")
            }
            assertTrue(changed.reason.contains("import-2026-12"), changed.reason)
            assertEquals(150, store.allSubscriberPages(flowId).sumOf { it.subscribers.size })
        }
    }

    @Test
    fun `a registration retried under its key, also from a fresh Store on the same file, keeps its sequence`() {
        val (location, first) = freshStore().use { store ->
            store.archive.start()
            store.archive.registerBatch(batch(1, 41))
            val first = store.archive.registerOnce("signup-ada", "ada", "ada@example.com")
            assertEquals(42uL, first.sequence)
            assertEquals(first, store.archive.registerOnce("signup-ada", "ada", "ada@example.com"))
            store.location() to first
        }
        Store.open(location, Durability.NORMAL).use { reopened ->
            assertEquals(first, reopened.archive.registerOnce("signup-ada", "ada", "ada@example.com"))
            assertEquals(43uL, reopened.archive.registerOnce("signup-bob", "bob", "bob@example.com").sequence)
            val current = reopened.archive.page("current")
            assertEquals((43 downTo 1).map { it.toULong() }, current.subscribers.map { it.sequence })
            assertEquals(1, current.subscribers.count { it.subscriberId == "ada" })

            val otherSubscriber = assertThrows<AttrflowException.InvalidInput> {
                reopened.archive.registerOnce("signup-ada", "ada", "ada@example.org")
            }
            assertTrue(otherSubscriber.reason.contains("signup-ada"), otherSubscriber.reason)
        }
    }

    @Test
    fun `a key that left the idempotency window is a new registration`() {
        freshStore().use { store ->
            store.archive.start()
            assertEquals(IdempotencyWindow(100u, 86_400_000uL), defaultIdempotencyWindow())
            val window = IdempotencyWindow(1u, 3_600_000uL)
            assertEquals(window, store.archive.setIdempotencyWindow(window))
            assertEquals(1uL, store.archive.registerOnce("k1", "ada", "ada@example.com").sequence)
            assertEquals(2uL, store.archive.registerOnce("k2", "bob", "bob@example.com").sequence)
            assertEquals(2uL, store.archive.registerOnce("k2", "bob", "bob@example.com").sequence)
            assertEquals(3uL, store.archive.registerOnce("k1", "ada", "ada@example.com").sequence)

            val bad = assertThrows<AttrflowException.InvalidInput> {
                store.archive.setIdempotencyWindow(IdempotencyWindow(0u, 1uL))
            }
            assertEquals("idempotency window maxKeys must be between 1 and 10000, got 0", bad.reason)
        }
    }

    @Test
    fun `oversize and empty batches and bad keys are InvalidInput and store nothing`() {
        freshStore().use { store ->
            store.archive.start()
            val oversize = assertThrows<AttrflowException.InvalidInput> {
                store.archive.registerBatch(batch(1, 1001))
            }
            assertEquals("a batch holds at most 1000 records, got 1001", oversize.reason)
            val empty = assertThrows<AttrflowException.InvalidInput> { store.archive.registerBatch(emptyList()) }
            assertEquals("a batch needs at least one record", empty.reason)

            val oneBad = batch(1, 10).toMutableList().apply { this[7] = NewSubscriber("", "x@example.com") }
            val missing = assertThrows<AttrflowException.InvalidInput> { store.archive.registerBatch(oneBad) }
            assertEquals("subscribers[7]: subscriberId is required", missing.reason)

            for (key in listOf("", "has space", "k".repeat(129), "clé")) {
                val error = assertThrows<AttrflowException.InvalidInput> {
                    store.archive.registerOnce(key, "ada", "ada@example.com")
                }
                assertTrue(error.reason.startsWith("idempotency key must be 1 to 128 visible ASCII characters"), error.reason)
                assertThrows<AttrflowException.InvalidInput> { store.archive.registerBatch(batch(1, 2), key.ifEmpty { " " }) }
            }
            assertTrue(store.archive.page("current").subscribers.isEmpty())
        }
    }
}
