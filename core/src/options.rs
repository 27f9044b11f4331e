//! Per-call options: how a flow starts, and what one RPC call locks and loads beyond its
//! definition.

use serde_json::Value;

use crate::definition::{MapInstance, RpcPlan};
use crate::lifecycle::FlowStatus;

/// Whether a start may begin a new run under a flow ID that already has one, as Dex's
/// `IdReusePolicy` says. A new run replaces the previous one whole: its values are only the
/// new run's initial values (see [`crate::Runtime::start_flow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IdReusePolicy {
    /// A new run once the previous one is stopped; a running flow refuses the start. Dex's
    /// default (`ALLOW_IF_NO_RUNNING`, the SDKs' `DEFAULT` and `ALLOW_IF_NOT_RUNNING`).
    #[default]
    AllowIfNotRunning,
    /// A new run only after a run that was stopped as failed ([`FlowStatus::Failed`]).
    AllowIfPreviousFailed,
    /// Never a second run under the ID.
    Disallow,
    /// A running flow is terminated and replaced; a stopped one is replaced too.
    TerminateIfRunning,
}

impl IdReusePolicy {
    /// Whether a start under this policy begins a new run after one that stands at
    /// `previous` ([`FlowStatus::Running`] for a run not stopped).
    pub fn starts_new_run(self, previous: FlowStatus) -> bool {
        match (self, previous) {
            (IdReusePolicy::TerminateIfRunning, _) => true,
            (_, FlowStatus::Running) | (IdReusePolicy::Disallow, _) => false,
            (IdReusePolicy::AllowIfNotRunning, _) => true,
            (IdReusePolicy::AllowIfPreviousFailed, status) => status == FlowStatus::Failed,
        }
    }

    /// The policy's name as Dex's Python SDK spells it (`ALLOW_IF_NOT_RUNNING`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            IdReusePolicy::AllowIfNotRunning => "ALLOW_IF_NOT_RUNNING",
            IdReusePolicy::AllowIfPreviousFailed => "ALLOW_IF_PREVIOUS_FAILED",
            IdReusePolicy::Disallow => "DISALLOW",
            IdReusePolicy::TerminateIfRunning => "ALLOW_TERMINATE_IF_RUNNING",
        }
    }
}

impl std::str::FromStr for IdReusePolicy {
    type Err = crate::Error;

    /// Reads a policy by the name [`IdReusePolicy::as_str`] gives it, or `DEFAULT` (Dex's
    /// name of the default policy).
    fn from_str(name: &str) -> crate::Result<Self> {
        match name {
            "DEFAULT" | "ALLOW_IF_NOT_RUNNING" => Ok(IdReusePolicy::AllowIfNotRunning),
            "ALLOW_IF_PREVIOUS_FAILED" => Ok(IdReusePolicy::AllowIfPreviousFailed),
            "DISALLOW" => Ok(IdReusePolicy::Disallow),
            "ALLOW_TERMINATE_IF_RUNNING" => Ok(IdReusePolicy::TerminateIfRunning),
            other => Err(crate::Error::invalid_input(format!(
                "{other:?} is not an ID reuse policy: expected DEFAULT, ALLOW_IF_NOT_RUNNING, \
                 ALLOW_IF_PREVIOUS_FAILED, DISALLOW or ALLOW_TERMINATE_IF_RUNNING"
            ))),
        }
    }
}

impl std::fmt::Display for IdReusePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options for starting a flow.
///
/// ```
/// use attrflow::StartFlowOptions;
/// use serde_json::json;
/// let options = StartFlowOptions::new()
///     .ignore_already_started(true)
///     .with_attribute("state", json!({"nextSequence": 1}))
///     .with_map_instance("chunks", "current", json!({"records": []}));
/// assert_eq!(options.initial_values().len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartFlowOptions {
    ignore_already_started: bool,
    id_reuse_policy: IdReusePolicy,
    initial: Vec<(InitialTarget, Value)>,
}

/// What an initial value is written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitialTarget {
    /// A singleton Attribute.
    Attribute(String),
    /// One map instance.
    MapInstance(MapInstance),
}

impl StartFlowOptions {
    /// Default options: a start under the ID of a running flow fails, one under the ID of a
    /// stopped flow begins a new run, no initial values beyond the flow's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `true`, starting a flow that is already running returns the running flow's run
    /// ID instead of failing with [`crate::Error::FlowAlreadyStarted`].
    pub fn ignore_already_started(mut self, ignore: bool) -> Self {
        self.ignore_already_started = ignore;
        self
    }

    /// Whether an already running flow is accepted.
    pub fn ignores_already_started(&self) -> bool {
        self.ignore_already_started
    }

    /// Sets whether the start may begin a new run under an ID that already has one
    /// (default [`IdReusePolicy::AllowIfNotRunning`], as Dex's).
    pub fn id_reuse_policy(mut self, policy: IdReusePolicy) -> Self {
        self.id_reuse_policy = policy;
        self
    }

    /// The ID reuse policy of the start.
    pub fn reuse_policy(&self) -> IdReusePolicy {
        self.id_reuse_policy
    }

    /// Sets the initial value of a singleton Attribute; it is written in the same
    /// transaction that creates the flow.
    pub fn with_attribute(mut self, attribute: impl Into<String>, value: Value) -> Self {
        self.initial
            .push((InitialTarget::Attribute(attribute.into()), value));
        self
    }

    /// Sets the initial value of one map instance.
    pub fn with_map_instance(
        mut self,
        map: impl Into<String>,
        instance: impl Into<String>,
        value: Value,
    ) -> Self {
        self.initial.push((
            InitialTarget::MapInstance(MapInstance::new(map, instance)),
            value,
        ));
        self
    }

    /// The initial values, in the order they were given.
    pub fn initial_values(&self) -> &[(InitialTarget, Value)] {
        &self.initial
    }
}

/// What one RPC call locks and loads in addition to its definition's fixed locks and loads.
///
/// Per-call options can only add; the union is sorted and deduplicated. A duplicate within
/// one of these lists is rejected as invalid input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RpcInvokeOptions {
    /// Map instances to lock for this call.
    pub lock_attribute_map_instances: Vec<MapInstance>,
    /// Map instances to load into this call's snapshot.
    pub load_attribute_map_instances: Vec<MapInstance>,
    /// The run the caller means; `None` means whatever run the flow has. A flow whose run
    /// differs fails with [`crate::Error::RunNotCurrent`] and nothing runs.
    pub run_id: Option<String>,
}

impl RpcInvokeOptions {
    /// No extra locks or loads.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a map-instance lock.
    pub fn lock_attribute_map_instance(
        mut self,
        map: impl Into<String>,
        instance: impl Into<String>,
    ) -> Self {
        self.lock_attribute_map_instances
            .push(MapInstance::new(map, instance));
        self
    }

    /// Pins the call to one run of the flow.
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Adds a map-instance load.
    pub fn load_attribute_map_instance(
        mut self,
        map: impl Into<String>,
        instance: impl Into<String>,
    ) -> Self {
        self.load_attribute_map_instances
            .push(MapInstance::new(map, instance));
        self
    }
}

impl From<RpcInvokeOptions> for RpcPlan {
    /// The locks and loads of `options`, without its run.
    fn from(options: RpcInvokeOptions) -> Self {
        RpcPlan {
            locks: options.lock_attribute_map_instances,
            loads: options.load_attribute_map_instances,
        }
    }
}
