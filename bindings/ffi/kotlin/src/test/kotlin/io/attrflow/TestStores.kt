package io.attrflow

import java.nio.file.Files
import java.nio.file.Path

/** A fresh store file in a temporary folder, opened without an fsync per commit. */
internal fun freshStore(): Store {
    val folder: Path = Files.createTempDirectory("attrflow-kotlin")
    return Store.open(folder.resolve("attrflow.db").toString(), Durability.NORMAL)
}

/** Registers subscriber `n`, retrying while another caller holds the archive's lock. */
internal fun Store.registerRetrying(flowId: String, n: Int): Subscriber {
    val id = "subscriber-%03d".format(n)
    while (true) {
        try {
            return registerSubscriber(flowId, id, "$id@example.com")
        } catch (conflict: AttrflowException.LockConflict) {
            Thread.sleep(1)
        }
    }
}

/** Every page of the archive, newest first, following each page's next token. */
internal fun Store.allSubscriberPages(flowId: String): List<SubscriberPage> {
    val pages = mutableListOf<SubscriberPage>()
    var token = "current"
    while (token.isNotEmpty()) {
        val page = getSubscriberPage(flowId, token)
        pages += page
        token = page.nextPageToken
    }
    return pages
}
