//! The runtime: a registry of flow types over one store, and the RPC invocation path
//! (lock → load → handler → commit).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::sync::RwLock;
use serde_json::Value;

use crate::commits::CommitSignal;
use crate::context::RpcContext;
use crate::definition::{FlowDefinition, LockTarget, MapInstance, RpcDefinition, RpcPlanner};
use crate::error::{Error, Result};
use crate::lifecycle::{
    ClosedRun, FlowStatus, FlowSummary, ReplacedRun, RunState, StopType, RUN_STATE_NAME,
};
use crate::names::{validate_definition_name, validate_flow_id};
use crate::options::{InitialTarget, RpcInvokeOptions, StartFlowOptions};
use crate::output::RpcOutput;
use crate::retry::RetryPolicy;
use crate::store::{FlowRecord, Isolation, SnapshotReader, StartOutcome, Store, Write};

/// How a typed client reads through an RPC: [`Runtime::invoke_rpc_output`], or
/// [`Runtime::inspect_rpc_output`] for an inspection.
pub(crate) type ReadRpc =
    fn(&Runtime, &str, &str, &str, Value, &RpcInvokeOptions) -> Result<RpcOutput>;

/// The flow ID [`Runtime::health_check`] looks up: any ID would do, since only the read
/// itself matters.
const HEALTH_CHECK_FLOW_ID: &str = "attrflow-health-check";

