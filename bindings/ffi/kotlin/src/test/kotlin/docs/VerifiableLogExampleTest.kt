import io.attrflow.NoteSignatures
import io.attrflow.kotlinBlockAfter
import io.attrflow.readmeExample
import io.attrflow.scratchFolder
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Test

/**
 * The Kotlin example of docs/verifiable-logs.md is `readme/VerifiableLogExample.kt`, compiled
 * with the tests: this runs it on a fresh store, checks its checkpoint with the JDK's own
 * Ed25519, and checks that the page shows exactly that file.
 */
class VerifiableLogExampleTest {
    @Test
    fun `the docs page's Kotlin example signs a checkpoint the JDK verifies`() {
        val store = scratchFolder("attrflow-verifiable").resolve("audit.db").toString()
        val (note, verifierKey) = verifiableLogExample(store)
        val text = NoteSignatures.open(note, verifierKey)
        assertNotNull(text, "the checkpoint's signature checks")
        val lines = text!!.lines()
        assertEquals(listOf("attrflow/my-app/audit", "5"), lines.take(2))
    }

    @Test
    fun `the docs page shows the compiled example`() {
        assertEquals(
            readmeExample("VerifiableLogExample.kt"),
            kotlinBlockAfter("../../../docs/verifiable-logs.md", "## Kotlin and Swift"),
        )
    }
}
