import io.attrflow.Durability
import io.attrflow.Store
import io.attrflow.subscriberArchiveFlowId

fun main() {
    Store.open("data/attrflow.db", Durability.FULL).use { store ->
        val archive = store.subscriberArchive(subscriberArchiveFlowId())
        archive.start() // idempotent
        // Lock conflicts are retried by the core's policy (bounded, jittered backoff).
        val subscriber = archive.register("subscriber-001", "subscriber-001@example.com")

        var token = "current"
        while (token.isNotEmpty()) {
            val page = archive.page(token)
            println("${page.pageToken}: ${page.subscribers.size} subscribers")
            token = page.nextPageToken
        }

        val logs = store.appLog("my-app")
        logs.start()
        logs.append("audit", """{"event":"registered","id":"${subscriber.subscriberId}"}""")
    }
}
