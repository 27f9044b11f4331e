package io.attrflow

import java.nio.file.Path
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Test

/**
 * The Kotlin-defined subscriber archive and the Python-defined one (the Dex-style flow module
 * of the Python tests) share one stored layout: each reads the rows the other wrote, page for
 * page. Python runs as a child process, `src/test/python/python_flow_store.py`, with the
 * interpreter given as `attrflow.python`.
 */
class KotlinPythonFlowTest {
    private val flow = KotlinSubscriberFlow

    private fun python(vararg args: String): List<String> {
        val python = System.getProperty("attrflow.python").orEmpty()
        assertFalse(python.isEmpty(), "attrflow.python must name the Python interpreter with attrflow installed")
        val process = ProcessBuilder(python, "src/test/python/python_flow_store.py", *args)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        val output = process.inputStream.bufferedReader().readLines()
        process.waitFor(120, TimeUnit.SECONDS)
        assertEquals(0, process.exitValue(), "python_flow_store.py ${args.toList()}")
        return output.filter { it.isNotEmpty() }
    }

    private fun openBare(path: Path): Store =
        Store.openWithoutBuiltIns(path.toString(), Durability.NORMAL).also { it.registerFlowType(flow.definition) }

    private fun lines(store: Store, flowId: String): List<String> =
        flow.allPages(store, flowId).flatMap { page ->
            page.subscribers.map { s ->
                listOf(page.pageToken, s.sequence, s.subscriberId, s.deliveryAddress, page.nextPageToken).joinToString("\t")
            }
        }

    @Test
    fun `Python reads the rows the Kotlin flow wrote`() {
        val path = scratchFolder("attrflow-kotlin-python").resolve("kotlin.db")
        val written = openBare(path).use { store ->
            flow.start(store, "kotlin-written")
            for (n in 1..150) flow.register(store, "kotlin-written", n)
            lines(store, "kotlin-written")
        }
        assertEquals(150, written.size)
        assertEquals("current\t150\tsubscriber-150\tsubscriber-150@example.com\t00000000000000000001", written.first())
        assertEquals(written, python("read", path.toString(), "kotlin-written"))
    }

    @Test
    fun `the Kotlin flow reads the rows Python wrote and appends after them`() {
        val path = scratchFolder("attrflow-kotlin-python").resolve("python.db")
        python("write", path.toString(), "python-written", "150")
        val expected = python("read", path.toString(), "python-written")
        assertEquals(150, expected.size)
        openBare(path).use { store ->
            assertEquals(expected, lines(store, "python-written"))
            assertEquals(151L, flow.register(store, "python-written", 151).sequence)
        }
        assertEquals("current\t151\tsubscriber-151\tsubscriber-151@example.com\t00000000000000000001",
            python("read", path.toString(), "python-written").first())
    }
}
