import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/**
 * The README's Kotlin flow example is `ReadmeFlowExample.kt`, compiled with the tests: this
 * runs it on a fresh store and checks that the README shows exactly that file.
 */
class ReadmeFlowExampleTest {
    @Test
    fun `the README's Kotlin flow runs`() {
        val store = Files.createTempDirectory("attrflow-readme").resolve("tally.db").toString()
        assertEquals("+5", tallyExample(store))
    }

    @Test
    fun `the README shows the compiled flow example`() {
        val readme = Files.readString(Path.of("../../../README.md"))
        val heading = readme.indexOf("### Kotlin: flows of your own")
        val start = readme.indexOf("```kotlin\n", heading) + "```kotlin\n".length
        val block = readme.substring(start, readme.indexOf("```\n", start))
        assertEquals(Files.readString(Path.of("src/test/kotlin/readme/ReadmeFlowExample.kt")), block)
    }
}
