//! Flow definitions: which Attributes and AttributeMaps a flow type holds, which RPCs it
//! serves, and what each RPC locks and loads.
//!
//! Definitions are checked once, when they are built, so a bad lock target or a duplicate
//! name fails at registration rather than at the first call.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

pub use crate::context::RpcHandler;
use crate::context::{DeclaredNames, RpcContext};
use crate::error::{Error, Result};
use crate::names::{instance_physical_name, validate_definition_name};
use crate::output::RpcOutput;

/// A singleton Attribute or one instance of an AttributeMap: what an RPC locks, or what
/// [`crate::Runtime::get_attribute`] reads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockTarget {
    /// The singleton Attribute of this name.
    Attribute(String),
    /// One instance of an AttributeMap.
    MapInstance(MapInstance),
}

/// One instance of an AttributeMap, by map name and instance key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MapInstance {
    /// The AttributeMap's name.
    pub map: String,
    /// The instance key within the map.
    pub instance: String,
}

impl MapInstance {
    /// Names one instance of a map.
    pub fn new(map: impl Into<String>, instance: impl Into<String>) -> Self {
        MapInstance {
            map: map.into(),
            instance: instance.into(),
        }
    }

    /// `<map>/<instance>`, after checking the instance key.
    pub fn physical_name(&self) -> Result<String> {
        instance_physical_name(&self.map, &self.instance)
    }
}

/// What one call of an RPC locks and loads beyond its definition's fixed locks and loads,
/// as its [`RpcPlanner`] derives it from the call's input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RpcPlan {
    /// Map instances the call locks.
    pub locks: Vec<MapInstance>,
    /// Map instances the call loads into its snapshot.
    pub loads: Vec<MapInstance>,
}

/// How an RPC plans a call from its input when the caller names no locks or loads of its
/// own ([`RpcDefinition::planned_by`]): the one place a flow type says which instances a
/// call of it needs (an app log's `<log>.current`, a directory's partition), so no client
/// or binding derives them again. A bad input fails the call with the typed error the
/// planner returns, before anything is read.
///
/// ```
/// use attrflow::definition::{MapInstance, RpcPlan, RpcPlanner};
/// use serde_json::{json, Value};
/// fn plan(input: &Value) -> attrflow::Result<RpcPlan> {
///     let key = input.as_str().unwrap_or("current");
///     Ok(RpcPlan { locks: vec![], loads: vec![MapInstance::new("chunks", key)] })
/// }
/// let planner = RpcPlanner::loading(plan);
/// assert!(!planner.locks());
/// assert_eq!(planner.plan(&json!("x")).unwrap().loads, [MapInstance::new("chunks", "x")]);
/// ```
#[derive(Clone, Copy)]
pub struct RpcPlanner {
    plan: fn(&Value) -> Result<RpcPlan>,
    locks: bool,
}

impl RpcPlanner {
    /// A planner whose plans may lock: its calls count as calls that take locks (they run
    /// as members of a commit group and batch; see [`crate::Runtime::batches`]).
    pub const fn locking(plan: fn(&Value) -> Result<RpcPlan>) -> Self {
        RpcPlanner { plan, locks: true }
    }

    /// A planner whose plans only load: a call it plans stays lock-free (a read-only one
    /// may run in place, [`crate::Runtime::reads_in_place`]); a plan naming a lock is
    /// refused as a storage error, a fault of the definition.
    pub const fn loading(plan: fn(&Value) -> Result<RpcPlan>) -> Self {
        RpcPlanner { plan, locks: false }
    }

    /// Whether the plans may lock.
    pub fn locks(&self) -> bool {
        self.locks
    }

    /// The plan of a call with `input`.
    pub fn plan(&self, input: &Value) -> Result<RpcPlan> {
        let plan = (self.plan)(input)?;
        if !self.locks && !plan.locks.is_empty() {
            return Err(Error::storage(
                "a loading planner planned a lock; declare it RpcPlanner::locking",
            ));
        }
        Ok(plan)
    }
}

impl fmt::Debug for RpcPlanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcPlanner")
            .field("locks", &self.locks)
            .finish_non_exhaustive()
    }
}

/// One RPC of a flow type: its name, fixed locks and loads, how it plans a call's own
/// locks and loads, and its handler.
#[derive(Clone)]
pub struct RpcDefinition {
    name: String,
    locks: Vec<LockTarget>,
    loads: Vec<MapInstance>,
    map_loads: Vec<String>,
    planner: Option<RpcPlanner>,
    transactional: bool,
    read_only: bool,
    handler: RpcHandler,
}

