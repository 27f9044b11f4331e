import io.attrflow.AttrflowException
import io.attrflow.Durability
import io.attrflow.Store
import io.attrflow.Subscriber
import io.attrflow.subscriberArchiveFlowId

/** Registers a subscriber, retrying while another caller holds the archive's chunk. */
fun register(store: Store, flowId: String, id: String): Subscriber {
    while (true) {
        try {
            return store.registerSubscriber(flowId, id, "$id@example.com")
        } catch (conflict: AttrflowException.LockConflict) {
            Thread.sleep(5)
        }
    }
}

fun main() {
    val flowId = subscriberArchiveFlowId()
    Store.open("data/attrflow.db", Durability.FULL).use { store ->
        store.startSubscriberArchive(flowId) // idempotent
        val subscriber = register(store, flowId, "subscriber-001")

        var token = "current"
        while (token.isNotEmpty()) {
            val page = store.getSubscriberPage(flowId, token)
            println("${page.pageToken}: ${page.subscribers.size} subscribers")
            token = page.nextPageToken
        }

        store.startAppLog("my-app")
        store.appendLogRecord("my-app", "audit", """{"event":"registered","id":"${subscriber.subscriberId}"}""")
    }
}