/// Flow types bound to a store. Cheap to share between threads: every method takes `&self`.
///
/// ```
/// use attrflow::flows::chunked_subscriber::{self, SubscriberArchive};
/// use attrflow::Runtime;
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("attrflow.db");
/// let runtime = Runtime::open(path.to_str().unwrap())?;
/// let archive = SubscriberArchive::new(&runtime, chunked_subscriber::FLOW_ID);
/// archive.start()?;
/// let subscriber = archive.register("subscriber-001", "subscriber-001@example.com")?;
/// assert_eq!(subscriber.sequence, 1);
/// let page = archive.page("current")?;
/// assert_eq!(page.subscribers, vec![subscriber]);
/// # Ok::<(), attrflow::Error>(())
/// ```
pub struct Runtime {
    store: Arc<dyn Store>,
    flows: RwLock<HashMap<String, Arc<FlowDefinition>>>,
    /// The process that opened the store; see [`Runtime::check_process`].
    process_id: u32,
    /// Raised by every call of this runtime that committed writes.
    commits: CommitSignal,
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // A fork()ed child must not close the connections it inherited: they are its
        // parent's. Keeping one more reference leaves them open until the child exits.
        if self.process_id != std::process::id() {
            std::mem::forget(Arc::clone(&self.store));
        }
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("store", &self.store.location())
            .field("flow_types", &self.flows.read().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Runtime {
    /// A runtime over `store` with no flow types registered: the application registers
    /// each one itself (a flow type of its own under a built-in type's name, say).
    pub fn without_built_ins(store: Arc<dyn Store>) -> Self {
        Runtime {
            store,
            flows: RwLock::new(HashMap::new()),
            process_id: std::process::id(),
            commits: CommitSignal::default(),
        }
    }

    /// Fails unless this is the process that opened the runtime. A child made by `fork()`
    /// inherits the store's connections and the locks its parent's calls held at that
    /// moment (held forever in the child, where the threads holding them do not exist), so
    /// it must open its own runtime; every call in it fails with this error instead.
    pub fn check_process(&self) -> Result<()> {
        let here = std::process::id();
        if here == self.process_id {
            return Ok(());
        }
        Err(Error::storage(format!(
            "store {} was opened in process {} and is used in process {here}, a fork() of \
             it: connections and locks cannot cross fork(); open a new client in the child",
            self.store.location(),
            self.process_id
        )))
    }

    /// The store this runtime runs on.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The commits of this runtime's calls, for readers that wait for new records.
    pub fn commits(&self) -> &CommitSignal {
        &self.commits
    }

    /// Registers a flow type. A second definition of the same type is rejected.
    pub fn register(&self, definition: FlowDefinition) -> Result<()> {
        let mut flows = self.flows.write();
        if flows.contains_key(definition.flow_type()) {
            return Err(Error::invalid_input(format!(
                "flow type {:?} is already registered",
                definition.flow_type()
            )));
        }
        flows.insert(definition.flow_type().to_owned(), Arc::new(definition));
        Ok(())
    }

    /// The definition of a registered flow type.
    pub fn definition(&self, flow_type: &str) -> Result<Arc<FlowDefinition>> {
        self.flows.read().get(flow_type).cloned().ok_or_else(|| {
            Error::invalid_input(format!("flow type {flow_type:?} is not registered"))
        })
    }

    /// Starts a flow of `flow_type` under `flow_id` and returns its run ID.
    ///
    /// The flow's initial values (its type's defaults, overridden by `options`) are written
    /// in the same transaction that creates it. When a flow with this ID exists, the
    /// options' [`crate::IdReusePolicy`] decides, as Dex's does: a new run (of this flow
    /// type, whatever the previous run's) replaces the previous one, whose values are
    /// removed in the same transaction, or nothing is written and the start fails with
    /// [`Error::FlowAlreadyStarted`] (saying whether the existing run is running or how it
    /// was stopped); with `ignore_already_started` a running flow of the same type returns
    /// its run ID instead. attrflow keeps no request IDs, so unlike Dex it never returns
    /// the run ID of a stopped flow. How a new run meets RPCs running at that moment is in
    /// [`crate::lifecycle`].
    pub fn start_flow(
        &self,
        flow_type: &str,
        flow_id: &str,
        options: &StartFlowOptions,
    ) -> Result<String> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let definition = self.definition(flow_type)?;
        let values = initial_values(&definition, options)?;
        let run_id = uuid::Uuid::new_v4().to_string();
        let initial: Vec<(String, String)> = values
            .iter()
            .map(|(name, value)| (name.clone(), value.to_string()))
            .collect();
        for (name, json) in &initial {
            crate::limits::check_stored_value(name, json)?;
        }
        definition.check_start(&values)?;
        let record = FlowRecord {
            flow_id: flow_id.to_owned(),
            flow_type: flow_type.to_owned(),
            run_id,
        };
        let policy = options.reuse_policy();
        // Where the existing run stood when the policy kept it.
        let kept = crate::sync::Mutex::new(FlowStatus::Running);
        // A new run under a used ID records that it runs and how the run it replaces
        // closed (crate::lifecycle).
        let replace = |existing: &FlowRecord, run_state: Option<&str>| {
            let closed = ClosedRun::parse(flow_id, run_state)?;
            let status = closed.as_ref().map_or(FlowStatus::Running, |c| c.status);
            *kept.lock() = status;
            if !policy.starts_new_run(status) {
                return Ok(None);
            }
            let replaced = ReplacedRun {
                run_id: existing.run_id.clone(),
                closed: closed.unwrap_or_else(ClosedRun::replaced_now),
            };
            let running = crate::lifecycle::running_state(&record.run_id, &replaced)?;
            Ok(Some(vec![(RUN_STATE_NAME.to_owned(), running)]))
        };
        // A conflict with a call running on the flow (PostgreSQL) is retried.
        let outcome =
            RetryPolicy::DEFAULT.run(|| self.store.start_flow(&record, &initial, &replace));
        match outcome.inspect_err(crate::metrics::count_lock_conflict)? {
            StartOutcome::Started => Ok(record.run_id),
            StartOutcome::Replaced(_) => {
                self.commits.notify();
                Ok(record.run_id)
            }
            StartOutcome::AlreadyExists(existing) => {
                let status = *kept.lock();
                if status == FlowStatus::Running
                    && existing.flow_type == flow_type
                    && options.ignores_already_started()
                {
                    return Ok(existing.run_id);
                }
                Err(Error::FlowAlreadyStarted {
                    flow_id: existing.flow_id,
                    run_id: existing.run_id,
                    status,
                })
            }
        }
    }

    /// Invokes the RPC `rpc_name` of `flow_type` on the flow `flow_id`.
    ///
    /// Takes the definition's locks plus `options`' (fail-fast), loads the definition's map
    /// instances plus `options`', runs the handler on that snapshot and commits all of its
    /// writes atomically, or none when it fails. Returns the handler's output as a JSON
    /// value. Each call is counted and traced ([`crate::metrics`]).
    ///
    /// When `options` name no lock or load and the RPC plans its calls
    /// ([`RpcDefinition::planned_by`], as every built-in flow's RPCs do), the call takes and
    /// loads what the plan derives from `input` instead; `options`' run still applies.
    pub fn invoke_rpc(
        &self,
        flow_type: &str,
        flow_id: &str,
        rpc_name: &str,
        input: Value,
        options: &RpcInvokeOptions,
    ) -> Result<Value> {
        self.invoke_rpc_output(flow_type, flow_id, rpc_name, input, options)?
            .into_value()
    }

    /// Invokes an RPC as [`Runtime::invoke_rpc`] does and returns its output in the form
    /// the handler made it ([`RpcOutput`]): a caller that decodes it into its own types or
    /// hands it on as text reads it without a tree of values in between.
    pub fn invoke_rpc_output(
        &self,
        flow_type: &str,
        flow_id: &str,
        rpc_name: &str,
        input: Value,
        options: &RpcInvokeOptions,
    ) -> Result<RpcOutput> {
        crate::metrics::observe_rpc(flow_type, flow_id, rpc_name, || {
            let (definition, plan) = self.prepare(flow_type, flow_id, rpc_name, &input, options)?;
            let (output, wrote) = self.run_planned(flow_id, &definition, &plan, rpc_name, input)?;
            // run_planned returns once the writes are committed.
            if wrote {
                self.commits.notify();
            }
            Ok(output)
        })
    }

    /// Runs one prepared call through the store: its output, and whether it wrote.
    fn run_planned(
        &self,
        flow_id: &str,
        definition: &FlowDefinition,
        plan: &CallPlan,
        rpc_name: &str,
        input: Value,
    ) -> Result<(RpcOutput, bool)> {
        let rpc = definition.rpc(rpc_name)?;
        let mut input = Some(input);
        let mut output = None;
        let mut wrote = false;
        self.store.run_rpc(
            flow_id,
            &plan.isolation,
            &mut |reader: &mut dyn SnapshotReader| {
                let input = input.take().unwrap_or(Value::Null);
                let (value, writes) = plan.run(definition, rpc, reader, input)?;
                output = Some(value);
                wrote = !writes.is_empty();
                Ok(writes)
            },
        )?;
        let output = output.ok_or_else(|| Error::storage("the store did not run the RPC body"))?;
        Ok((output, wrote))
    }

    /// Runs the RPC `rpc_name` as a read of committed state, whatever the flow's run state:
    /// for tools that inspect a flow, a stopped one included, which its RPCs no longer
    /// serve (`attrflow page` and `export` read a stopped log this way). It runs lock-free
    /// on one snapshot, as a lock-free RPC does, without the RPC's locks; anything the
    /// handler stages is refused with invalid input naming it, so nothing is ever written.
    pub fn inspect_rpc_output(
        &self,
        flow_type: &str,
        flow_id: &str,
        rpc_name: &str,
        input: Value,
        options: &RpcInvokeOptions,
    ) -> Result<RpcOutput> {
        let (definition, mut plan) = self.prepare(flow_type, flow_id, rpc_name, &input, options)?;
        plan.inspect();
        let (output, _) = self.run_planned(flow_id, &definition, &plan, rpc_name, input)?;
        Ok(output)
    }

    /// The stored JSON text of one value of the flow `flow_id` (a singleton Attribute, or
    /// one instance of an AttributeMap), or `None` when it holds none, read lock-free from
    /// committed state as a lock-free RPC reads its snapshot.
    ///
    /// When the flow's type is registered with this runtime, `target` must be something it
    /// declares, checked as a lock target is; otherwise only the names' own rules are
    /// checked, so a tool that knows a flow's names but not its handlers can read it. Fails
    /// with [`Error::FlowNotFound`] for an unknown flow ID and with [`Error::RunNotCurrent`]
    /// when `run_id` is given and is not the flow's run.
    pub fn get_attribute(
        &self,
        flow_id: &str,
        target: &LockTarget,
        run_id: Option<&str>,
    ) -> Result<Option<String>> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let ahead = physical_name_by_rules(target).ok();
        let (_, value, _) = self.read_committed_value(flow_id, ahead, |flow| {
            check_run_id(flow, run_id)?;
            self.readable_name(flow, target)
        })?;
        Ok(value)
    }

