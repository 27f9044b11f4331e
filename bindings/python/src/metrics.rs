//! The core's counters for Python ([`attrflow::metrics`]): one snapshot object, read-only.

use attrflow::metrics::{self, MetricsSnapshot};
use pyo3::prelude::*;

/// The process's counters at one moment (see `attrflow.metrics`).
#[pyclass(name = "MetricsSnapshot", module = "attrflow._native", frozen, get_all)]
pub(crate) struct NativeMetricsSnapshot {
    calls_ok: u64,
    calls_lock_conflict: u64,
    calls_error: u64,
    lock_conflicts: u64,
    members_committed: u64,
    calls_batched: u64,
    commits: u64,
    commit_latency_buckets: Vec<(f64, u64)>,
    commit_latency_sum_seconds: f64,
}

impl From<MetricsSnapshot> for NativeMetricsSnapshot {
    fn from(snapshot: MetricsSnapshot) -> Self {
        NativeMetricsSnapshot {
            calls_ok: snapshot.calls_ok,
            calls_lock_conflict: snapshot.calls_lock_conflict,
            calls_error: snapshot.calls_error,
            lock_conflicts: snapshot.lock_conflicts,
            members_committed: snapshot.members_committed,
            calls_batched: snapshot.calls_batched,
            commits: snapshot.commits(),
            commit_latency_sum_seconds: snapshot.commit_latency.sum_seconds,
            commit_latency_buckets: snapshot.commit_latency.buckets,
        }
    }
}

/// Reads the counters of every runtime in this process.
#[pyfunction]
fn metrics_snapshot() -> NativeMetricsSnapshot {
    metrics::snapshot().into()
}

/// Adds the snapshot class, its reader and the tracing span names to the native module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeMetricsSnapshot>()?;
    m.add_function(wrap_pyfunction!(metrics_snapshot, m)?)?;
    m.add("METRICS_SPAN_RPC", metrics::SPAN_RPC)?;
    m.add("METRICS_SPAN_LOCK_WAIT", metrics::SPAN_LOCK_WAIT)?;
    m.add("METRICS_SPAN_HANDLER", metrics::SPAN_HANDLER)?;
    m.add("METRICS_SPAN_COMMIT", metrics::SPAN_COMMIT)
}
