//! Flow types defined in Kotlin or Swift: a core [`FlowDefinition`] whose handlers call a
//! foreign [`RpcHandler`].
//!
//! The definition is built and checked by the core's builder, so a foreign flow obeys the
//! same rules as a Rust or Python one (unknown lock or load target, map lock without an
//! instance, duplicate names, names with `/`). Each handler runs inside the core's RPC,
//! after the locks are taken and the snapshot is read, before the commit: it hands the
//! foreign handler an [`RpcContext`] open for this call only and turns what the handler
//! returns or throws into the core's result. A handler that throws stores nothing.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use attrflow::definition::{FlowDefinition, RpcDefinition};
use attrflow::retry::RetryPolicy as CorePolicy;
use attrflow::store::StoreUrl;
use attrflow::{Error, MapInstance, RpcInvokeOptions, RpcOutput, Runtime, StartFlowOptions};
use serde_json::Value;

use crate::error::Result;
use crate::id_reuse_policy::IdReusePolicy;
use crate::retry_policy::{core_policy, RetryPolicy};
use crate::store::{Durability, Store};

/// Why a foreign handler failed: the type of what it threw and its message. Nothing the
/// handler staged is stored; the caller gets `HandlerFailure` with the same two fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum HandlerError {
    /// The handler threw.
    #[error("{reason}")]
    Failed {
        /// The thrown error's type (a Kotlin exception's class name, say); may be empty.
        error_type: String,
        /// The thrown error's message.
        reason: String,
    },
}

impl From<uniffi::UnexpectedUniFFICallbackError> for HandlerError {
    fn from(error: uniffi::UnexpectedUniFFICallbackError) -> Self {
        HandlerError::Failed {
            error_type: String::new(),
            reason: error.reason,
        }
    }
}

/// The handler of one RPC of a foreign flow type, implemented in Kotlin or Swift.
#[uniffi::export(with_foreign)]
pub trait RpcHandler: Send + Sync {
    /// Runs one call: reads and stages through `context` (valid only until this returns),
    /// takes the input as JSON text and returns the output as JSON text.
    fn handle(
        &self,
        context: Arc<RpcContext>,
        input_json: String,
    ) -> std::result::Result<String, HandlerError>;
}

/// A lock of an RPC: the Attribute `target`, or with `instance` one instance of the
/// AttributeMap `target`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LockTarget {
    /// The Attribute or AttributeMap name.
    pub target: String,
    /// The instance key, for a map lock.
    #[uniffi(default = None)]
    pub instance: Option<String>,
}

/// One instance of an AttributeMap, by map name and instance key.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct MapInstanceRef {
    /// The AttributeMap's name.
    pub map: String,
    /// The instance key.
    pub instance: String,
}

impl From<MapInstanceRef> for MapInstance {
    fn from(instance: MapInstanceRef) -> Self {
        MapInstance::new(instance.map, instance.instance)
    }
}

/// What one call locks and loads beyond its RPC's definition, and which run it means.
#[derive(Debug, Clone, Default, PartialEq, Eq, uniffi::Record)]
pub struct InvokeOptions {
    /// Map instances to lock for this call.
    #[uniffi(default = [])]
    pub lock_map_instances: Vec<MapInstanceRef>,
    /// Map instances to load into this call's snapshot.
    #[uniffi(default = [])]
    pub load_map_instances: Vec<MapInstanceRef>,
    /// The run the call means; absent means whatever run the flow has.
    #[uniffi(default = None)]
    pub run_id: Option<String>,
}

impl From<InvokeOptions> for RpcInvokeOptions {
    fn from(options: InvokeOptions) -> Self {
        RpcInvokeOptions {
            lock_attribute_map_instances: convert(options.lock_map_instances),
            load_attribute_map_instances: convert(options.load_map_instances),
            run_id: options.run_id,
        }
    }
}

fn convert(instances: Vec<MapInstanceRef>) -> Vec<MapInstance> {
    instances.into_iter().map(MapInstance::from).collect()
}

/// One initial value of a flow start: `json` written to the Attribute `target`, or with
/// `instance` to one instance of the AttributeMap `target`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct InitialValue {
    /// The Attribute or AttributeMap name.
    pub target: String,
    /// The instance key, for a map instance.
    pub instance: Option<String>,
    /// The value, as JSON text.
    pub json: String,
}