    /// Whether [`Runtime::get_attribute`] waits for nothing but its own read: the store
    /// reads without waiting for writers ([`Store::reads_without_waiting`]), so a caller
    /// that must not wait (an event loop's thread) may read in place.
    pub fn reads_values_in_place(&self) -> bool {
        self.store().reads_without_waiting()
    }

    /// The physical name of `target` in `flow`, checked against what the flow's type
    /// declares when this runtime knows the type, and by the names' own rules otherwise.
    fn readable_name(&self, flow: &FlowRecord, target: &LockTarget) -> Result<String> {
        match self.flows.read().get(&flow.flow_type) {
            Some(definition) => match target {
                LockTarget::Attribute(name) if definition.has_map(name) => {
                    Err(Error::invalid_input(format!(
                        "AttributeMap {name:?} is read one instance at a time; \
                         name the instance"
                    )))
                }
                target => definition.lock_physical_name(target),
            },
            None => physical_name_by_rules(target),
        }
    }

    /// Waits until the committed value of `target` of the flow `flow_id` equals `expected`,
    /// as Dex's `wait_for_attribute_equal` does, for at most `timeout` (up to
    /// [`crate::limits::MAX_TAIL_TIMEOUT`]): `true` once it does (at once when it already
    /// does), `false` when the time runs out first. `expected` is the JSON text of a string,
    /// a boolean or a number; numbers compare by value (`1` equals `1.0`), and an unset value
    /// equals nothing.
    ///
    /// Each look is one lock-free read of committed state, as [`Runtime::get_attribute`]
    /// reads, with its checks of `target`. Between looks it waits for a commit as a tail
    /// does ([`crate::chunked_log::tail::wait_for_records`]): a commit of this runtime wakes
    /// it at once, one of another runtime or process after a short pause. A flow stopped
    /// before the value is seen is [`Error::FlowNotActive`], a flow never started
    /// [`Error::FlowNotFound`].
    pub fn wait_for_attribute_equal(
        &self,
        flow_id: &str,
        target: &LockTarget,
        expected: &str,
        timeout: std::time::Duration,
    ) -> Result<bool> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        crate::chunked_log::tail::validate_tail_timeout(timeout)?;
        let expected = crate::json::parse(expected, || "the expected value".to_owned())?;
        if !(expected.is_string() || expected.is_boolean() || expected.is_number()) {
            return Err(Error::invalid_input(format!(
                "wait_for_attribute_equal supports only string, boolean, or number values, \
                 not {expected}"
            )));
        }
        crate::chunked_log::tail::wait_for_records(
            &self.commits,
            timeout,
            || self.store.watch_changes(),
            || {
                let (_, value, closed) = self.read_committed_value(
                    flow_id,
                    physical_name_by_rules(target).ok(),
                    |flow| self.readable_name(flow, target),
                )?;
                if let Some(closed) = closed {
                    return Err(closed.not_active(flow_id));
                }
                let equal = match value {
                    Some(json) => {
                        json_equal(&crate::json::parse(&json, || json.clone())?, &expected)
                    }
                    None => false,
                };
                Ok((equal, equal))
            },
        )
    }

    /// Writes one value of the flow `flow_id` from outside its RPCs, as Dex's
    /// `client.set_attribute` does: `target` (a singleton Attribute, or one instance of an
    /// AttributeMap) gets `json`, the value's JSON text, checked as an RPC's input is;
    /// `null` deletes the value, so it reads as unset.
    ///
    /// The write is one RPC of its own: it takes the value's lock (so it never interleaves
    /// with an RPC that locks it), commits as a member of a commit group and returns once
    /// that commit is durable. An RPC holding the lock is waited for by retrying as
    /// [`RetryPolicy::DEFAULT`] retries, and a lock-free RPC that read the value before the
    /// write commits fails with a retryable lock conflict instead of committing over it.
    ///
    /// The flow's type must be registered with this runtime, declare `target` and accept
    /// writes from outside its RPCs (every built-in type refuses them, see
    /// [`crate::definition::FlowDefinitionBuilder::written_by_rpcs_only`]); each refusal
    /// is invalid input naming what was wrong, as is a value over the stored-value limit; a
    /// `run_id` that is not the flow's run is [`Error::RunNotCurrent`]. A flow never started
    /// is [`Error::FlowNotFound`], a stopped one [`Error::FlowNotActive`]; nothing is
    /// written in any of these cases.
    pub fn set_attribute(
        &self,
        flow_id: &str,
        target: &LockTarget,
        json: &str,
        run_id: Option<&str>,
    ) -> Result<()> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let name = physical_name_by_rules(target)?;
        // Stored compact, as every value is, whatever spacing the caller's text has.
        let value = match crate::json::parse(json, || format!("the value for {name:?}"))? {
            Value::Null => None,
            value => Some(value.to_string()),
        };
        if let Some(json) = &value {
            crate::limits::check_stored_value(&name, json)?;
        }
        let run_state = [RUN_STATE_NAME.to_owned()];
        let isolation = Isolation::Exclusive {
            locks: vec![name.clone()],
            reads: run_state.to_vec(),
            maps: Vec::new(),
        };
        RetryPolicy::DEFAULT
            .run(|| {
                self.store.run_rpc(
                    flow_id,
                    &isolation,
                    &mut |reader: &mut dyn SnapshotReader| {
                        let flow = reader.flow().clone();
                        check_run_id(&flow, run_id)?;
                        if let Some(closed) = ClosedRun::find(flow_id, &reader.read(&run_state)?)? {
                            return Err(closed.not_active(flow_id));
                        }
                        self.check_outside_write(&flow, target)?;
                        Ok(vec![(name.clone(), value.clone())])
                    },
                )
            })
            .inspect_err(crate::metrics::count_lock_conflict)?;
        self.commits.notify();
        Ok(())
    }

    /// Fails unless the flow's type is registered here, declares `target` and lets it be
    /// written from outside its RPCs ([`Runtime::set_attribute`]).
    fn check_outside_write(&self, flow: &FlowRecord, target: &LockTarget) -> Result<()> {
        let definition = self.flows.read().get(&flow.flow_type).cloned();
        let Some(definition) = definition else {
            return Err(Error::invalid_input(format!(
                "flow {:?} is of flow type {:?}, which is not registered here: register it \
                 before writing its values, so that they are checked against what it declares",
                flow.flow_id, flow.flow_type
            )));
        };
        if definition.is_written_by_rpcs_only() {
            return Err(Error::invalid_input(format!(
                "flow type {:?} keeps its values whole through its own RPCs, so its values \
                 are not written from outside them; call one of its RPCs instead",
                flow.flow_type
            )));
        }
        match target {
            LockTarget::Attribute(name) if definition.has_map(name) => {
                Err(Error::invalid_input(format!(
                    "AttributeMap {name:?} is written one instance at a time; name the instance"
                )))
            }
            target => definition.lock_physical_name(target).map(drop),
        }
    }

    /// Stops the flow `flow_id`, as Dex's `stop_flow` does: `stop` says which status its run
    /// ends with, and `reason`, if given, is kept with it. From then on every RPC on it fails
    /// with [`Error::FlowNotActive`], as does a second stop or a start under its ID; its
    /// values stay readable ([`Runtime::get_attribute`]). The stop commits as a member of a
    /// commit group, so an RPC of the same group that comes after it sees it, and one that
    /// committed before it keeps its writes. How it meets RPCs running at the same moment
    /// is in [`crate::lifecycle`].
    ///
    /// Fails with [`Error::FlowNotFound`] for a flow never started.
    pub fn stop_flow(&self, flow_id: &str, stop: StopType, reason: Option<&str>) -> Result<()> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let closed = ClosedRun::now(stop, reason);
        let json = closed.to_json()?;
        crate::limits::check_stored_value(RUN_STATE_NAME, &json)?;
        let run_state = [RUN_STATE_NAME.to_owned()];
        self.store.run_rpc(
            flow_id,
            &Isolation::Exclusive {
                locks: Vec::new(),
                reads: run_state.to_vec(),
                maps: Vec::new(),
            },
            &mut |reader: &mut dyn SnapshotReader| {
                if let Some(closed) = ClosedRun::find(flow_id, &reader.read(&run_state)?)? {
                    return Err(closed.not_active(flow_id));
                }
                Ok(vec![(RUN_STATE_NAME.to_owned(), Some(json.clone()))])
            },
        )?;
        self.commits.notify();
        Ok(())
    }

    /// Checks that the store answers, as Dex's `health_check` checks its service: one read
    /// of the store's table of flows (an SQLite file's, or a round trip to the PostgreSQL
    /// server). Fails with [`Error::Storage`] naming what is wrong when it does not (a
    /// server down, a deleted file's folder, a closed connection pool), and in a `fork()`ed
    /// child.
    pub fn health_check(&self) -> Result<()> {
        self.check_process()?;
        self.store.flow(HEALTH_CHECK_FLOW_ID).map(drop)
    }

    /// Where the flow `flow_id` stands: its run, type and status, when it started and, once
    /// stopped, how and when. Fails with [`Error::FlowNotFound`] for a flow never started.
    pub fn describe_flow(&self, flow_id: &str) -> Result<FlowSummary> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let (flow, state) = self.read_run(flow_id)?;
        self.summary(flow, state.closed())
    }

    /// Where `flow` stands, `closed` once its run was stopped: its record, with when it
    /// started read from the store.
    fn summary(&self, flow: FlowRecord, closed: Option<ClosedRun>) -> Result<FlowSummary> {
        let started_at_ms =
            self.store
                .started_at_ms(&flow.flow_id)?
                .ok_or_else(|| Error::FlowNotFound {
                    flow_id: flow.flow_id.clone(),
                })?;
        Ok(FlowSummary {
            flow_id: flow.flow_id,
            run_id: flow.run_id,
            flow_type: flow.flow_type,
            status: closed.as_ref().map_or(FlowStatus::Running, |c| c.status),
            started_at_ms,
            closed,
        })
    }

    /// Waits until the run of the flow `flow_id` is closed, as Dex's `wait_for_flow` waits
    /// for a flow to close, for at most `timeout` (up to
    /// [`crate::limits::MAX_TAIL_TIMEOUT`]): where the flow stands once its run is stopped
    /// (at once when it already is), `None` when the time runs out first. An attrflow run
    /// closes by [`Runtime::stop_flow`], or by a start that replaces it
    /// ([`crate::IdReusePolicy::TerminateIfRunning`]: terminated).
    ///
    /// The wait is for the run the flow has at its first look: a run that closes and is
    /// replaced between two looks is still reported, as the new run's state records it
    /// (its run ID, type and start as the first look read them). A flow whose run changed
    /// twice between two looks, or whose new run was stopped too, no longer records the
    /// waited run: that is [`Error::RunNotCurrent`], naming both runs. It waits as
    /// [`Runtime::wait_for_attribute_equal`] does, each look one lock-free read of the run
    /// state; a flow never started is [`Error::FlowNotFound`].
    pub fn wait_for_flow(
        &self,
        flow_id: &str,
        timeout: std::time::Duration,
    ) -> Result<Option<FlowSummary>> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        // The run waited for, and when it started, from the first look.
        let mut waited: Option<(FlowRecord, i64)> = None;
        let seen = crate::chunked_log::tail::wait_for_records(
            &self.commits,
            timeout,
            || self.store.watch_changes(),
            || {
                let (flow, state) = self.read_run(flow_id)?;
                let (run, started_at_ms) = match &waited {
                    Some(waited) => waited.clone(),
                    None => {
                        let started = self.summary(flow.clone(), None)?.started_at_ms;
                        waited.insert((flow.clone(), started)).clone()
                    }
                };
                let closed = match state {
                    RunState::Closed(closed) if flow.run_id == run.run_id => Some(closed),
                    RunState::Running { .. } if flow.run_id == run.run_id => None,
                    RunState::Running {
                        replaced: Some(replaced),
                    } if replaced.run_id == run.run_id => Some(replaced.closed),
                    _ => {
                        return Err(Error::RunNotCurrent {
                            flow_id: flow_id.to_owned(),
                            run_id: run.run_id,
                            current_run_id: flow.run_id,
                        })
                    }
                };
                let found = closed.is_some();
                Ok((closed.map(|closed| (run, started_at_ms, closed)), found))
            },
        )?;
        Ok(seen.map(|(flow, started_at_ms, closed)| FlowSummary {
            flow_id: flow.flow_id,
            run_id: flow.run_id,
            flow_type: flow.flow_type,
            status: closed.status,
            started_at_ms,
            closed: Some(closed),
        }))
    }

    /// The flow's record and where its run stands, read lock-free.
    fn read_run(&self, flow_id: &str) -> Result<(FlowRecord, RunState)> {
        let (flow, stored, _) =
            self.read_committed_value(flow_id, None, |_| Ok(RUN_STATE_NAME.to_owned()))?;
        let state = RunState::parse(flow_id, stored.as_deref())?;
        Ok((flow, state))
    }

    /// The flow's record, the stored JSON text of the one value `name` picks for it (or
    /// `None`) and its closed run, if it was stopped, read lock-free from one snapshot of
    /// committed state, as a lock-free RPC reads its snapshot. `ahead` is the name expected
    /// before the flow is read (by the names' own rules), which the store may read with it.
    fn read_committed_value(
        &self,
        flow_id: &str,
        ahead: Option<String>,
        name: impl Fn(&FlowRecord) -> Result<String> + Sync,
    ) -> Result<(FlowRecord, Option<String>, Option<ClosedRun>)> {
        let mut found = None;
        // The name is checked against the flow's type once read; the run state is read in
        // any case.
        let reads = ahead
            .into_iter()
            .chain([RUN_STATE_NAME.to_owned()])
            .collect();
        self.store.run_rpc(
            flow_id,
            &Isolation::Shared {
                reads,
                maps: Vec::new(),
            },
            &mut |reader: &mut dyn SnapshotReader| {
                let flow = reader.flow().clone();
                let name = name(&flow)?;
                let mut names = vec![name.clone(), RUN_STATE_NAME.to_owned()];
                names.dedup();
                let read = reader.read(&names)?;
                let closed = ClosedRun::find(flow_id, &read)?;
                let value = read
                    .into_iter()
                    .find(|(read, _)| *read == name)
                    .map(|(_, json)| json);
                found = Some((flow, value, closed));
                Ok(Vec::new())
            },
        )?;
        found.ok_or_else(|| Error::storage("the store did not run the read"))
    }

    /// Checks one call and resolves what it locks and loads.
    pub(crate) fn prepare(
        &self,
        flow_type: &str,
        flow_id: &str,
        rpc_name: &str,
        input: &Value,
        options: &RpcInvokeOptions,
    ) -> Result<(Arc<FlowDefinition>, CallPlan)> {
        self.check_process()?;
        validate_flow_id(flow_id)?;
        let definition = self.definition(flow_type)?;
        let rpc = definition.rpc(rpc_name)?;
        crate::limits::check_rpc_input(rpc_name, input)?;
        let options = planned_options(rpc, input, options)?;
        let plan = CallPlan::new(&definition, rpc, &options)?;
        Ok((definition, plan))
    }
}

