//! A flow's run from outside its RPCs: `store.stopFlow`, `store.describeFlow`,
//! `store.waitForFlow`, `store.getAttribute`, `store.setAttribute` and
//! `store.waitForAttributeEqual`, as the core's `Runtime` methods of the same names do them.

use attrflow::definition::MapInstance;

use crate::error::Result;
use crate::foreign_flow::LockTarget;
use crate::store::Store;

/// How `stopFlow` closes a run, as Dex's `StopType` names it; the three differ only in the
/// status the run ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum StopType {
    /// Status `canceled` (Dex's default).
    Cancel,
    /// Status `terminated`.
    Terminate,
    /// Status `failed`.
    Fail,
}

impl From<StopType> for attrflow::StopType {
    fn from(stop: StopType) -> Self {
        match stop {
            StopType::Cancel => attrflow::StopType::Cancel,
            StopType::Terminate => attrflow::StopType::Terminate,
            StopType::Fail => attrflow::StopType::Fail,
        }
    }
}

/// Where a flow stands, as `describeFlow` returns it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FlowInfo {
    /// The flow's ID.
    pub flow_id: String,
    /// The ID of its run.
    pub run_id: String,
    /// Its flow type.
    pub flow_type: String,
    /// `running`, or how it was stopped: `canceled`, `terminated`, `failed`.
    pub status: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// When it was stopped, once it was.
    pub closed_at_ms: Option<i64>,
    /// The reason given to `stopFlow`, if any.
    pub reason: Option<String>,
}

impl From<attrflow::FlowSummary> for FlowInfo {
    fn from(summary: attrflow::FlowSummary) -> Self {
        let (closed_at_ms, reason) = match summary.closed {
            Some(closed) => (Some(closed.closed_at_ms), closed.reason),
            None => (None, None),
        };
        FlowInfo {
            flow_id: summary.flow_id,
            run_id: summary.run_id,
            flow_type: summary.flow_type,
            status: summary.status.as_str().to_owned(),
            started_at_ms: summary.started_at_ms,
            closed_at_ms,
            reason,
        }
    }
}

#[uniffi::export]
impl Store {
    /// Stops the flow `flow_id` (`stop` absent means `Cancel`, as in Dex): from then on
    /// every RPC on it and a second stop fail with `FlowNotActive`, until `startFlow`
    /// begins a new run under its ID; its values stay readable (`getAttribute`) until then.
    #[uniffi::method(default(stop = None, reason = None))]
    pub fn stop_flow(
        &self,
        flow_id: String,
        stop: Option<StopType>,
        reason: Option<String>,
    ) -> Result<()> {
        let stop = stop.unwrap_or(StopType::Cancel).into();
        Ok(self.runtime.stop_flow(&flow_id, stop, reason.as_deref())?)
    }

    /// Checks that the store answers (one read of its table of flows), as Dex's
    /// `health_check` checks its service; fails with `Storage` saying what is wrong.
    pub fn health_check(&self) -> Result<()> {
        Ok(self.runtime.health_check()?)
    }

    /// Where the flow `flow_id` stands: its run, type, status and start, and once stopped
    /// when and why.
    pub fn describe_flow(&self, flow_id: String) -> Result<FlowInfo> {
        Ok(self.runtime.describe_flow(&flow_id)?.into())
    }

    /// Waits (blocking) up to `timeout_ms` (at most 60 000) for the run of the flow
    /// `flow_id` to close, as Dex's `wait_for_flow`: the run the flow has when the wait
    /// begins, as `describeFlow` gave it once stopped (at once when it already is), or
    /// `terminated` once a start replaced it; null when the time runs out first.
    pub fn wait_for_flow(&self, flow_id: String, timeout_ms: u64) -> Result<Option<FlowInfo>> {
        let closed = self
            .runtime
            .wait_for_flow(&flow_id, std::time::Duration::from_millis(timeout_ms))?;
        Ok(closed.map(Into::into))
    }

    /// The committed JSON text of the Attribute `target.target` (with `target.instance`, of
    /// that instance of the AttributeMap), or null when it holds none; read lock-free.
    /// `runId`, when given, must be the flow's run.
    #[uniffi::method(default(run_id = None))]
    pub fn get_attribute(
        &self,
        flow_id: String,
        target: LockTarget,
        run_id: Option<String>,
    ) -> Result<Option<String>> {
        Ok(self
            .runtime
            .get_attribute(&flow_id, &core_target(target), run_id.as_deref())?)
    }

    /// Writes `json` (a value's JSON text; `null` deletes it) to the Attribute
    /// `target.target` (with `target.instance`, to that instance of the AttributeMap) from
    /// outside the flow's RPCs. The write takes the value's lock, waiting (up to 5 s) for an
    /// RPC that holds it, and returns once it is durable. The flow's type must be
    /// registered with this store and declare the name; the built-in types refuse (their
    /// RPCs alone write them). `runId`, when given, must be the flow's run.
    #[uniffi::method(default(run_id = None))]
    pub fn set_attribute(
        &self,
        flow_id: String,
        target: LockTarget,
        json: String,
        run_id: Option<String>,
    ) -> Result<()> {
        Ok(self
            .runtime
            .set_attribute(&flow_id, &core_target(target), &json, run_id.as_deref())?)
    }

    /// Waits (blocking) up to `timeout_ms` (at most 60 000) for the committed value of
    /// `target` to equal `expected_json` (the JSON text of a string, boolean or number;
    /// numbers compare by value): true once it does, at once when it already does; false
    /// when the time runs out. A flow stopped first is `FlowNotActive`.
    pub fn wait_for_attribute_equal(
        &self,
        flow_id: String,
        target: LockTarget,
        expected_json: String,
        timeout_ms: u64,
    ) -> Result<bool> {
        Ok(self.runtime.wait_for_attribute_equal(
            &flow_id,
            &core_target(target),
            &expected_json,
            std::time::Duration::from_millis(timeout_ms),
        )?)
    }
}

/// The core's name for what `target` names.
fn core_target(target: LockTarget) -> attrflow::LockTarget {
    match target.instance {
        Some(instance) => {
            attrflow::LockTarget::MapInstance(MapInstance::new(target.target, instance))
        }
        None => attrflow::LockTarget::Attribute(target.target),
    }
}
