import io.attrflow.scratchFolder
import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The Kotlin flow example of docs/kotlin-swift.md is `ReadmeFlowExample.kt`, compiled with the
 * tests: this runs it on a fresh store and checks that the page shows exactly that file. It
 * lives outside `readme/`, whose files the Maven consumer project compiles as its own sources.
 */
class ReadmeFlowExampleTest {
    @Test
    fun `the docs page's Kotlin flow runs`() {
        val store = scratchFolder("attrflow-readme").resolve("tally.db").toString()
        assertEquals("+5", tallyExample(store))
    }

    @Test
    fun `the docs page shows the compiled flow example`() {
        val page = Files.readString(Path.of("../../../docs/kotlin-swift.md"))
        val heading = page.indexOf("\n## Kotlin: flows of your own\n")
        assertTrue(heading >= 0, "docs/kotlin-swift.md has its section on Kotlin flows")
        val start = page.indexOf("```kotlin\n", heading) + "```kotlin\n".length
        val block = page.substring(start, page.indexOf("```\n", start))
        assertEquals(Files.readString(Path.of("src/test/kotlin/readme/ReadmeFlowExample.kt")), block)
    }
}