/// What one call locks and loads, resolved to physical names.
pub(crate) struct CallPlan {
    /// The locks, and the names loaded (the flow's Attributes, its run state, the loaded
    /// AttributeMap instances), which the store may read ahead.
    pub(crate) isolation: Isolation,
    /// The AttributeMaps loaded whole.
    map_loads: Vec<String>,
    run_id: Option<String>,
    /// A read for inspection ([`Runtime::inspect_rpc_output`]): a stopped flow is read
    /// too, and any staged write is refused.
    inspecting: bool,
}

impl CallPlan {
    fn new(
        definition: &FlowDefinition,
        rpc: &RpcDefinition,
        options: &RpcInvokeOptions,
    ) -> Result<Self> {
        let mut locks = BTreeSet::new();
        for lock in rpc.locks() {
            locks.insert(definition.lock_physical_name(lock)?);
        }
        locks.extend(per_call_names(
            definition,
            "lock",
            &options.lock_attribute_map_instances,
        )?);
        let mut loads: BTreeSet<String> = definition.attributes().map(str::to_owned).collect();
        // Read with the values, so a stop is seen in the same snapshot (crate::lifecycle).
        loads.insert(RUN_STATE_NAME.to_owned());
        for load in rpc.loads() {
            loads.insert(definition.instance_physical_name(load)?);
        }
        loads.extend(per_call_names(
            definition,
            "load",
            &options.load_attribute_map_instances,
        )?);
        let reads = loads.into_iter().collect();
        let maps = rpc.map_loads().to_vec();
        let isolation = if !takes_locks(rpc, options) {
            Isolation::Shared { reads, maps }
        } else {
            Isolation::Exclusive {
                locks: locks.into_iter().collect(),
                reads,
                maps,
            }
        };
        Ok(CallPlan {
            isolation,
            map_loads: rpc.map_loads().to_vec(),
            run_id: options.run_id.clone(),
            inspecting: false,
        })
    }

