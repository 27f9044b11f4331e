package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The app log: named logs of JSON records in one flow, paged newest first. */
class AppLogTest {
    @Test
    fun `records page back newest first across chunks and logs stay apart`() {
        freshStore().use { store ->
            store.startAppLog("my-app")
            for (n in 1..150) {
                val entry = store.appendLogRecord("my-app", "chat", """{"n":$n,"text":"message $n"}""")
                assertEquals(n.toULong(), entry.sequence)
            }
            store.appendLogRecord("my-app", "audit", """{"event":"login"}""")

            val newest = store.getLogPage("my-app", "chat", "current")
            assertEquals("current", newest.pageToken)
            assertEquals((150 downTo 101).map { it.toULong() }, newest.entries.map { it.sequence })
            assertEquals("""{"n":150,"text":"message 150"}""", newest.entries.first().recordJson)
            assertEquals("00000000000000000001", newest.nextPageToken)
            val oldest = store.getLogPage("my-app", "chat", newest.nextPageToken)
            assertEquals(100, oldest.entries.size)
            assertEquals("", oldest.nextPageToken)

            val audit = store.getLogPage("my-app", "audit", "")
            assertEquals(listOf(1uL), audit.entries.map { it.sequence })
            assertTrue(store.getLogPage("my-app", "never-written", "").entries.isEmpty())
        }
    }
}
