//! Counters of this process's RPC calls and commits, and where tracing spans are named.
//!
//! Every [`crate::Runtime`] in a process counts into one set of lock-free counters (plain
//! atomics, like a Prometheus client's default registry): RPC calls by outcome, lock
//! conflicts, commits (groups of [`crate::store::group_commit`]), the calls those commits
//! held, the calls handed to the store in batches ([`crate::Runtime::invoke_rpcs`]), and a
//! histogram of commit latency in fixed buckets. [`snapshot`] (or
//! [`crate::Runtime::metrics`]) reads them; the bindings hand the same snapshot on, and the
//! example HTTP service renders it at `GET /metrics` in the Prometheus text format.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("attrflow.db");
//! use attrflow::flows::chunked_subscriber::{self, SubscriberArchive};
//! let runtime = attrflow::Runtime::open(path.to_str().unwrap())?;
//! let archive = SubscriberArchive::new(&runtime, chunked_subscriber::FLOW_ID);
//! archive.start()?;
//! archive.register("subscriber-001", "subscriber-001@example.com")?;
//! let metrics = runtime.metrics();
//! assert!(metrics.calls_ok >= 1);
//! assert!(metrics.commits() >= 2); // the flow start and the register
//! assert_eq!(metrics.commit_latency.count, metrics.commits());
//! # Ok::<(), attrflow::Error>(())
//! ```
//!
//! The spans (see [`SPAN_RPC`] and its siblings) are `tracing` spans at the `INFO` level
//! (lock waits at `DEBUG`); with no subscriber installed they cost a check per call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tracing::field::Empty;

use crate::error::{Error, Result};

/// The span around one RPC call, with the fields `flow_type`, `flow_id`, `rpc` and, once it
/// ends, `outcome` (`ok`, `lock_conflict` or `error`).
pub const SPAN_RPC: &str = "attrflow.rpc";
/// The span of waiting for the store's writer turn and taking the call's fail-fast locks,
/// with the field `flow_id` (a child of [`SPAN_RPC`]).
pub const SPAN_LOCK_WAIT: &str = "attrflow.lock_wait";
/// The span of the RPC handler itself, with the field `rpc` (a child of [`SPAN_RPC`]).
pub const SPAN_HANDLER: &str = "attrflow.handler";
/// The span of one COMMIT of a group, with the field `members` (the calls it makes
/// durable), a child of the span of the call whose thread commits it.
pub const SPAN_COMMIT: &str = "attrflow.commit";

/// Upper bounds, in seconds, of the commit latency histogram's buckets (a last bucket,
/// `+Inf`, takes the rest).
pub const COMMIT_LATENCY_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How an RPC call ended, as the counters tell calls apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The call returned a value; its writes are committed.
    Ok,
    /// The call failed with [`Error::LockConflict`].
    LockConflict,
    /// The call failed with any other error.
    Error,
}

impl CallOutcome {
    /// The outcome of a call that returned `result`.
    pub fn of<T>(result: &Result<T>) -> Self {
        match result {
            Ok(_) => CallOutcome::Ok,
            Err(Error::LockConflict(_)) => CallOutcome::LockConflict,
            Err(_) => CallOutcome::Error,
        }
    }

    /// Its label: `ok`, `lock_conflict` or `error`.
    pub fn label(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::LockConflict => "lock_conflict",
            CallOutcome::Error => "error",
        }
    }
}

/// The process's counters.
struct Counters {
    calls: [AtomicU64; 3],
    lock_conflicts: AtomicU64,
    members_committed: AtomicU64,
    calls_batched: AtomicU64,
    /// Commits per latency bucket (not cumulative); the last one is `+Inf`.
    latency_buckets: [AtomicU64; COMMIT_LATENCY_BUCKETS.len() + 1],
    latency_sum_nanos: AtomicU64,
}

static COUNTERS: Counters = Counters {
    calls: [const { AtomicU64::new(0) }; 3],
    lock_conflicts: AtomicU64::new(0),
    members_committed: AtomicU64::new(0),
    calls_batched: AtomicU64::new(0),
    latency_buckets: [const { AtomicU64::new(0) }; COMMIT_LATENCY_BUCKETS.len() + 1],
    latency_sum_nanos: AtomicU64::new(0),
};

/// Counts one RPC call that ended with `outcome`.
pub(crate) fn record_call(outcome: CallOutcome) {
    let index = match outcome {
        CallOutcome::Ok => 0,
        CallOutcome::LockConflict => 1,
        CallOutcome::Error => 2,
    };
    COUNTERS.calls[index].fetch_add(1, Ordering::Relaxed);
}