    /// Makes this plan an inspection's: lock-free, serving a stopped flow, writing nothing.
    fn inspect(&mut self) {
        let reads = match &mut self.isolation {
            Isolation::Exclusive { reads, .. } | Isolation::Shared { reads, .. } => {
                std::mem::take(reads)
            }
        };
        self.isolation = Isolation::Shared {
            reads,
            maps: self.map_loads.clone(),
        };
        self.inspecting = true;
    }

    /// The names loaded (sorted): the flow's Attributes, its run state and the loaded
    /// AttributeMap instances.
    fn loads(&self) -> &[String] {
        match &self.isolation {
            Isolation::Exclusive { reads, .. } | Isolation::Shared { reads, .. } => reads,
        }
    }

    pub(crate) fn run(
        &self,
        definition: &FlowDefinition,
        rpc: &RpcDefinition,
        reader: &mut dyn SnapshotReader,
        input: Value,
    ) -> Result<(RpcOutput, Vec<Write>)> {
        let flow = reader.flow().clone();
        if flow.flow_type != definition.flow_type() {
            return Err(Error::invalid_input(format!(
                "flow {:?} is a {}, not a {}",
                flow.flow_id,
                flow.flow_type,
                definition.flow_type()
            )));
        }
        check_run_id(&flow, self.run_id.as_deref())?;
        let mut snapshot = reader.read(self.loads())?;
        for map in &self.map_loads {
            snapshot.extend(reader.read_map(map)?);
        }
        if let Some(at) = snapshot.iter().position(|(name, _)| name == RUN_STATE_NAME) {
            let (_, json) = snapshot.swap_remove(at);
            let closed = ClosedRun::parse(&flow.flow_id, Some(&json))?;
            if let Some(closed) = closed.filter(|_| !self.inspecting) {
                return Err(closed.not_active(&flow.flow_id));
            }
        }
        let loaded: HashSet<String> = (self.loads().iter().cloned())
            .chain(self.map_loads.iter().map(|map| format!("{map}/")))
            .collect();
        let mut ctx = RpcContext::new(&flow.flow_id, &flow.run_id, definition, loaded, snapshot);
        let handler = rpc.handler();
        let span = tracing::info_span!(crate::metrics::SPAN_HANDLER, rpc = rpc.name());
        let output = span
            .in_scope(|| catch_unwind(AssertUnwindSafe(|| handler(&mut ctx, input))))
            .map_err(|panic| panicked(rpc.name(), panic.as_ref()))??;
        let writes = checked_writes(ctx.into_writes()?)?;
        if !writes.is_empty() && (self.inspecting || rpc.is_read_only()) {
            let names: Vec<&str> = writes.iter().map(|(name, _)| name.as_str()).collect();
            let names = names.join(", ");
            return Err(if rpc.is_read_only() {
                Error::handler(format!(
                    "RPC {:?} is declared read-only, but staged writes to {names}",
                    rpc.name()
                ))
            } else {
                Error::invalid_input(format!(
                    "an inspection only reads, but RPC {:?} staged writes to {names}",
                    rpc.name()
                ))
            });
        }
        Ok((output, writes))
    }
}

