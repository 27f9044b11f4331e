//! A flow's runs, from start to stop: [`crate::Runtime::stop_flow`] closes a run (as Dex's
//! `stop_flow` cancels, terminates or fails it), [`crate::Runtime::start_flow`] may begin a
//! new run under the ID of a stopped flow (or replace a running one) as the start's
//! [`crate::IdReusePolicy`] allows, and [`crate::Runtime::describe_flow`] says where the
//! flow stands.
//!
//! Where a run stands is recorded as one more stored value of the flow, under
//! [`RUN_STATE_NAME`] (`/run`): a physical name no definition can produce, since a map
//! name is never blank. A flow's first run holds nothing there while it runs; a later
//! run (one that replaced another) holds `{"status":"running","runId":…}` while it runs;
//! a closed run holds its [`ClosedRun`]. Every RPC loads the value with the values it
//! reads, so it sees a stop or a new run in the same snapshot as everything else,
//! whichever connection, process or host made it, and no two running runs hold the same
//! there (nothing, or each its own run ID), so a lock-free RPC that read one run never
//! commits into another. A store keeps the value where reading it costs least: SQLite as
//! a row of the flow's values, PostgreSQL in the flow's own row (schema version 3), which
//! every RPC's opening statement reads anyway.
//!
//! RPCs running at the moment of a stop or a new run:
//! - A lock-free RPC's writes commit only if every value it read, this one included, is
//!   unchanged: one that read before the stop fails with a retryable lock conflict, and
//!   retried, as not active (or runs on the new run).
//! - On SQLite, an RPC that locks runs inside the one write transaction of the file, so it
//!   commits before the stop or new run, or runs after it.
//! - On PostgreSQL, groups commit side by side, each in a transaction of its own that reads
//!   one snapshot, and a stop takes none of an RPC's locks: an RPC that locks, in a group
//!   whose snapshot was taken before the stop committed, may still commit just after it,
//!   as if it had run just before. A new run also changes every lock row of the flow, so
//!   such an RPC on locks the flow used before fails with a retryable lock conflict
//!   instead; only one whose locks the flow never took before (their rows are created
//!   with it) can still commit beside it. Every RPC in a group begun after the stop or new
//!   run committed sees it.
//!
//! A stopped flow keeps its values (they stay readable with `get_attribute`, and through
//! an RPC run as an inspection, [`crate::Runtime::inspect_rpc_output`], which writes
//! nothing) and refuses every RPC with [`Error::FlowNotActive`] until a start begins a new
//! run under its ID. A new run removes the previous run's values in the transaction that
//! writes its initial values: as in Dex, a run starts with only its own.

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

    /// Reads the stored run state of `flow_id` (the value of [`RUN_STATE_NAME`], if any):
    /// its closed run, or `None` while it runs.
    pub(crate) fn parse(flow_id: &str, stored: Option<&str>) -> Result<Option<Self>> {
        let Some(json) = stored else {
            return Ok(None);
        };
        let not_ours = |why: &dyn std::fmt::Display| {
            Error::storage(format!(
                "flow {flow_id:?}: its run state {RUN_STATE_NAME:?} is not one attrflow \
                 wrote ({why}): {json}"
            ))
        };
        let stored: StoredRunState = serde_json::from_str(json).map_err(|e| not_ours(&e))?;
        match (stored.status, stored.closed_at_ms) {
            (FlowStatus::Running, None) if stored.run_id.is_some() && stored.reason.is_none() => {
                Ok(None)
            }
            (FlowStatus::Running, _) => Err(not_ours(&"a running run has a run ID only")),
            (status, Some(closed_at_ms)) => Ok(Some(ClosedRun {
                status,
                reason: stored.reason,
                closed_at_ms,
            })),
            (_, None) => Err(not_ours(&"a closed run says when it closed")),
        }
    }

    /// Reads `flow_id`'s run state from the values an RPC read: its closed run, or `None`
    /// while it runs.
    pub(crate) fn find(flow_id: &str, values: &[(String, String)]) -> Result<Option<Self>> {
        let stored = values.iter().find(|(name, _)| name == RUN_STATE_NAME);
        Self::parse(flow_id, stored.map(|(_, json)| json.as_str()))
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

/// The run state of a run that is running, as stored under [`RUN_STATE_NAME`] when it
/// begins: `{"status":"running","runId":…}`.
pub(crate) fn running_state(run_id: &str) -> Result<String> {
    serde_json::to_string(&StoredRunState {
        status: FlowStatus::Running,
        run_id: Some(run_id.to_owned()),
        reason: None,
        closed_at_ms: None,
    })
    .map_err(|e| Error::storage(format!("writing a run state: {e}")))
}

/// Any run state as stored: a running run's (status and run ID) or a [`ClosedRun`]
/// (status, reason and time).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StoredRunState {
    status: FlowStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    closed_at_ms: Option<i64>,
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
