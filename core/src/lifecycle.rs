//! A flow's runs, from start to stop: [`crate::Runtime::stop_flow`] closes a run (as Dex's
//! `stop_flow` cancels, terminates or fails it), [`crate::Runtime::start_flow`] may begin a
//! new run under the ID of a stopped flow (or replace a running one) as the start's
//! [`crate::IdReusePolicy`] allows, and [`crate::Runtime::describe_flow`] says where the
//! flow stands.
//!
//! Where a run stands is recorded as one more stored value of the flow, under
//! [`RUN_STATE_NAME`] (`/run`): a physical name no definition can produce, since a map
//! name is never blank. A flow's first run holds nothing there while it runs; a later
//! run (one that replaced another) holds `{"status":"running","runId":…,"replaced":…}`
//! while it runs, `replaced` saying which run it replaced and how that one closed (a run
//! replaced while running, under [`crate::IdReusePolicy::TerminateIfRunning`], closed as
//! terminated), so a wait for the replaced run ([`crate::Runtime::wait_for_flow`]) that
//! looks only after the new run began still learns how its run ended; a closed run holds
//! its [`ClosedRun`]. Every RPC loads the value with the values it
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
pub use crate::flow_status::FlowStatus;

/// The physical name of a closed run's record (see the module docs).
pub const RUN_STATE_NAME: &str = "/run";

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
        Ok(RunState::parse(flow_id, stored)?.closed())
    }

    /// The record of a running run that a new run replaced (under
    /// [`crate::IdReusePolicy::TerminateIfRunning`]): terminated now.
    pub(crate) fn replaced_now() -> Self {
        ClosedRun {
            status: FlowStatus::Terminated,
            reason: Some(REPLACED_REASON.to_owned()),
            closed_at_ms: now_ms(),
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

/// The reason recorded for a running run that a new run replaced.
pub const REPLACED_REASON: &str = "replaced by a new run (ALLOW_TERMINATE_IF_RUNNING)";

/// A run that a new run replaced: its ID and how it closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReplacedRun {
    /// The replaced run's ID.
    pub(crate) run_id: String,
    /// How it closed (terminated, when it was replaced while running).
    pub(crate) closed: ClosedRun,
}

/// Where a run stands, as its stored run state says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunState {
    /// It runs; a run that replaced another says which, and how that one closed.
    Running {
        /// The run it replaced, if it replaced one.
        replaced: Option<ReplacedRun>,
    },
    /// It was stopped.
    Closed(ClosedRun),
}

impl RunState {
    /// The closed run, or `None` while it runs.
    pub(crate) fn closed(self) -> Option<ClosedRun> {
        match self {
            RunState::Running { .. } => None,
            RunState::Closed(closed) => Some(closed),
        }
    }

    /// Reads the stored run state of `flow_id` (the value of [`RUN_STATE_NAME`], if any;
    /// none is a first run, running). A value attrflow did not write is
    /// [`Error::Storage`] naming the flow and the value.
    pub(crate) fn parse(flow_id: &str, stored: Option<&str>) -> Result<Self> {
        let Some(json) = stored else {
            return Ok(RunState::Running { replaced: None });
        };
        let not_ours = |why: &dyn std::fmt::Display| {
            Error::storage(format!(
                "flow {flow_id:?}: its run state {RUN_STATE_NAME:?} is not one attrflow \
                 wrote ({why}): {json}"
            ))
        };
        let stored: StoredRunState = serde_json::from_str(json).map_err(|e| not_ours(&e))?;
        match (stored.status, stored.closed_at_ms, stored.replaced) {
            (FlowStatus::Running, None, replaced)
                if stored.run_id.is_some() && stored.reason.is_none() =>
            {
                let replaced = match replaced {
                    None => None,
                    Some(r) if r.status != FlowStatus::Running => Some(ReplacedRun {
                        run_id: r.run_id,
                        closed: ClosedRun {
                            status: r.status,
                            reason: r.reason,
                            closed_at_ms: r.closed_at_ms,
                        },
                    }),
                    Some(_) => return Err(not_ours(&"a replaced run is closed")),
                };
                Ok(RunState::Running { replaced })
            }
            (FlowStatus::Running, _, _) => {
                Err(not_ours(&"a running run has a run ID and no reason or end"))
            }
            (status, Some(closed_at_ms), None) => Ok(RunState::Closed(ClosedRun {
                status,
                reason: stored.reason,
                closed_at_ms,
            })),
            (_, Some(_), Some(_)) => Err(not_ours(&"only a running run names a replaced one")),
            (_, None, _) => Err(not_ours(&"a closed run says when it closed")),
        }
    }
}

