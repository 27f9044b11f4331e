package io.attrflow

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn

/*
 * Kotlin `Flow`s over the core's follow cursors (`archive.follow(...)`, `appLog.follow(log,
 * ...)`). The cursor holds the position and the run, in the core: where it resumes, what a
 * trim does to it and when the flow was started again (AttrflowException.PageTrimmed,
 * AttrflowException.RunNotCurrent) are the core's rules. These only hand each step's records
 * to the collector, on Dispatchers.IO. A step that is waiting is not interrupted: a cancelled
 * collector stops when that step returns, within `waitMs`.
 */

/**
 * The cursor's subscribers as a `Flow`: each `next` waits up to [waitMs] (at most 60 000) and
 * its subscribers are emitted in order; never one twice. The cursor moves one step at a
 * time: collecting again continues after the last step's subscribers, so a collector that
 * stops partway through a step (`take(n)`) does not see that step's rest. Open the cursor
 * with `limit = 1u`, or call `next` directly, to resume after every single subscriber.
 *
 * ```
 * archive.follow(after = lastSeen).asFlow().collect { subscriber -> send(subscriber) }
 * ```
 */
fun SubscriberCursor.asFlow(waitMs: ULong = 1_000u): Flow<Subscriber> = steps { next(waitMs) }

/** The cursor's log entries as a `Flow`, as [SubscriberCursor.asFlow] does. */
fun LogCursor.asFlow(waitMs: ULong = 1_000u): Flow<LogEntry> = steps { next(waitMs) }

/** Every record of each [step] (a cursor's `next`), in order, on Dispatchers.IO. */
private fun <T> steps(step: () -> List<T>): Flow<T> =
    flow {
        while (true) {
            currentCoroutineContext().ensureActive()
            step().forEach { emit(it) }
        }
    }.flowOn(Dispatchers.IO)
