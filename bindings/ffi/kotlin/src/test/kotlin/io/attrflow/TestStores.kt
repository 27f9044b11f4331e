package io.attrflow

import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.ConcurrentLinkedQueue

/** The folders [scratchFolder] made, deleted with their contents when the test JVM exits. */
private val scratchFolders = ConcurrentLinkedQueue<Path>().also { folders ->
    Runtime.getRuntime().addShutdownHook(Thread { folders.forEach { it.toFile().deleteRecursively() } })
}

/**
 * A new empty folder for a test's store files, removed with everything in it when the tests
 * end (a store still open then is only a file the process holds, so it goes too).
 */
internal fun scratchFolder(prefix: String = "attrflow-kotlin"): Path =
    Files.createTempDirectory(prefix).also(scratchFolders::add)

/** A fresh store file in a scratch folder, opened without an fsync per commit. */
internal fun freshStore(): Store =
    Store.open(scratchFolder().resolve("attrflow.db").toString(), Durability.NORMAL)

/** A retry policy patient enough for many threads contending for one lock. */
internal val patientRetry = RetryPolicy(maxAttempts = 100_000u, firstDelayMs = 1u, maxDelayMs = 5u, budgetMs = 120_000u)

/** Registers subscriber `n`, retrying by the core's policy while another caller holds the lock. */
internal fun Store.registerRetrying(flowId: String, n: Int): Subscriber {
    val id = "subscriber-%03d".format(n)
    return subscriberArchive(flowId, patientRetry).register(id, "$id@example.com")
}

/** Every page of the archive, newest first, following each page's next token. */
internal fun Store.allSubscriberPages(flowId: String): List<SubscriberPage> {
    val pages = mutableListOf<SubscriberPage>()
    var token = "current"
    while (token.isNotEmpty()) {
        val page = subscriberArchive(flowId).page(token)
        pages += page
        token = page.nextPageToken
    }
    return pages
}
