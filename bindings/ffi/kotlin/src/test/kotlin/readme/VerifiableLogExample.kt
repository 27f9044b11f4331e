import io.attrflow.Durability
import io.attrflow.Store
import io.attrflow.generateNoteKey

/** Signs a checkpoint of an app log and proves a record in it: returns the note and its verifier key. */
fun verifiableLogExample(location: String): Pair<String, String> =
    Store.open(location, Durability.FULL).use { store ->
        val logs = store.appLog("my-app")
        logs.start()
        logs.makeVerifiable("audit") // idempotent; the tree covers every record from sequence 1
        for (n in 1..5) logs.append("audit", """{"event":"login","n":$n}""")

        // The key is the application's (a file, a secret store): attrflow never stores it.
        val key = generateNoteKey("my-app")
        val checkpoint = logs.checkpoint("audit", key.signerKey) // origin attrflow/my-app/audit
        val head = logs.treeHead("audit")
        val proof = logs.inclusionProof("audit", 3u, head.treeSize)
        println("record 3 in ${proof.treeSize}: ${proof.hashes.size} hashes up to ${head.rootHash}")
        val grown = logs.consistencyProof("audit", 2u, head.treeSize)
        println("size 2 is a prefix of ${grown.to}: ${grown.hashes.size} hashes")
        checkpoint to key.verifierKey
    }