/// A flow type under construction; [`FlowTypeBuilder::build`] has the core check it.
#[derive(Debug, uniffi::Object)]
pub struct FlowTypeBuilder {
    flow_type: String,
    parts: Mutex<Parts>,
}

#[derive(Debug, Default)]
struct Parts {
    attributes: Vec<String>,
    maps: Vec<String>,
    defaults: Vec<(String, String)>,
    rpcs: Vec<RpcDefinition>,
}

#[uniffi::export]
impl FlowTypeBuilder {
    /// Starts a definition of the flow type `flow_type`.
    #[uniffi::constructor]
    pub fn new(flow_type: String) -> Arc<Self> {
        Arc::new(FlowTypeBuilder {
            flow_type,
            parts: Mutex::new(Parts::default()),
        })
    }

    /// Declares a singleton Attribute.
    pub fn attribute(&self, name: String) {
        self.parts().attributes.push(name);
    }

    /// Declares an AttributeMap.
    pub fn map(&self, name: String) {
        self.parts().maps.push(name);
    }

    /// A value (JSON text) written under `physical_name` (`<attribute>` or
    /// `<map>/<instance>`) when a flow starts without one of its own.
    pub fn default_value(&self, physical_name: String, json: String) {
        self.parts().defaults.push((physical_name, json));
    }

    /// Adds an RPC with its fixed locks and loads; `transactional` isolates calls from
    /// other writers even when they take no locks. `load_maps` names the AttributeMaps
    /// every call loads whole (every instance readable and listed by the context's
    /// `mapInstanceKeys`), as Dex's whole-map loads.
    #[uniffi::method(default(locks = [], loads = [], transactional = false, load_maps = []))]
    pub fn rpc(
        &self,
        name: String,
        handler: Arc<dyn RpcHandler>,
        locks: Vec<LockTarget>,
        loads: Vec<MapInstanceRef>,
        transactional: bool,
        load_maps: Vec<String>,
    ) {
        let mut rpc = RpcDefinition::new_with_output(name, move |ctx, input| {
            call_foreign(&*handler, ctx, input)
        });
        for lock in locks {
            rpc = match lock.instance {
                Some(instance) => rpc.lock_map_instance(lock.target, instance),
                None => rpc.lock_attribute(lock.target),
            };
        }
        for load in loads {
            rpc = rpc.load_map_instance(load.map, load.instance);
        }
        for map in load_maps {
            rpc = rpc.load_map(map);
        }
        if transactional {
            rpc = rpc.transactional();
        }
        self.parts().rpcs.push(rpc);
    }

    /// The definition, after the core checked every name, lock and load.
    pub fn build(&self) -> Result<Arc<FlowType>> {
        let parts = std::mem::take(&mut *self.parts());
        let mut builder = FlowDefinition::builder(self.flow_type.clone());
        for attribute in parts.attributes {
            builder = builder.attribute(attribute);
        }
        for map in parts.maps {
            builder = builder.map(map);
        }
        for (name, json) in parts.defaults {
            let value = parse(&json, &name)?;
            builder = builder.default_value(name, value);
        }
        for rpc in parts.rpcs {
            builder = builder.rpc(rpc);
        }
        Ok(Arc::new(FlowType {
            definition: builder.build()?,
        }))
    }
}

impl FlowTypeBuilder {
    fn parts(&self) -> MutexGuard<'_, Parts> {
        self.parts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A checked flow type, ready to register on a store.
#[derive(Debug, uniffi::Object)]
pub struct FlowType {
    definition: FlowDefinition,
}

#[uniffi::export]
impl FlowType {
    /// The flow type's name.
    pub fn name(&self) -> String {
        self.definition.flow_type().to_owned()
    }
}

#[uniffi::export]
impl Store {
    /// Opens the store at `location` like [`Store::open`], with no flow type registered, so
    /// the program registers its own (one under a built-in type's name, say).
    #[uniffi::constructor(default(durability = None))]
    pub fn open_without_built_ins(
        location: String,
        durability: Option<Durability>,
    ) -> Result<Arc<Self>> {
        let mut url = StoreUrl::parse(&location)?;
        if let Some(durability) = durability {
            url = url.with_synchronous(durability.into());
        }
        let runtime = Runtime::without_built_ins(url.open()?);
        Ok(Arc::new(Store { runtime }))
    }