/// Counts `calls` RPC calls handed to the store together, as one batch.
pub(crate) fn record_batch(calls: usize) {
    COUNTERS
        .calls_batched
        .fetch_add(u64::try_from(calls).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// Counts `error` if it is a lock conflict (of an RPC call or a flow start).
pub(crate) fn count_lock_conflict(error: &Error) {
    if matches!(error, Error::LockConflict(_)) {
        COUNTERS.lock_conflicts.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs one RPC call inside its [`SPAN_RPC`] span and counts how it ended.
pub(crate) fn observe_rpc<T>(
    flow_type: &str,
    flow_id: &str,
    rpc: &str,
    call: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let span = rpc_span(flow_type, flow_id, rpc);
    let result = span.in_scope(call);
    record_outcome(&span, &result);
    result
}

/// The [`SPAN_RPC`] span of one RPC call (its outcome recorded by [`record_outcome`]).
pub(crate) fn rpc_span(flow_type: &str, flow_id: &str, rpc: &str) -> tracing::Span {
    tracing::info_span!(SPAN_RPC, flow_type, flow_id, rpc, outcome = Empty)
}

/// Records how one RPC call ended on its span and counts it.
pub(crate) fn record_outcome<T>(span: &tracing::Span, result: &Result<T>) {
    let outcome = CallOutcome::of(result);
    span.record("outcome", outcome.label());
    record_call(outcome);
    if let Err(error) = result {
        count_lock_conflict(error);
    }
}

/// Runs `commit` (one COMMIT making `members` calls durable) inside its [`SPAN_COMMIT`]
/// span and, when it succeeds, counts it with its latency.
pub(crate) fn timed_commit<T, E>(
    members: usize,
    commit: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let _span = tracing::info_span!(SPAN_COMMIT, members).entered();
    let started = Instant::now();
    let committed = commit();
    if committed.is_ok() {
        record_commit(members, started.elapsed());
    }
    committed
}

/// Counts one successful COMMIT of `members` calls that took `latency`.
fn record_commit(members: usize, latency: Duration) {
    let seconds = latency.as_secs_f64();
    let bucket = COMMIT_LATENCY_BUCKETS
        .iter()
        .position(|bound| seconds <= *bound)
        .unwrap_or(COMMIT_LATENCY_BUCKETS.len());
    COUNTERS.members_committed.fetch_add(
        u64::try_from(members).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    COUNTERS.latency_sum_nanos.fetch_add(
        u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    COUNTERS.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
}

/// The commit latency histogram as Prometheus exposes one: cumulative buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// `(upper bound in seconds, commits that took at most that long)`, bounds ascending,
    /// counts cumulative; the last bound is `f64::INFINITY` and its count is [`Self::count`].
    pub buckets: Vec<(f64, u64)>,
    /// Commits observed.
    pub count: u64,
    /// Their total latency in seconds.
    pub sum_seconds: f64,
}

/// The counters at one moment. Each counter only grows; compare two snapshots for rates.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsSnapshot {
    /// RPC calls that returned a value.
    pub calls_ok: u64,
    /// RPC calls that failed with a lock conflict.
    pub calls_lock_conflict: u64,
    /// RPC calls that failed with any other error.
    pub calls_error: u64,
    /// Lock conflicts of RPC calls and flow starts.
    pub lock_conflicts: u64,
    /// Calls and flow starts made durable by those commits.
    pub members_committed: u64,
    /// RPC calls handed to the store in a batch of two or more
    /// ([`crate::Runtime::invoke_rpcs`]; Python's `AsyncClient` hands over the calls its
    /// tasks queue together), whatever their outcome.
    pub calls_batched: u64,
    /// Latency of each successful COMMIT; its count is the number of commits.
    pub commit_latency: HistogramSnapshot,
}

impl MetricsSnapshot {
    /// RPC calls of every outcome.
    pub fn calls(&self) -> u64 {
        self.calls_ok + self.calls_lock_conflict + self.calls_error
    }

    /// Successful COMMITs (groups of calls), the commit latency histogram's count.
    pub fn commits(&self) -> u64 {
        self.commit_latency.count
    }
}

/// Reads the process's counters.
pub fn snapshot() -> MetricsSnapshot {
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let mut buckets = Vec::with_capacity(COMMIT_LATENCY_BUCKETS.len() + 1);
    let mut cumulative = 0;
    let bounds = COMMIT_LATENCY_BUCKETS
        .iter()
        .copied()
        .chain([f64::INFINITY]);
    for (bound, counter) in bounds.zip(&COUNTERS.latency_buckets) {
        cumulative += load(counter);
        buckets.push((bound, cumulative));
    }
    MetricsSnapshot {
        calls_ok: load(&COUNTERS.calls[0]),
        calls_lock_conflict: load(&COUNTERS.calls[1]),
        calls_error: load(&COUNTERS.calls[2]),
        lock_conflicts: load(&COUNTERS.lock_conflicts),
        members_committed: load(&COUNTERS.members_committed),
        calls_batched: load(&COUNTERS.calls_batched),
        commit_latency: HistogramSnapshot {
            buckets,
            count: cumulative,
            sum_seconds: Duration::from_nanos(load(&COUNTERS.latency_sum_nanos)).as_secs_f64(),
        },
    }
}

impl crate::Runtime {
    /// The counters of every runtime in this process (see [`crate::metrics`]).
    pub fn metrics(&self) -> MetricsSnapshot {
        snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_lands_in_the_first_bucket_that_holds_it_and_buckets_are_cumulative() {
        let before = snapshot().commit_latency;
        record_commit(3, Duration::from_micros(300));
        let after = snapshot().commit_latency;
        assert!(after.count > before.count);
        for pair in after.buckets.windows(2) {
            assert!(pair[0].1 <= pair[1].1, "buckets are cumulative");
        }
        assert_eq!(after.buckets.last().map(|b| b.1), Some(after.count));
        let at = |h: &HistogramSnapshot, bound: f64| {
            h.buckets
                .iter()
                .find(|(b, _)| *b == bound)
                .map(|(_, n)| *n)
                .unwrap_or_default()
        };
        // 300 µs is above the 250 µs bound and within the 500 µs one.
        assert!(at(&after, 0.0005) > at(&before, 0.0005));
    }

    #[test]
    fn outcomes_are_told_apart_by_error_kind() {
        assert_eq!(CallOutcome::of(&Ok::<(), Error>(())), CallOutcome::Ok);
        let conflict: Result<()> = Err(Error::LockConflict("held".into()));
        assert_eq!(CallOutcome::of(&conflict), CallOutcome::LockConflict);
        let other: Result<()> = Err(Error::invalid_input("bad"));
        assert_eq!(CallOutcome::of(&other).label(), "error");
    }
}
