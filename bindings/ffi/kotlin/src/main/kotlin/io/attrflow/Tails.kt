package io.attrflow

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn

/*
 * Kotlin `Flow`s over the core's blocking tails. Each is a loop of `tail` calls resumed from
 * the last record emitted, in the run the first call read, run on Dispatchers.IO: the bounds
 * of `batch` and `waitMs`, the wake-up on commit and every error (a trimmed start is
 * AttrflowException.PageTrimmed, a flow started again meanwhile
 * AttrflowException.RunNotCurrent) are the core's. A tail call that is waiting is not
 * interrupted: a cancelled collector stops when that call returns, within `waitMs`.
 */

/**
 * Every entry of [log] after sequence [after] (0: from the start), oldest first, then each
 * new one as it is committed; never one twice. Each `tail` call waits up to [waitMs]
 * (at most 60 000) and returns up to [batch] entries (1 to 1000). The entries are of the
 * run [runId], or else of the run the first call read: logs started again meanwhile (whose
 * sequences count from 1 again) end the flow with AttrflowException.RunNotCurrent.
 *
 * ```
 * logs.follow("audit", after = lastSeen).collect { entry -> show(entry.recordJson) }
 * ```
 */
fun AppLog.follow(
    log: String,
    after: ULong = 0u,
    batch: ULong = 100u,
    waitMs: ULong = 1_000u,
    runId: String? = null,
): Flow<LogEntry> =
    flow {
        var next = after
        var run = runId
        while (true) {
            currentCoroutineContext().ensureActive()
            val read = tail(log, next, batch, waitMs, run)
            run = read.runId
            for (entry in read.entries) {
                emit(entry)
                next = entry.sequence
            }
        }
    }.flowOn(Dispatchers.IO)

/**
 * Every subscriber of the archive after sequence [after] (0: from the start), oldest first,
 * then each new one as it registers; never one twice. The bounds and the run are those of
 * [AppLog.follow].
 */
fun SubscriberArchive.follow(
    after: ULong = 0u,
    batch: ULong = 100u,
    waitMs: ULong = 1_000u,
    runId: String? = null,
): Flow<Subscriber> =
    flow {
        var next = after
        var run = runId
        while (true) {
            currentCoroutineContext().ensureActive()
            val read = tail(next, batch, waitMs, run)
            run = read.runId
            for (subscriber in read.subscribers) {
                emit(subscriber)
                next = subscriber.sequence
            }
        }
    }.flowOn(Dispatchers.IO)
