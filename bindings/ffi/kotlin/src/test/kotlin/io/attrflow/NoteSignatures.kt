package io.attrflow

import java.security.KeyFactory
import java.security.MessageDigest
import java.security.Signature
import java.security.spec.X509EncodedKeySpec
import java.util.Base64

/**
 * A C2SP signed note checked with the JDK's own Ed25519 (`java.security.Signature`), none of
 * attrflow's code: the verifier key text `<name>+<hash>+<base64(0x01 || public key)>`, the
 * note `<text>\n— <name> <base64(key hash || signature)>\n`.
 */
internal object NoteSignatures {
    /** The DER prefix of an Ed25519 public key in X.509 form (RFC 8410), before its 32 bytes. */
    private val ED25519_X509_PREFIX = byteArrayOf(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00)

    /** The signed text of [note] if its one signature is [verifierKey]'s and checks; else `null`. */
    fun open(note: String, verifierKey: String): String? {
        val (name, hashHex, keyBase64) = verifierKey.trim().split("+", limit = 3).also { require(it.size == 3) { verifierKey } }
        val keyBytes = Base64.getDecoder().decode(keyBase64)
        require(keyBytes.size == 33 && keyBytes[0] == 1.toByte()) { "an Ed25519 verifier key" }
        val publicKey = keyBytes.copyOfRange(1, 33)
        // The key hash: the first 4 bytes of SHA-256(name "\n" 0x01 || public key).
        val keyHash = MessageDigest.getInstance("SHA-256").digest("$name\n".toByteArray() + keyBytes).copyOfRange(0, 4)
        require(keyHash.joinToString("") { "%02x".format(it) } == hashHex) { "the verifier key's hash" }

        val split = note.indexOf("\n\n")
        val text = note.substring(0, split + 1)
        val line = note.substring(split + 2).removeSuffix("\n")
        val (dash, signer, signatureBase64) = line.split(" ")
        if (dash != "\u2014" || signer != name) return null
        val signed = Base64.getDecoder().decode(signatureBase64)
        if (!signed.copyOfRange(0, 4).contentEquals(keyHash)) return null

        val jdkKey = KeyFactory.getInstance("Ed25519").generatePublic(X509EncodedKeySpec(ED25519_X509_PREFIX + publicKey))
        val verifier = Signature.getInstance("Ed25519")
        verifier.initVerify(jdkKey)
        verifier.update(text.toByteArray(Charsets.UTF_8))
        return if (verifier.verify(signed.copyOfRange(4, signed.size))) text else null
    }
}
