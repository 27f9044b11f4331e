package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The app log: named logs of JSON records in one flow, paged newest first. */
class AppLogTest {
    @Test
    fun `records page back newest first across chunks and logs stay apart`() {
        freshStore().use { store ->
            store.appLog("my-app").start()
            for (n in 1..150) {
                val entry = store.appLog("my-app").append("chat", """{"n":$n,"text":"message $n"}""")
                assertEquals(n.toULong(), entry.sequence)
            }
            store.appLog("my-app").append("audit", """{"event":"login"}""")

            val newest = store.appLog("my-app").page("chat", "current")
            assertEquals("current", newest.pageToken)
            assertEquals((150 downTo 101).map { it.toULong() }, newest.entries.map { it.sequence })
            assertEquals("""{"n":150,"text":"message 150"}""", newest.entries.first().recordJson)
            assertEquals("00000000000000000001", newest.nextPageToken)
            val oldest = store.appLog("my-app").page("chat", newest.nextPageToken)
            assertEquals(100, oldest.entries.size)
            assertEquals("", oldest.nextPageToken)

            val audit = store.appLog("my-app").page("audit", "")
            assertEquals(listOf(1uL), audit.entries.map { it.sequence })
            assertTrue(store.appLog("my-app").page("never-written", "").entries.isEmpty())
        }
    }
}
