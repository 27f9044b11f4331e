package io.attrflow

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn

/*
 * Kotlin `Flow`s over the core's blocking tails. Each is a loop of `tail` calls resumed from
 * the last record emitted, run on Dispatchers.IO: the bounds of `batch` and `waitMs`, the
 * wake-up on commit and every error (a trimmed start is AttrflowException.PageTrimmed) are
 * the core's. A tail call that is waiting is not interrupted: a cancelled collector stops
 * when that call returns, within `waitMs`.
 */

/**
 * Every entry of [log] after sequence [after] (0: from the start), oldest first, then each
 * new one as it is committed; never one twice. Each `tail` call waits up to [waitMs]
 * (at most 60 000) and returns up to [batch] entries (1 to 1000).
 *
 * ```
 * logs.follow("audit", after = lastSeen).collect { entry -> show(entry.recordJson) }
 * ```
 */
fun AppLog.follow(log: String, after: ULong = 0u, batch: ULong = 100u, waitMs: ULong = 1_000u): Flow<LogEntry> =
    flow {
        var next = after
        while (true) {
            currentCoroutineContext().ensureActive()
            for (entry in tail(log, next, batch, waitMs).entries) {
                emit(entry)
                next = entry.sequence
            }
        }
    }.flowOn(Dispatchers.IO)

/**
 * Every subscriber of the archive after sequence [after] (0: from the start), oldest first,
 * then each new one as it registers; never one twice. The bounds are those of [AppLog.follow].
 */
fun SubscriberArchive.follow(after: ULong = 0u, batch: ULong = 100u, waitMs: ULong = 1_000u): Flow<Subscriber> =
    flow {
        var next = after
        while (true) {
            currentCoroutineContext().ensureActive()
            for (subscriber in tail(next, batch, waitMs).subscribers) {
                emit(subscriber)
                next = subscriber.sequence
            }
        }
    }.flowOn(Dispatchers.IO)