impl fmt::Debug for RpcDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcDefinition")
            .field("name", &self.name)
            .field("locks", &self.locks)
            .field("loads", &self.loads)
            .field("map_loads", &self.map_loads)
            .field("planner", &self.planner)
            .field("transactional", &self.transactional)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

impl RpcDefinition {
    /// An RPC with no locks or loads; add them with the builder methods. The handler
    /// returns its output as a JSON value.
    pub fn new(
        name: impl Into<String>,
        handler: impl Fn(&mut RpcContext<'_>, Value) -> Result<Value> + Send + Sync + 'static,
    ) -> Self {
        Self::new_with_output(name, move |ctx, input| {
            handler(ctx, input).map(RpcOutput::Value)
        })
    }

    /// An RPC whose handler returns an [`RpcOutput`]: typically its output written once as
    /// JSON text from typed data ([`RpcOutput::encode`]), which spares every caller a tree
    /// of values; otherwise as [`RpcDefinition::new`].
    ///
    /// ```
    /// use attrflow::{RpcDefinition, RpcOutput};
    /// #[derive(serde::Serialize)]
    /// struct Greeting {
    ///     text: String,
    /// }
    /// let greet = RpcDefinition::new_with_output("Greet", |_ctx, input| {
    ///     let name = input.as_str().unwrap_or("world");
    ///     let text = format!("hello, {name}");
    ///     RpcOutput::encode("greeting", &Greeting { text })
    /// });
    /// assert_eq!(greet.name(), "Greet");
    /// ```
    pub fn new_with_output(
        name: impl Into<String>,
        handler: impl Fn(&mut RpcContext<'_>, Value) -> Result<RpcOutput> + Send + Sync + 'static,
    ) -> Self {
        RpcDefinition {
            name: name.into(),
            locks: Vec::new(),
            loads: Vec::new(),
            map_loads: Vec::new(),
            planner: None,
            transactional: false,
            read_only: false,
            handler: Arc::new(handler),
        }
    }

    /// Locks a singleton Attribute for every call.
    pub fn lock_attribute(mut self, attribute: impl Into<String>) -> Self {
        self.locks.push(LockTarget::Attribute(attribute.into()));
        self
    }

    /// Locks one map instance for every call.
    pub fn lock_map_instance(
        mut self,
        map: impl Into<String>,
        instance: impl Into<String>,
    ) -> Self {
        self.locks
            .push(LockTarget::MapInstance(MapInstance::new(map, instance)));
        self
    }

    /// Loads one map instance into the snapshot of every call.
    pub fn load_map_instance(
        mut self,
        map: impl Into<String>,
        instance: impl Into<String>,
    ) -> Self {
        self.loads.push(MapInstance::new(map, instance));
        self
    }

    /// Loads every instance of the AttributeMap `map` into the snapshot of every call, as
    /// Dex's whole-map load (`@rpc(load_attribute_maps=...)`, selector `<map>/`) does: the
    /// handler reads any instance and enumerates the map's keys. Loading does not lock; a
    /// lock-free call whose map gained, lost or changed an instance before its writes
    /// commit fails with a retryable [`Error::LockConflict`], as for any value it read.
    pub fn load_map(mut self, map: impl Into<String>) -> Self {
        self.map_loads.push(map.into());
        self
    }

    /// Plans each call by `planner` from its input: a call given no per-call locks or loads
    /// (`RpcInvokeOptions` with none) takes and loads what the plan names, besides the
    /// fixed ones. A call that names any of its own (as Dex code passes them) takes exactly
    /// those instead: explicit options win.
    pub fn planned_by(mut self, planner: RpcPlanner) -> Self {
        self.planner = Some(planner);
        self
    }

    /// How the RPC plans a call's own locks and loads, when it does
    /// ([`RpcDefinition::planned_by`]).
    pub fn planner(&self) -> Option<&RpcPlanner> {
        self.planner.as_ref()
    }

    /// Runs every call isolated from other writers even when it takes no locks.
    pub fn transactional(mut self) -> Self {
        self.transactional = true;
        self
    }

    /// Declares that the handler only reads: a call that stages a write fails with
    /// [`Error::HandlerFailure`] and stores nothing. A read-only call that takes no locks
    /// waits for no writer, so a binding may run it on a thread that must not wait
    /// ([`Runtime::reads_in_place`](crate::Runtime::reads_in_place)).
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The RPC's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The locks every call takes.
    pub fn locks(&self) -> &[LockTarget] {
        &self.locks
    }

    /// The map instances every call loads.
    pub fn loads(&self) -> &[MapInstance] {
        &self.loads
    }

    /// The AttributeMaps every call loads whole.
    pub fn map_loads(&self) -> &[String] {
        &self.map_loads
    }

    /// Whether calls are isolated from other writers even without locks.
    pub fn is_transactional(&self) -> bool {
        self.transactional
    }

    /// Whether the handler was declared to only read ([`RpcDefinition::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub(crate) fn handler(&self) -> &RpcHandler {
        &self.handler
    }
}

/// A check of the values a start would write (the type's defaults overridden by the start's
/// options, by physical name), run before anything is written: a built-in flow type refuses
/// values that would leave the data its RPCs keep whole broken.
pub type StartCheck = fn(&BTreeMap<String, Value>) -> Result<()>;

/// A flow type: its Attributes, AttributeMaps, default initial values and RPCs.
#[derive(Debug, Clone)]
pub struct FlowDefinition {
    flow_type: String,
    attributes: BTreeSet<String>,
    maps: BTreeSet<String>,
    defaults: BTreeMap<String, Value>,
    start_check: Option<StartCheck>,
    written_by_rpcs_only: bool,
    rpcs: BTreeMap<String, RpcDefinition>,
}

impl FlowDefinition {
    /// Starts a definition of the flow type `flow_type`.
    pub fn builder(flow_type: impl Into<String>) -> FlowDefinitionBuilder {
        FlowDefinitionBuilder {
            flow_type: flow_type.into(),
            attributes: Vec::new(),
            maps: Vec::new(),
            defaults: Vec::new(),
            start_check: None,
            written_by_rpcs_only: false,
            rpcs: Vec::new(),
        }
    }

