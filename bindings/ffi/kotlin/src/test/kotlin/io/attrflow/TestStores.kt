package io.attrflow

import java.nio.file.Files
import java.nio.file.Path

/** A fresh store file in a temporary folder, opened without an fsync per commit. */
internal fun freshStore(): Store {
    val folder: Path = Files.createTempDirectory("attrflow-kotlin")
    return Store.open(folder.resolve("attrflow.db").toString(), Durability.NORMAL)
}

/** A retry policy patient enough for many threads contending for one lock. */
internal val patientRetry = RetryPolicy(maxAttempts = 100_000u, firstDelayMs = 1u, maxDelayMs = 5u, budgetMs = 120_000u)

/** Registers subscriber `n`, retrying by the core's policy while another caller holds the lock. */
internal fun Store.registerRetrying(flowId: String, n: Int): Subscriber {
    val id = "subscriber-%03d".format(n)
    return subscriberArchive(flowId, patientRetry).registerWithRetry(id, "$id@example.com")
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
