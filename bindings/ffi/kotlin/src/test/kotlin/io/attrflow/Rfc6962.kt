package io.attrflow

import java.security.MessageDigest
import java.util.Base64

/**
 * RFC 6962 §2.1 computed here from the records alone, with the JDK's SHA-256 and none of
 * attrflow's code: the tree hash MTH, the audit path PATH and the consistency proof PROOF,
 * written as the RFC defines them (recursively, over the whole list of leaves).
 */
internal object Rfc6962 {
    private fun sha256(vararg parts: ByteArray): ByteArray =
        MessageDigest.getInstance("SHA-256").run {
            parts.forEach { update(it) }
            digest()
        }

    /** The leaf hash of a record's canonical bytes: `SHA-256(0x00 || bytes)`. */
    fun leafHash(bytes: ByteArray): ByteArray = sha256(byteArrayOf(0), bytes)

    private fun nodeHash(left: ByteArray, right: ByteArray) = sha256(byteArrayOf(1), left, right)

    /** The largest power of two smaller than [n] (n > 1). */
    private fun split(n: Int): Int {
        var k = 1
        while (k * 2 < n) k *= 2
        return k
    }

    /** MTH(D[n]) over leaf hashes [leaves]. */
    fun root(leaves: List<ByteArray>): ByteArray = when (leaves.size) {
        0 -> sha256()
        1 -> leaves[0]
        else -> split(leaves.size).let { k -> nodeHash(root(leaves.subList(0, k)), root(leaves.subList(k, leaves.size))) }
    }

    /** PATH(m, D[n]): the audit path of leaf [m]. */
    fun path(m: Int, leaves: List<ByteArray>): List<ByteArray> {
        if (leaves.size <= 1) return emptyList()
        val k = split(leaves.size)
        return if (m < k) {
            path(m, leaves.subList(0, k)) + listOf(root(leaves.subList(k, leaves.size)))
        } else {
            path(m - k, leaves.subList(k, leaves.size)) + listOf(root(leaves.subList(0, k)))
        }
    }

    /** PROOF(m, D[n]): the consistency proof from the first [m] leaves to all of them. */
    fun consistency(m: Int, leaves: List<ByteArray>): List<ByteArray> =
        if (m == 0 || m == leaves.size) emptyList() else subproof(m, leaves, true)

    private fun subproof(m: Int, leaves: List<ByteArray>, whole: Boolean): List<ByteArray> {
        val n = leaves.size
        if (m == n) return if (whole) emptyList() else listOf(root(leaves))
        val k = split(n)
        return if (m <= k) {
            subproof(m, leaves.subList(0, k), whole) + listOf(root(leaves.subList(k, n)))
        } else {
            subproof(m - k, leaves.subList(k, n), false) + listOf(root(leaves.subList(0, k)))
        }
    }

    fun base64(hash: ByteArray): String = Base64.getEncoder().encodeToString(hash)
}