    /// The flow type's name.
    pub fn flow_type(&self) -> &str {
        &self.flow_type
    }

    /// Names of the singleton Attributes, sorted.
    pub fn attributes(&self) -> impl Iterator<Item = &str> {
        self.attributes.iter().map(String::as_str)
    }

    /// Whether `name` is a singleton Attribute of this flow type.
    pub fn has_attribute(&self, name: &str) -> bool {
        self.attributes.contains(name)
    }

    /// Whether `name` is an AttributeMap of this flow type.
    pub fn has_map(&self, name: &str) -> bool {
        self.maps.contains(name)
    }

    /// Values written when a flow starts, unless its start options give others, by physical
    /// name.
    pub fn defaults(&self) -> &BTreeMap<String, Value> {
        &self.defaults
    }

    /// Runs the type's [`StartCheck`], if it has one, on the values a start would write.
    pub fn check_start(&self, values: &BTreeMap<String, Value>) -> Result<()> {
        self.start_check.map_or(Ok(()), |check| check(values))
    }

    /// Whether this type's values are written only by its own RPCs, so that
    /// [`crate::Runtime::set_attribute`] refuses to write them (see
    /// [`FlowDefinitionBuilder::written_by_rpcs_only`]).
    pub fn is_written_by_rpcs_only(&self) -> bool {
        self.written_by_rpcs_only
    }

    /// The RPC called `name`.
    pub fn rpc(&self, name: &str) -> Result<&RpcDefinition> {
        self.rpcs.get(name).ok_or_else(|| {
            Error::invalid_input(format!(
                "flow type {:?} has no RPC {name:?}",
                self.flow_type
            ))
        })
    }

    /// The RPCs, by name.
    pub fn rpcs(&self) -> impl Iterator<Item = &RpcDefinition> {
        self.rpcs.values()
    }

    /// The physical name of `target`, after checking that it names something declared.
    pub fn lock_physical_name(&self, target: &LockTarget) -> Result<String> {
        match target {
            LockTarget::Attribute(name) => {
                if self.has_attribute(name) {
                    Ok(name.clone())
                } else if self.has_map(name) {
                    Err(Error::invalid_input(format!(
                        "lock on AttributeMap {name:?} needs an instance"
                    )))
                } else {
                    Err(self.unknown(name))
                }
            }
            LockTarget::MapInstance(instance) => self.instance_physical_name(instance),
        }
    }