    /// Registers a flow type; a second type of the same name is refused.
    pub fn register_flow_type(&self, flow_type: Arc<FlowType>) -> Result<()> {
        Ok(self.runtime.register(flow_type.definition.clone())?)
    }

    /// Starts a flow of `flow_type` under `flow_id` with `initial` values, and returns its
    /// run ID (the running one's with `ignore_already_started`). When the ID already has a
    /// run, `id_reuse_policy` decides (absent: a new run once the previous one is stopped,
    /// as in Dex); a refused start fails with `FlowAlreadyStarted`, whose `status` says
    /// where the existing run stands.
    #[uniffi::method(default(initial = [], ignore_already_started = false, id_reuse_policy = None))]
    pub fn start_flow(
        &self,
        flow_type: String,
        flow_id: String,
        initial: Vec<InitialValue>,
        ignore_already_started: bool,
        id_reuse_policy: Option<IdReusePolicy>,
    ) -> Result<String> {
        let mut options = StartFlowOptions::new()
            .ignore_already_started(ignore_already_started)
            .id_reuse_policy(id_reuse_policy.map(Into::into).unwrap_or_default());
        for value in initial {
            let json = parse(&value.json, &value.target)?;
            options = match value.instance {
                Some(instance) => options.with_map_instance(value.target, instance, json),
                None => options.with_attribute(value.target, json),
            };
        }
        Ok(self.runtime.start_flow(&flow_type, &flow_id, &options)?)
    }

    /// Invokes an RPC once with JSON `input_json` and returns its output as JSON text; a
    /// concurrent call holding a lock it needs makes it fail with `LockConflict`.
    #[uniffi::method(default(options = None))]
    pub fn invoke_rpc(
        &self,
        flow_type: String,
        flow_id: String,
        rpc: String,
        input_json: String,
        options: Option<InvokeOptions>,
    ) -> Result<String> {
        let once = CorePolicy::DEFAULT.with_max_attempts(1)?;
        self.invoke_json(&flow_type, &flow_id, &rpc, &input_json, options, once)
    }

    /// [`Store::invoke_rpc`], retrying lock conflicts by `retry` (the default policy when
    /// absent).
    #[uniffi::method(default(options = None, retry = None))]
    pub fn invoke_rpc_with_retry(
        &self,
        flow_type: String,
        flow_id: String,
        rpc: String,
        input_json: String,
        options: Option<InvokeOptions>,
        retry: Option<RetryPolicy>,
    ) -> Result<String> {
        let policy = core_policy(retry)?;
        self.invoke_json(&flow_type, &flow_id, &rpc, &input_json, options, policy)
    }
}

impl Store {
    /// Decodes the input, invokes the RPC by `policy` and encodes its output.
    fn invoke_json(
        &self,
        flow_type: &str,
        flow_id: &str,
        rpc: &str,
        input_json: &str,
        options: Option<InvokeOptions>,
        policy: CorePolicy,
    ) -> Result<String> {
        let input = parse_input(input_json, rpc)?;
        let options = options.map(RpcInvokeOptions::from).unwrap_or_default();
        let output = policy.run(|| {
            self.runtime
                .invoke_rpc_output(flow_type, flow_id, rpc, input.clone(), &options)
        })?;
        Ok(output.to_json().into_owned())
    }
}

fn parse_input(json: &str, rpc: &str) -> attrflow::Result<Value> {
    attrflow::json::parse(json, || format!("input of RPC {rpc:?}"))
}

fn parse(json: &str, name: &str) -> attrflow::Result<Value> {
    attrflow::json::parse(json, || format!("value written to {name:?}"))
}

fn call_foreign(
    handler: &dyn RpcHandler,
    ctx: &mut attrflow::RpcContext<'_>,
    input: Value,
) -> attrflow::Result<RpcOutput> {
    let context = Arc::new(RpcContext::new(
        ctx.flow_id().to_owned(),
        ctx.run_id().to_owned(),
    ));
    let output = {
        let _window = ContextWindow::open(&context, ctx);
        handler.handle(Arc::clone(&context), input.to_string())
    };
    let output =
        output.map_err(
            |HandlerError::Failed { error_type, reason }| Error::HandlerFailure {
                error_type,
                message: reason,
            },
        )?;
    // Kept as the handler wrote it, checked as the core checks JSON from callers.
    attrflow::json::check_text(output, || "the output of a foreign handler".into())
        .map(RpcOutput::Json)
        .map_err(|e| Error::handler(e.to_string()))
}

/// The core context of the call in progress, its lifetime erased.
struct OpenContext(NonNull<attrflow::RpcContext<'static>>);

// SAFETY: the pointer is only dereferenced while `RpcContext::with` holds the mutex, and
// only between `ContextWindow::open` and the window's drop, while the handler that owns the
// `&mut RpcContext` waits for the foreign call to return and touches the context no other
// way. The core `RpcContext` itself is `Send`.
unsafe impl Send for OpenContext {}

/// A handler's window on the core's context of exactly one call: reads see the call's
/// snapshot and its own staged writes; writes are staged and committed when the handler
/// returns, or dropped when it throws. Used after its handler returned, every method fails
/// with `InvalidInput`.
#[derive(uniffi::Object)]
pub struct RpcContext {
    flow_id: String,
    run_id: String,
    context: Mutex<Option<OpenContext>>,
}

impl std::fmt::Debug for RpcContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcContext")
            .field("flow_id", &self.flow_id)
            .field("run_id", &self.run_id)
            .field("open", &self.lock().is_some())
            .finish()
    }
}

