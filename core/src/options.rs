//! Per-call options: how a flow starts, and what one RPC call locks and loads beyond its
//! definition.

use serde_json::Value;

use crate::definition::MapInstance;

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
    /// Default options: a second start fails, no initial values beyond the flow's defaults.
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
    /// differs fails with [`crate::Error::InvalidInput`] and nothing runs.
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
