//! The core's counters ([`attrflow::metrics`]) on [`Store`]: one snapshot record.

use attrflow::metrics::MetricsSnapshot;

use crate::store::Store;

/// One bucket of the commit latency histogram.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct LatencyBucket {
    /// Its upper bound in seconds; the last bucket's is infinite.
    pub upper_bound_seconds: f64,
    /// Commits that took at most that long (cumulative over the buckets before it).
    pub count: u64,
}

/// The counters of every store in this process at one moment; each only grows.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct Metrics {
    /// RPC calls that returned a value.
    pub calls_ok: u64,
    /// RPC calls that failed with a lock conflict.
    pub calls_lock_conflict: u64,
    /// RPC calls that failed with any other error.
    pub calls_error: u64,
    /// Lock conflicts of RPC calls and flow starts.
    pub lock_conflicts: u64,
    /// Successful COMMITs, each holding one or more calls.
    pub commits: u64,
    /// Calls and flow starts those commits made durable.
    pub members_committed: u64,
    /// RPC calls handed to the store in a batch of two or more, whatever their outcome.
    pub calls_batched: u64,
    /// The commit latency histogram, bounds ascending, ending with an infinite bound whose
    /// count is `commits`.
    pub commit_latency_buckets: Vec<LatencyBucket>,
    /// The commits' total latency in seconds.
    pub commit_latency_sum_seconds: f64,
}

impl From<MetricsSnapshot> for Metrics {
    fn from(snapshot: MetricsSnapshot) -> Self {
        Metrics {
            calls_ok: snapshot.calls_ok,
            calls_lock_conflict: snapshot.calls_lock_conflict,
            calls_error: snapshot.calls_error,
            lock_conflicts: snapshot.lock_conflicts,
            commits: snapshot.commits(),
            members_committed: snapshot.members_committed,
            calls_batched: snapshot.calls_batched,
            commit_latency_sum_seconds: snapshot.commit_latency.sum_seconds,
            commit_latency_buckets: snapshot
                .commit_latency
                .buckets
                .into_iter()
                .map(|(upper_bound_seconds, count)| LatencyBucket {
                    upper_bound_seconds,
                    count,
                })
                .collect(),
        }
    }
}

#[uniffi::export]
impl Store {
    /// The counters of every store in this process: calls by outcome, lock conflicts,
    /// commits and their latency.
    pub fn metrics(&self) -> Metrics {
        self.runtime.metrics().into()
    }
}