/// Whether two JSON values are equal, numbers by value (`1` equals `1.0`).
fn json_equal(stored: &Value, expected: &Value) -> bool {
    match (stored, expected) {
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            _ if a == b => true,
            (Some(x), Some(y)) if a.is_f64() || b.is_f64() => x == y,
            _ => false,
        },
        _ => stored == expected,
    }
}

/// The physical name of `target`, checked by the names' own rules only (no definition).
fn physical_name_by_rules(target: &LockTarget) -> Result<String> {
    match target {
        LockTarget::Attribute(name) => {
            validate_definition_name("Attribute", name)?;
            Ok(name.clone())
        }
        LockTarget::MapInstance(instance) => {
            validate_definition_name("AttributeMap", &instance.map)?;
            instance.physical_name()
        }
    }
}

/// Fails unless `run_id` is absent or the run of `flow`.
fn check_run_id(flow: &FlowRecord, run_id: Option<&str>) -> Result<()> {
    match run_id.filter(|id| *id != flow.run_id) {
        Some(run_id) => Err(Error::RunNotCurrent {
            flow_id: flow.flow_id.clone(),
            run_id: run_id.to_owned(),
            current_run_id: flow.run_id.clone(),
        }),
        None => Ok(()),
    }
}

/// Whether a call of `rpc` with `options` takes fail-fast locks (or asks for a transaction
/// of its own), so it runs exclusively, as a member of a commit group; otherwise it runs
/// lock-free on a snapshot ([`Isolation::Shared`]).
/// A call planned by its RPC's planner counts as taking locks when the planner's plans may.
pub(crate) fn takes_locks(rpc: &RpcDefinition, options: &RpcInvokeOptions) -> bool {
    rpc.is_transactional()
        || !rpc.locks().is_empty()
        || !options.lock_attribute_map_instances.is_empty()
        || (is_planned(rpc, options) && rpc.planner().is_some_and(RpcPlanner::locks))
}

