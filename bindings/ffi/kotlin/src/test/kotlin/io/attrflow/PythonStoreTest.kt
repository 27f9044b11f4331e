package io.attrflow

import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Test

/**
 * A store written by the Python package reads back the same from Kotlin: the test script
 * writes it with `src/test/python/write_store.py`, which also records every page Python read,
 * one entry a line; Kotlin pages the same file and must produce the same lines.
 */
class PythonStoreTest {
    private val store = System.getProperty("attrflow.python.store").orEmpty()
    private val expected: List<String> by lazy {
        val pages = System.getProperty("attrflow.python.pages").orEmpty()
        assertFalse(store.isEmpty() || pages.isEmpty(), "attrflow.python.store and attrflow.python.pages must be set")
        Files.readAllLines(Path.of(pages))
    }

    @Test
    fun `subscriber pages written from Python read back identically`() {
        Store.open(store).use { opened ->
            val flowId = subscriberArchiveFlowId()
            val lines = opened.allSubscriberPages(flowId).flatMap { page ->
                page.subscribers.map { s ->
                    line("subscribers", page.pageToken, s.sequence, s.subscriberId, s.deliveryAddress, page.nextPageToken)
                }
            }
            assertEquals(expected.filter { it.startsWith("subscribers\t") }, lines)
            assertEquals(150, lines.size)
            val next = opened.subscriberArchive(flowId).register("kotlin-151", "kotlin-151@example.com")
            assertEquals(151uL, next.sequence, "Kotlin appends after Python's records")
        }
    }

    @Test
    fun `an app log written from Python reads back identically`() {
        Store.open(store).use { opened ->
            val lines = mutableListOf<String>()
            var token = "current"
            while (token.isNotEmpty()) {
                val page = opened.appLog("python-app").page("audit", token)
                page.entries.forEach { lines += line("log", page.pageToken, it.sequence, it.recordJson, page.nextPageToken) }
                token = page.nextPageToken
            }
            assertEquals(expected.filter { it.startsWith("log\t") }, lines)
            assertEquals(120, lines.size)
        }
    }

    private fun line(vararg fields: Any): String = fields.joinToString("\t")
}