/// The run state of the run `run_id`, running, as stored under [`RUN_STATE_NAME`] when it
/// begins after `replaced` (the run before it under the flow's ID, and how it closed):
/// `{"status":"running","runId":…,"replaced":{"runId":…,"status":…,…}}`.
pub(crate) fn running_state(run_id: &str, replaced: &ReplacedRun) -> Result<String> {
    serde_json::to_string(&StoredRunState {
        status: FlowStatus::Running,
        run_id: Some(run_id.to_owned()),
        reason: None,
        closed_at_ms: None,
        replaced: Some(StoredReplacedRun {
            run_id: replaced.run_id.clone(),
            status: replaced.closed.status,
            reason: replaced.closed.reason.clone(),
            closed_at_ms: replaced.closed.closed_at_ms,
        }),
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
    /// A running run's record of the run it replaced (none in stores written before it
    /// was kept, nor for a flow's first run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replaced: Option<StoredReplacedRun>,
}

/// A replaced run as a running run's state records it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StoredReplacedRun {
    run_id: String,
    status: FlowStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    closed_at_ms: i64,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced() -> ReplacedRun {
        ReplacedRun {
            run_id: "run-a".to_owned(),
            closed: ClosedRun {
                status: FlowStatus::Failed,
                reason: Some("gave up".to_owned()),
                closed_at_ms: 17,
            },
        }
    }

    #[test]
    fn a_new_run_reads_back_the_run_it_replaced() {
        let stored = running_state("run-b", &replaced()).unwrap();
        assert_eq!(
            stored,
            r#"{"status":"running","runId":"run-b","replaced":{"runId":"run-a","status":"failed","reason":"gave up","closedAtMs":17}}"#
        );
        assert_eq!(
            RunState::parse("f", Some(&stored)).unwrap(),
            RunState::Running {
                replaced: Some(replaced())
            }
        );
        assert_eq!(ClosedRun::parse("f", Some(&stored)).unwrap(), None);
    }

    #[test]
    fn run_states_written_before_replaced_runs_were_kept_still_read() {
        let running = r#"{"status":"running","runId":"run-b"}"#;
        assert_eq!(
            RunState::parse("f", Some(running)).unwrap(),
            RunState::Running { replaced: None }
        );
        assert_eq!(
            RunState::parse("f", None).unwrap(),
            RunState::Running { replaced: None }
        );
        let closed = r#"{"status":"canceled","closedAtMs":5}"#;
        assert_eq!(
            ClosedRun::parse("f", Some(closed))
                .unwrap()
                .map(|c| c.status),
            Some(FlowStatus::Canceled)
        );
    }

    #[test]
    fn a_replaced_run_anywhere_but_in_a_running_state_is_refused_naming_the_flow() {
        for (stored, why) in [
            (
                r#"{"status":"running","runId":"b","replaced":{"runId":"a","status":"running","closedAtMs":1}}"#,
                "a replaced run is closed",
            ),
            (
                r#"{"status":"failed","closedAtMs":2,"replaced":{"runId":"a","status":"failed","closedAtMs":1}}"#,
                "only a running run names a replaced one",
            ),
            (
                r#"{"status":"running","runId":"b","replaced":{"runId":"a","status":"failed"}}"#,
                "missing field `closedAtMs`",
            ),
        ] {
            let error = RunState::parse("flow-9", Some(stored)).unwrap_err();
            let message = error.to_string();
            assert!(matches!(error, Error::Storage(_)), "{message}");
            assert!(message.contains("flow \"flow-9\""), "{message}");
            assert!(message.contains(why), "{message}");
        }
    }
}
