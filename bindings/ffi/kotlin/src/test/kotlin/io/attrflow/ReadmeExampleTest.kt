package io.attrflow

import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/**
 * The README's Kotlin example is `src/test/kotlin/readme/ReadmeExample.kt`, compiled with the
 * tests; this checks that the README still shows exactly that file.
 */
class ReadmeExampleTest {
    @Test
    fun `the README shows the compiled example`() {
        val readme = Files.readString(Path.of("../../../README.md"))
        val start = readme.indexOf("```kotlin\n") + "```kotlin\n".length
        val block = readme.substring(start, readme.indexOf("```\n", start))
        assertEquals(Files.readString(Path.of("src/test/kotlin/readme/ReadmeExample.kt")), block)
    }
}