/// Whether a call of `rpc` with `options` runs by its RPC's plan: the RPC plans its calls
/// ([`RpcDefinition::planned_by`]) and `options` name no lock or load of their own
/// (explicit options win).
fn is_planned(rpc: &RpcDefinition, options: &RpcInvokeOptions) -> bool {
    rpc.planner().is_some()
        && options.lock_attribute_map_instances.is_empty()
        && options.load_attribute_map_instances.is_empty()
}

/// The options a call runs with: `options` themselves, unless the call runs by its RPC's
/// plan ([`is_planned`]): then the plan's locks and loads for `input`, with `options`' run.
fn planned_options<'o>(
    rpc: &RpcDefinition,
    input: &Value,
    options: &'o RpcInvokeOptions,
) -> Result<Cow<'o, RpcInvokeOptions>> {
    match rpc.planner() {
        Some(planner) if is_planned(rpc, options) => {
            let plan = planner.plan(input)?;
            Ok(Cow::Owned(RpcInvokeOptions {
                lock_attribute_map_instances: plan.locks,
                load_attribute_map_instances: plan.loads,
                run_id: options.run_id.clone(),
            }))
        }
        _ => Ok(Cow::Borrowed(options)),
    }
}

fn per_call_names(
    definition: &FlowDefinition,
    what: &str,
    instances: &[MapInstance],
) -> Result<Vec<String>> {
    let mut seen = BTreeSet::new();
    for instance in instances {
        let name = definition.instance_physical_name(instance)?;
        if !seen.insert(name.clone()) {
            return Err(Error::invalid_input(format!(
                "RPC invoke options name the {what} {name:?} twice"
            )));
        }
    }
    Ok(seen.into_iter().collect())
}