    /// The physical name of a map instance, after checking that the map is declared.
    pub fn instance_physical_name(&self, instance: &MapInstance) -> Result<String> {
        if self.has_map(&instance.map) {
            instance.physical_name()
        } else if self.has_attribute(&instance.map) {
            Err(Error::invalid_input(format!(
                "{:?} is a singleton Attribute, not an AttributeMap; it takes no instance",
                instance.map
            )))
        } else {
            Err(self.unknown(&instance.map))
        }
    }

    /// The selector of a whole-map load of `map`, `<map>/` (as Dex writes it), after
    /// checking that the map is declared.
    pub fn map_selector(&self, map: &str) -> Result<String> {
        if self.has_map(map) {
            Ok(format!("{map}/"))
        } else if self.has_attribute(map) {
            Err(Error::invalid_input(format!(
                "{map:?} is a singleton Attribute, not an AttributeMap; only an AttributeMap \
                 loads whole"
            )))
        } else {
            Err(self.unknown(map))
        }
    }

    /// Resolves a physical name written by start options or a handler to what it names.
    pub(crate) fn check_physical_name(&self, physical: &str) -> Result<()> {
        match physical.split_once('/') {
            None => self.lock_physical_name(&LockTarget::Attribute(physical.to_owned()))?,
            Some((map, instance)) => {
                self.instance_physical_name(&MapInstance::new(map, instance))?
            }
        };
        Ok(())
    }

    fn unknown(&self, name: &str) -> Error {
        Error::invalid_input(format!(
            "flow type {:?} declares no Attribute or AttributeMap {name:?}",
            self.flow_type
        ))
    }
}

/// Builds a [`FlowDefinition`]; [`FlowDefinitionBuilder::build`] checks it.
#[derive(Debug)]
pub struct FlowDefinitionBuilder {
    flow_type: String,
    attributes: Vec<String>,
    maps: Vec<String>,
    defaults: Vec<(String, Value)>,
    start_check: Option<StartCheck>,
    written_by_rpcs_only: bool,
    rpcs: Vec<RpcDefinition>,
}

impl FlowDefinitionBuilder {
    /// Checks the values every start of this type would write before it writes them (see
    /// [`StartCheck`]).
    pub fn check_start(mut self, check: StartCheck) -> Self {
        self.start_check = Some(check);
        self
    }

    /// Lets only this type's own RPCs write its values: [`crate::Runtime::set_attribute`]
    /// (a write from outside, as Dex's `client.set_attribute`) refuses every one of them. A
    /// type whose RPCs keep data whole across several values (a chunked log's state and
    /// chunks, a partitioned map's buckets and their limits) declares this, since one value
    /// written on its own could break what they keep.
    pub fn written_by_rpcs_only(mut self) -> Self {
        self.written_by_rpcs_only = true;
        self
    }

    /// Declares a singleton Attribute.
    pub fn attribute(mut self, name: impl Into<String>) -> Self {
        self.attributes.push(name.into());
        self
    }

    /// Declares an AttributeMap.
    pub fn map(mut self, name: impl Into<String>) -> Self {
        self.maps.push(name.into());
        self
    }

    /// A value written under `physical_name` when a flow starts without one of its own.
    pub fn default_value(mut self, physical_name: impl Into<String>, value: Value) -> Self {
        self.defaults.push((physical_name.into(), value));
        self
    }

    /// Adds an RPC.
    pub fn rpc(mut self, rpc: RpcDefinition) -> Self {
        self.rpcs.push(rpc);
        self
    }

