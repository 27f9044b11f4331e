package io.attrflow

import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Test

/**
 * A store written by the Python package reads back the same from Kotlin: the test script
 * writes it with `src/test/python/write_store.py`, which also records every page Python read,
 * one subscriber a line; Kotlin pages the same file and must produce the same lines.
 */
class PythonStoreTest {
    @Test
    fun `pages of a store written from Python read back identically`() {
        val store = System.getProperty("attrflow.python.store").orEmpty()
        val pages = System.getProperty("attrflow.python.pages").orEmpty()
        assertFalse(store.isEmpty() || pages.isEmpty(), "attrflow.python.store and attrflow.python.pages must be set")
        val expected = Files.readAllLines(Path.of(pages))

        Store.open(store, null).use { opened ->
            val flowId = subscriberArchiveFlowId()
            val lines = opened.allSubscriberPages(flowId).flatMap { page ->
                page.subscribers.map { s ->
                    listOf(page.pageToken, s.sequence, s.subscriberId, s.deliveryAddress, page.nextPageToken).joinToString("\t")
                }
            }
            assertEquals(expected, lines)
            assertEquals(150, lines.size)
            val next = opened.registerSubscriber(flowId, "kotlin-151", "kotlin-151@example.com")
            assertEquals(151uL, next.sequence, "Kotlin appends after Python's records")
        }
    }
}
