//! A flow's run from start to stop: [`crate::Runtime::stop_flow`] closes it (as Dex's
//! `stop_flow` cancels, terminates or fails a run) and [`crate::Runtime::describe_flow`]
//! says where it stands.
//!
//! A closed run is recorded as one more stored value of the flow, under
//! [`RUN_STATE_NAME`] (`/run`): a physical name no definition can produce, since a map
//! name is never blank. Every RPC loads it with the values it reads, so it sees a stop in
//! the same snapshot as everything else, whichever connection, process or host made it.
//! Nothing is cached, so no reader can miss a stop; a flow without the value is running.
//! A store keeps the value where reading it costs least: SQLite as a row of the flow's
//! values, PostgreSQL in the flow's own row (schema version 3), which every RPC's opening
//! statement reads anyway.
//!
//! RPCs running at the moment of a stop:
//! - A lock-free RPC's writes commit only if every value it read, this one included, is
//!   unchanged: one that read before the stop fails with a retryable lock conflict, and
//!   retried, as not active.
//! - On SQLite, an RPC that locks runs inside the one write transaction of the file, so it
//!   commits before the stop or fails after it.
//! - On PostgreSQL, groups commit side by side, each in a transaction of its own that reads
//!   one snapshot, and a stop takes none of an RPC's locks: an RPC that locks, in a group
//!   whose snapshot was taken before the stop committed, may still commit just after it,
//!   as if it had run just before. Every RPC in a group begun after the stop committed
//!   fails.
//!
//! A stopped flow keeps its values (they stay readable with `get_attribute`, and through
//! an RPC run as an inspection, [`crate::Runtime::inspect_rpc_output`], which writes
//! nothing), refuses every RPC with [`Error::FlowNotActive`], and its ID is not started
//! again.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The physical name of a closed run's record (see the module docs).
pub const RUN_STATE_NAME: &str = "/run";

/// Where a flow's run stands, as Dex's `FlowStatus` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    /// Started and not stopped: it serves RPCs.
    Running,
    /// Stopped with [`StopType::Cancel`].
    Canceled,
    /// Stopped with [`StopType::Terminate`].
    Terminated,
    /// Stopped with [`StopType::Fail`].
    Failed,
}

impl FlowStatus {
    /// The status's name (`running`, `canceled`, `terminated`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Running => "running",
            FlowStatus::Canceled => "canceled",
            FlowStatus::Terminated => "terminated",
            FlowStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for FlowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How [`crate::Runtime::stop_flow`] closes a run, as Dex's `StopType` names it. attrflow
/// runs no Steps, so the three differ only in the status they record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopType {
    /// Cancel the run (Dex's default): status [`FlowStatus::Canceled`].
    Cancel,
    /// Terminate the run: status [`FlowStatus::Terminated`].
    Terminate,
    /// Fail the run: status [`FlowStatus::Failed`].
    Fail,
}

impl StopType {
    /// The status a run stopped this way has.
    pub fn status(self) -> FlowStatus {
        match self {
            StopType::Cancel => FlowStatus::Canceled,
            StopType::Terminate => FlowStatus::Terminated,
            StopType::Fail => FlowStatus::Failed,
        }
    }
}

/// What [`RUN_STATE_NAME`] holds once a run is closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClosedRun {
    /// How it was closed.
    pub status: FlowStatus,
    /// The reason given to `stop_flow`, if any.
    pub reason: Option<String>,
    /// When it was closed, in milliseconds since the Unix epoch.
    pub closed_at_ms: i64,
}

impl ClosedRun {
    /// The record of a run closed now, `stop`'s way, for `reason`.
    pub(crate) fn now(stop: StopType, reason: Option<&str>) -> Self {
        ClosedRun {
            status: stop.status(),
            reason: reason.map(str::to_owned),
            closed_at_ms: now_ms(),
        }
    }

    /// Reads the stored record of `flow_id`'s closed run.
    pub(crate) fn parse(flow_id: &str, json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| {
            Error::storage(format!(
                "flow {flow_id:?}: its run state {RUN_STATE_NAME:?} is not one attrflow \
                 wrote ({e}): {json}"
            ))
        })
    }

    /// The record as stored.
    pub(crate) fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error::storage(format!("writing a run state: {e}")))
    }

    /// The error of an RPC (or a second stop) on this closed run of `flow_id`.
    pub(crate) fn not_active(&self, flow_id: &str) -> Error {
        Error::FlowNotActive {
            flow_id: flow_id.to_owned(),
            status: self.status,
        }
    }
}

/// Where a flow stands: what [`crate::Runtime::describe_flow`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSummary {
    /// The flow's ID.
    pub flow_id: String,
    /// The ID of its run.
    pub run_id: String,
    /// Its flow type.
    pub flow_type: String,
    /// Whether it is running, or how it was stopped.
    pub status: FlowStatus,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// How and when it was stopped, once it was.
    pub closed: Option<ClosedRun>,
}

/// Milliseconds since the Unix epoch (0 before it: a clock set that far back), as stores
/// stamp a flow's start and [`ClosedRun`] its end.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