    /// Checks every name, lock and load and returns the definition.
    pub fn build(self) -> Result<FlowDefinition> {
        validate_definition_name("flow type", &self.flow_type)?;
        let mut declared = BTreeSet::new();
        for name in self.attributes.iter().chain(&self.maps) {
            validate_definition_name("Attribute", name)?;
            if !declared.insert(name.clone()) {
                return Err(Error::invalid_input(format!(
                    "flow type {:?} declares {name:?} twice",
                    self.flow_type
                )));
            }
        }
        let mut definition = FlowDefinition {
            flow_type: self.flow_type,
            attributes: self.attributes.into_iter().collect(),
            maps: self.maps.into_iter().collect(),
            defaults: BTreeMap::new(),
            start_check: self.start_check,
            written_by_rpcs_only: self.written_by_rpcs_only,
            rpcs: BTreeMap::new(),
        };
        for (name, value) in self.defaults {
            definition.check_physical_name(&name)?;
            definition.defaults.insert(name, value);
        }
        for rpc in self.rpcs {
            validate_definition_name("RPC", &rpc.name)?;
            check_unique(
                &definition,
                &rpc,
                "lock",
                rpc.locks.iter().map(|l| definition.lock_physical_name(l)),
            )?;
            check_unique(
                &definition,
                &rpc,
                "load",
                rpc.loads
                    .iter()
                    .map(|l| definition.instance_physical_name(l))
                    .chain(rpc.map_loads.iter().map(|m| definition.map_selector(m))),
            )?;
            if definition.rpcs.contains_key(&rpc.name) {
                return Err(Error::invalid_input(format!(
                    "flow type {:?} declares RPC {:?} twice",
                    definition.flow_type, rpc.name
                )));
            }
            definition.rpcs.insert(rpc.name.clone(), rpc);
        }
        Ok(definition)
    }
}

fn check_unique(
    definition: &FlowDefinition,
    rpc: &RpcDefinition,
    what: &str,
    names: impl Iterator<Item = Result<String>>,
) -> Result<()> {
    let mut seen = BTreeSet::new();
    for name in names {
        let name = name?;
        if !seen.insert(name.clone()) {
            return Err(Error::invalid_input(format!(
                "RPC {:?} of flow type {:?} declares the {what} {name:?} twice",
                rpc.name, definition.flow_type
            )));
        }
    }
    Ok(())
}

impl DeclaredNames for FlowDefinition {
    fn flow_type(&self) -> &str {
        FlowDefinition::flow_type(self)
    }

    fn has_attribute(&self, name: &str) -> bool {
        FlowDefinition::has_attribute(self, name)
    }

    fn has_map(&self, name: &str) -> bool {
        FlowDefinition::has_map(self, name)
    }

    fn map_instance_name(&self, map: &str, instance: &str) -> Result<String> {
        self.instance_physical_name(&MapInstance::new(map, instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn noop() -> impl Fn(&mut RpcContext<'_>, Value) -> Result<Value> + Send + Sync {
        |_, _| Ok(Value::Null)
    }

    #[test]
    fn a_valid_definition_builds() {
        let def = FlowDefinition::builder("F")
            .attribute("state")
            .map("chunks")
            .default_value("chunks/current", json!({}))
            .rpc(
                RpcDefinition::new("Append", noop())
                    .lock_attribute("state")
                    .lock_map_instance("chunks", "current")
                    .load_map_instance("chunks", "current"),
            )
            .build()
            .unwrap();
        assert!(def.has_attribute("state"));
        assert!(def.has_map("chunks"));
        assert_eq!(def.rpc("Append").unwrap().locks().len(), 2);
        assert!(def.rpc("Missing").is_err());
    }

    #[test]
    fn bad_definitions_fail_with_a_clear_message() {
        let cases: Vec<(FlowDefinitionBuilder, &str)> = vec![
            (
                FlowDefinition::builder("F").attribute("a").map("a"),
                r#"flow type "F" declares "a" twice"#,
            ),
            (
                FlowDefinition::builder("F").attribute("a/b"),
                r#"Attribute name "a/b" must not contain '/'"#,
            ),
            (
                FlowDefinition::builder("F")
                    .rpc(RpcDefinition::new("R", noop()).lock_attribute("x")),
                r#"flow type "F" declares no Attribute or AttributeMap "x""#,
            ),
            (
                FlowDefinition::builder("F")
                    .map("m")
                    .rpc(RpcDefinition::new("R", noop()).lock_attribute("m")),
                r#"lock on AttributeMap "m" needs an instance"#,
            ),
            (
                FlowDefinition::builder("F")
                    .attribute("a")
                    .rpc(RpcDefinition::new("R", noop()).lock_map_instance("a", "i")),
                r#""a" is a singleton Attribute, not an AttributeMap; it takes no instance"#,
            ),
            (
                FlowDefinition::builder("F").map("m").rpc(
                    RpcDefinition::new("R", noop())
                        .load_map_instance("m", "i")
                        .load_map_instance("m", "i"),
                ),
                r#"RPC "R" of flow type "F" declares the load "m/i" twice"#,
            ),
            (
                FlowDefinition::builder("F")
                    .rpc(RpcDefinition::new("R", noop()))
                    .rpc(RpcDefinition::new("R", noop())),
                r#"flow type "F" declares RPC "R" twice"#,
            ),
        ];
        for (builder, message) in cases {
            let err = builder.build().unwrap_err();
            assert_eq!(err, Error::InvalidInput(message.into()));
        }
    }
}