/// Keeps an [`RpcContext`] open while it lives and closes it when dropped, also when the
/// handler unwinds.
struct ContextWindow<'a> {
    handle: &'a RpcContext,
}

impl<'a> ContextWindow<'a> {
    fn open(handle: &'a RpcContext, context: &'a mut attrflow::RpcContext<'_>) -> Self {
        let erased = NonNull::from(context).cast::<attrflow::RpcContext<'static>>();
        *handle.lock() = Some(OpenContext(erased));
        ContextWindow { handle }
    }
}

impl Drop for ContextWindow<'_> {
    fn drop(&mut self) {
        *self.handle.lock() = None;
    }
}

impl RpcContext {
    fn new(flow_id: String, run_id: String) -> Self {
        RpcContext {
            flow_id,
            run_id,
            context: Mutex::new(None),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<OpenContext>> {
        self.context.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn with<R>(
        &self,
        action: impl FnOnce(&mut attrflow::RpcContext<'_>) -> attrflow::Result<R>,
    ) -> Result<R> {
        let mut open = self.lock();
        let Some(OpenContext(pointer)) = open.as_mut() else {
            return Err(Error::invalid_input(format!(
                "the RPC context of flow {:?} was used after its handler returned",
                self.flow_id
            ))
            .into());
        };
        // SAFETY: see `OpenContext`; the mutex guard is held for the whole access.
        let context = unsafe { pointer.as_mut() };
        Ok(action(context)?)
    }
}

#[uniffi::export]
impl RpcContext {
    /// The ID of the flow the RPC runs on.
    pub fn flow_id(&self) -> String {
        self.flow_id.clone()
    }

    /// The ID of the flow's run (what starting it returned).
    pub fn run_id(&self) -> String {
        self.run_id.clone()
    }

    /// The singleton Attribute's value as JSON text, absent when it holds none.
    pub fn attribute(&self, name: String) -> Result<Option<String>> {
        self.with(|ctx| Ok(ctx.attribute(&name)?.map(Value::to_string)))
    }

    /// Stages a new value (JSON text) of a singleton Attribute.
    pub fn set_attribute(&self, name: String, json: String) -> Result<()> {
        self.with(|ctx| ctx.set_attribute(&name, parse(&json, &name)?))
    }

    /// Stages the deletion of a singleton Attribute.
    pub fn delete_attribute(&self, name: String) -> Result<()> {
        self.with(|ctx| ctx.set_attribute(&name, Value::Null))
    }

    /// A map instance's value as JSON text, absent when loaded but holding none; an
    /// instance the call did not load fails with `AttributeMapNotLoaded`.
    pub fn map_instance(&self, map: String, instance: String) -> Result<Option<String>> {
        self.with(|ctx| Ok(ctx.map_instance(&map, &instance)?.map(Value::to_string)))
    }

    /// The keys of the map's instances that hold a value in this call's view (the loaded
    /// ones, with the call's staged sets added and deletes removed), sorted.
    pub fn map_instance_keys(&self, map: String) -> Result<Vec<String>> {
        self.with(|ctx| ctx.map_instance_keys(&map))
    }

    /// Stages a new value (JSON text) of a map instance; writing needs no load or lock.
    pub fn set_map_instance(&self, map: String, instance: String, json: String) -> Result<()> {
        self.with(|ctx| ctx.set_map_instance(&map, &instance, parse(&json, &map)?))
    }

    /// Stages the deletion of a map instance.
    pub fn delete_map_instance(&self, map: String, instance: String) -> Result<()> {
        self.with(|ctx| ctx.delete_map_instance(&map, &instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AttrflowError;

    /// Stages a write, then fails or succeeds as its input says.
    struct Staging;

    impl RpcHandler for Staging {
        fn handle(
            &self,
            context: Arc<RpcContext>,
            input_json: String,
        ) -> std::result::Result<String, HandlerError> {
            let staged = context.set_attribute("note".into(), input_json.clone());
            staged.map_err(|e| HandlerError::Failed {
                error_type: "AttrflowError".into(),
                reason: e.to_string(),
            })?;
            if input_json.contains("fail") {
                return Err(HandlerError::Failed {
                    error_type: "TestError".into(),
                    reason: "asked to fail".into(),
                });
            }
            context.attribute("note".into()).map_or_else(
                |e| Ok(format!("{e:?}")),
                |note| Ok(note.unwrap_or_default()),
            )
        }
    }

    /// A fresh store in its own temporary folder, removed when the guard drops.
    struct TempStore {
        folder: std::path::PathBuf,
        store: Arc<Store>,
    }

    impl Drop for TempStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.folder);
        }
    }

    fn store(name: &str) -> TempStore {
        let folder = std::env::temp_dir().join(format!(
            "attrflow-ffi-foreign-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&folder).expect("a temporary folder");
        let path = folder.join("attrflow.db").display().to_string();
        let store = Store::open_without_built_ins(path, Some(Durability::Normal))
            .expect("a fresh store opens");
        TempStore { folder, store }
    }

    fn notes() -> Arc<FlowType> {
        let builder = FlowTypeBuilder::new("Notes".into());
        builder.attribute("note".into());
        let lock = LockTarget {
            target: "note".into(),
            instance: None,
        };
        builder.rpc(
            "Write".into(),
            Arc::new(Staging),
            vec![lock],
            vec![],
            false,
            vec![],
        );
        builder.build().expect("a valid definition builds")
    }

    #[test]
    fn a_foreign_handler_commits_its_writes_or_none() {
        let temp = store("commit");
        let store = &temp.store;
        store.register_flow_type(notes()).expect("registers");
        store
            .start_flow("Notes".into(), "n".into(), vec![], false, None)
            .expect("starts");
        let write = |input: &str| {
            store.invoke_rpc(
                "Notes".into(),
                "n".into(),
                "Write".into(),
                input.into(),
                None,
            )
        };
        assert_eq!(write("\"kept\"").expect("writes"), "\"kept\"");
        assert_eq!(
            write("\"fail\"").expect_err("fails"),
            AttrflowError::HandlerFailure {
                reason: "asked to fail".into(),
                error_type: "TestError".into()
            }
        );
        assert_eq!(write("\"again\"").expect("writes"), "\"again\"");
        assert!(matches!(
            write("not json"),
            Err(AttrflowError::InvalidInput { .. })
        ));
    }

    #[test]
    fn the_core_checks_a_foreign_definition() {
        let builder = FlowTypeBuilder::new("Bad".into());
        let lock = LockTarget {
            target: "nope".into(),
            instance: None,
        };
        builder.rpc(
            "R".into(),
            Arc::new(Staging),
            vec![lock],
            vec![],
            false,
            vec![],
        );
        assert_eq!(
            builder.build().expect_err("refused").to_string(),
            r#"flow type "Bad" declares no Attribute or AttributeMap "nope""#
        );
    }
}
