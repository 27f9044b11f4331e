import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Runs the README's Kotlin example, with attrflow and its native library from the JAR only. */
class ReadmeExampleRunTest {
    @Test
    fun `the README example runs from the Maven artifact`() {
        assertNull(System.getProperty("jna.library.path"), "no library path is set")
        val store = Path.of("data", "attrflow.db")
        Files.createDirectories(store.parent)
        for (suffix in listOf("", "-wal", "-shm")) {
            Files.deleteIfExists(Path.of("$store$suffix"))
        }

        val output = ByteArrayOutputStream()
        val stdout = System.out
        System.setOut(PrintStream(output, true, Charsets.UTF_8))
        try {
            main()
        } finally {
            System.setOut(stdout)
        }

        assertEquals("current: 1 subscribers\n", output.toString(Charsets.UTF_8))
        assertTrue(Files.size(store) > 0, "the example wrote its store")
        val loadedFrom = io.attrflow.Store::class.java.protectionDomain.codeSource.location.path
        assertTrue(loadedFrom.endsWith("attrflow-0.1.0.jar"), "bindings from $loadedFrom")
    }
}
