package io.attrflow

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * Verifiable logs from Kotlin (issue 53): every tree head and proof attrflow gives equals the
 * one computed here from the records alone (RFC 6962 with the JDK's SHA-256, [Rfc6962]), and
 * every checkpoint's signature checks with the JDK's own Ed25519 ([NoteSignatures]).
 */
class VerifiableLogTest {
    /** The canonical bytes of an app log entry: its export line, keys sorted. */
    private fun leaf(entry: LogEntry) =
        Rfc6962.leafHash("""{"record":${entry.recordJson},"sequence":${entry.sequence}}""".toByteArray())

    /** The canonical bytes of a subscriber: its export line, keys sorted. */
    private fun leaf(s: Subscriber) = Rfc6962.leafHash(
        """{"deliveryAddress":"${s.deliveryAddress}","sequence":${s.sequence},"subscriberId":"${s.subscriberId}"}""".toByteArray(),
    )

    private fun List<ByteArray>.base64() = map(Rfc6962::base64)

    @Test
    fun `an app log's tree heads and proofs match an independent RFC 6962 computation`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            assertEquals(TreeHead(0u, Rfc6962.base64(Rfc6962.root(emptyList()))), logs.makeVerifiable("audit"))
            val entries = logs.appendBatch("audit", (1..23).map { """{"n":$it,"text":"event $it"}""" })
            val leaves = entries.map(::leaf)
            for (size in listOf(1, 2, 3, 7, 8, 23)) {
                val tree = leaves.subList(0, size)
                for (sequence in 1..size) {
                    val proof = logs.inclusionProof("audit", sequence.toULong(), size.toULong())
                    assertEquals(InclusionProof((sequence - 1).toULong(), size.toULong(), Rfc6962.path(sequence - 1, tree).base64()), proof)
                }
                for (from in 0..size) {
                    val proof = logs.consistencyProof("audit", from.toULong(), size.toULong())
                    assertEquals(Rfc6962.consistency(from, tree).base64(), proof.hashes, "$from to $size")
                }
            }
            assertEquals(TreeHead(23u, Rfc6962.base64(Rfc6962.root(leaves))), logs.treeHead("audit"))
            assertEquals(logs.treeHead("audit"), logs.makeVerifiable("audit"), "making it verifiable again changes nothing")
            val newest = logs.inclusionProof("audit", 5u)
            assertEquals(23uL, newest.treeSize, "without a size, the newest tree")
        }
    }

    @Test
    fun `a checkpoint is signed with the application's key, and the JDK's Ed25519 checks it`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.makeVerifiable("audit")
            logs.appendBatch("audit", (1..5).map { """{"n":$it}""" })
            val key = generateNoteKey("audit-signer")
            assertTrue(key.signerKey.startsWith("PRIVATE+KEY+audit-signer+"), key.signerKey)
            assertTrue(key.verifierKey.startsWith("audit-signer+"), key.verifierKey)

            val note = logs.checkpoint("audit", key.signerKey)
            val head = logs.treeHead("audit")
            assertEquals("attrflow/app/audit\n5\n${head.rootHash}\n", NoteSignatures.open(note, key.verifierKey))
            val named = logs.checkpoint("audit", key.signerKey, "example.com/audit")
            assertEquals("example.com/audit\n5\n${head.rootHash}\n", NoteSignatures.open(named, key.verifierKey))

            assertNull(NoteSignatures.open(note.replaceFirst("\n5\n", "\n6\n"), key.verifierKey), "an edited body fails")
            val other = generateNoteKey("audit-signer")
            assertNotEquals(key.verifierKey, other.verifierKey)
            assertNull(NoteSignatures.open(note, other.verifierKey), "another key of the same name fails")
        }
    }

    @Test
    fun `the subscriber archive's proofs and checkpoint check the same way`() {
        freshStore().use { store ->
            val flowId = subscriberArchiveFlowId()
            val archive = store.subscriberArchive(flowId)
            archive.start()
            val stored = archive.registerBatch((1..9).map { NewSubscriber("s-$it", "s-$it@example.com") })
            // Switched on for an archive that already has records: the tree covers them all.
            val leaves = stored.map(::leaf)
            assertEquals(TreeHead(9u, Rfc6962.base64(Rfc6962.root(leaves))), archive.makeVerifiable())
            val all = leaves + leaf(archive.register("s-10", "s-10@example.com"))
            assertEquals(Rfc6962.base64(Rfc6962.root(all)), archive.treeHead().rootHash)
            assertEquals(Rfc6962.path(3, all).base64(), archive.inclusionProof(4u, 10u).hashes)
            assertEquals(Rfc6962.consistency(9, all).base64(), archive.consistencyProof(9u, 10u).hashes)

            val key = generateNoteKey("archive")
            val text = NoteSignatures.open(archive.checkpoint(key.signerKey), key.verifierKey)
            assertNotNull(text)
            assertEquals("attrflow/$flowId/subscribers", text!!.lines()[0])
        }
    }

    @Test
    fun `bad proof requests and keys are InvalidInput naming what was wrong`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.makeVerifiable("audit")
            logs.appendBatch("audit", (1..5).map { """{"n":$it}""" })
            val beyond = assertThrows<AttrflowException.InvalidInput> { logs.inclusionProof("audit", 6u, 5u) }
            assertTrue(beyond.reason.contains("beyond"), beyond.reason)
            assertThrows<AttrflowException.InvalidInput> { logs.inclusionProof("audit", 0u) }
            assertThrows<AttrflowException.InvalidInput> { logs.inclusionProof("audit", 1u, 9u) }
            val backwards = assertThrows<AttrflowException.InvalidInput> { logs.consistencyProof("audit", 4u, 2u) }
            assertEquals("consistency proof from tree size 4 to 2: from must not exceed to", backwards.reason)
            val badKey = assertThrows<AttrflowException.InvalidInput> { logs.checkpoint("audit", "not a key") }
            assertTrue(badKey.reason.startsWith("malformed key:"), badKey.reason)
            assertThrows<AttrflowException.InvalidInput> { generateNoteKey("has space") }
        }
    }

    @Test
    fun `a proof of a trimmed record, or switching on a trimmed log, is RecordTrimmed naming the oldest`() {
        freshStore().use { store ->
            val logs = store.appLog("app")
            logs.start()
            logs.makeVerifiable("audit")
            logs.appendBatch("audit", (1..250).map { """{"n":$it}""" })
            logs.trim("audit", TrimRule.DropBefore(201u))
            val trimmed = assertThrows<AttrflowException.RecordTrimmed> { logs.inclusionProof("audit", 3u) }
            assertEquals("record 3 was trimmed; the oldest retained sequence is 201", trimmed.reason)
            assertEquals(3uL, trimmed.sequence)
            assertEquals(201uL, trimmed.oldestSequence)
            assertEquals(250uL, logs.inclusionProof("audit", 201u).treeSize)

            logs.appendBatch("other", (1..250).map { """{"n":$it}""" })
            logs.trim("other", TrimRule.DropBefore(101u))
            val refused = assertThrows<AttrflowException.RecordTrimmed> { logs.makeVerifiable("other") }
            assertEquals(1uL, refused.sequence)
            assertEquals(101uL, refused.oldestSequence)
        }
    }
}
