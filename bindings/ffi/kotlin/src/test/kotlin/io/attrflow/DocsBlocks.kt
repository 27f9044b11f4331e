package io.attrflow

import java.nio.file.Files
import java.nio.file.Path

/**
 * The first ```` ```kotlin ```` block after [heading] (a whole line, `## …`) of the page at
 * [page], relative to the Maven project; fails when the page has no such heading.
 */
internal fun kotlinBlockAfter(page: String, heading: String): String {
    val text = Files.readString(Path.of(page))
    val at = text.indexOf("\n$heading\n")
    check(at >= 0) { "$page has its section \"$heading\"" }
    val start = text.indexOf("```kotlin\n", at) + "```kotlin\n".length
    return text.substring(start, text.indexOf("```\n", start))
}

/** The text of the example file [name] under `src/test/kotlin/readme`. */
internal fun readmeExample(name: String): String = Files.readString(Path.of("src/test/kotlin/readme/$name"))