/// The values a start writes, by physical name: the type's defaults overridden by the
/// options' (a null one writes nothing).
fn initial_values(
    definition: &FlowDefinition,
    options: &StartFlowOptions,
) -> Result<BTreeMap<String, Value>> {
    let mut values: BTreeMap<String, Value> = definition.defaults().clone();
    let mut given = BTreeSet::new();
    for (target, value) in options.initial_values() {
        let name = match target {
            // Checked here, not by the lock resolver, so the message names a start option.
            InitialTarget::Attribute(name) if definition.has_map(name) => {
                return Err(Error::invalid_input(format!(
                    "initial value for AttributeMap {name:?} needs an instance"
                )))
            }
            InitialTarget::Attribute(name) => definition
                .lock_physical_name(&crate::definition::LockTarget::Attribute(name.clone()))?,
            InitialTarget::MapInstance(instance) => definition.instance_physical_name(instance)?,
        };
        if !given.insert(name.clone()) {
            return Err(Error::invalid_input(format!(
                "start options give an initial value for {name:?} twice"
            )));
        }
        values.insert(name, value.clone());
    }
    values.retain(|_, value| !value.is_null());
    Ok(values)
}

/// The staged values as JSON text, each checked against the stored-value limit.
fn checked_writes(writes: Vec<Write>) -> Result<Vec<Write>> {
    for (name, json) in &writes {
        if let Some(json) = json.as_deref() {
            crate::limits::check_stored_value(name, json)?;
        }
    }
    Ok(writes)
}

fn panicked(rpc: &str, panic: &(dyn std::any::Any + Send)) -> Error {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_owned());
    Error::HandlerFailure {
        error_type: "panic".to_owned(),
        message: format!("RPC {rpc} panicked: {message}"),
    }
}
