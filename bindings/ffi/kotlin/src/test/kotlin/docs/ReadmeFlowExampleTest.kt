import io.attrflow.kotlinBlockAfter
import io.attrflow.readmeExample
import io.attrflow.scratchFolder
import org.junit.jupiter.api.Assertions.assertEquals
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
        assertEquals(
            readmeExample("ReadmeFlowExample.kt"),
            kotlinBlockAfter("../../../docs/kotlin-swift.md", "## Kotlin: flows of your own"),
        )
    }
}
