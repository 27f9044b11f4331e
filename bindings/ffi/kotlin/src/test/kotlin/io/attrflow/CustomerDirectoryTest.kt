package io.attrflow

import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The hash-partitioned customer directory: golden partitions, colliding upserts, typed errors. */
class CustomerDirectoryTest {
    private val flowId = customerDirectoryFlowId()

    /** This test's CustomerDirectory of the store. */
    private val Store.directory: CustomerDirectory get() = customerDirectory(flowId)

    private fun profile(email: String, tier: String = "gold") =
        CustomerProfile(email, "Name of $email", "Company of $email", tier)

    @Test
    fun `a known email lands in its golden partition and reads back under any case`() {
        assertEquals("customer-directory", flowId)
        assertEquals("partition-278", customerProfilePartition(" Alice@Example.COM "))
        assertEquals("partition-278", customerProfilePartition("alice@example.com"))
        freshStore().use { store ->
            val runId = store.directory.start()
            assertEquals(runId, store.directory.start(), "start is idempotent")
            val saved = store.directory.upsert(profile(" Alice@Example.COM "))
            assertEquals("alice@example.com", saved.emailAddress)
            assertEquals(saved, store.directory.get("ALICE@example.com"))

            val updated = store.directory.upsert(saved.copy(customerTier = "platinum"))
            assertEquals(updated, store.directory.get("alice@example.com"))
            assertEquals("platinum", updated.customerTier)
        }
    }

    @Test
    fun `12 profiles of one bucket upserted from 12 threads all read back exactly`() {
        val bucket = customerProfilePartition("customer-0@example.com")
        val emails = generateSequence(0) { it + 1 }
            .map { "customer-$it@example.com" }
            .filter { customerProfilePartition(it) == bucket }
            .take(12)
            .toList()
        freshStore().use { store ->
            store.directory.start()
            val directory = store.customerDirectory(flowId, patientRetry)
            val saved = ConcurrentLinkedQueue<CustomerProfile>()
            val start = CountDownLatch(1)
            val threads = emails.map { email ->
                Thread {
                    start.await()
                    saved += directory.upsert(profile(email))
                }.apply { start() }
            }
            start.countDown()
            threads.forEach { it.join() }

            assertEquals(emails.toSet(), saved.map { it.emailAddress }.toSet())
            for (email in emails) {
                assertEquals(profile(email), store.directory.get(email))
            }
        }
    }

    @Test
    fun `an unknown email is RecordNotFound and a non-ASCII one InvalidInput`() {
        freshStore().use { store ->
            store.directory.start()
            val missing = assertThrows<AttrflowException.RecordNotFound> {
                store.directory.get("Nobody@Example.com")
            }
            assertEquals("customer profile \"nobody@example.com\" not found", missing.reason)

            val accented = assertThrows<AttrflowException.InvalidInput> {
                store.directory.upsert(profile("josé@example.com"))
            }
            assertEquals("emailAddress must contain only ASCII characters", accented.reason)
            assertThrows<AttrflowException.InvalidInput> { store.directory.get("josé@example.com") }
            assertThrows<AttrflowException.InvalidInput> { customerProfilePartition("josé@example.com") }
            val blank = assertThrows<AttrflowException.InvalidInput> { store.directory.upsert(profile("  ")) }
            assertEquals("emailAddress is required", blank.reason)
            val noName = assertThrows<AttrflowException.InvalidInput> {
                store.directory.upsert(profile("ada@example.com").copy(fullName = ""))
            }
            assertTrue(noName.reason.contains("fullName"), noName.reason)
            assertThrows<AttrflowException.RecordNotFound> { store.directory.get("ada@example.com") }
        }
    }

    @Test
    fun `a deleted profile is gone and an oversized field is InvalidInput`() {
        freshStore().use { store ->
            store.directory.start()
            val saved = store.directory.upsert(profile("ada@example.com"))
            assertEquals(saved, store.directory.delete(" ADA@example.com"))
            assertThrows<AttrflowException.RecordNotFound> { store.directory.get("ada@example.com") }
            assertThrows<AttrflowException.RecordNotFound> { store.directory.delete("ada@example.com") }
            val huge = assertThrows<AttrflowException.InvalidInput> {
                store.directory.upsert(profile("ada@example.com").copy(fullName = "n".repeat(257)))
            }
            assertEquals("fullName is 257 bytes; the limit is 256", huge.reason)
        }
    }

    @Test
    fun `a directory never started is FlowNotFound`() {
        freshStore().use { store ->
            assertThrows<AttrflowException.FlowNotFound> { store.customerDirectory("nobody").get("ada@example.com") }
        }
    }
}
