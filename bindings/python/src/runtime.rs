//! `attrflow._native.Runtime`: one `attrflow::Runtime` over one store, callable from any
//! Python thread.

use std::sync::{Arc, PoisonError, RwLock};

use attrflow::definition::MapInstance;
use attrflow::store::{StoreUrl, Synchronous};
use attrflow::{Error, RpcInvokeOptions, Runtime, StartFlowOptions};
use pyo3::prelude::*;
use serde_json::Value;

use crate::errors::IntoPyResult;
use crate::python_flow::{self, RpcArg};

/// A `(map name, instance key)` pair as Python passes it.
type InstanceArg = (String, String);

/// An initial value as Python passes it: the Attribute or AttributeMap name, the instance
/// key (`None` for a singleton Attribute) and the value as JSON text.
type InitialArg = (String, Option<String>, String);

/// A runtime over one store, opened by URL.
///
/// Every method that touches the store releases the GIL while it runs. `close` drops this
/// handle's reference to the store; calls already running keep their own and finish.
#[pyclass(frozen, name = "Runtime", module = "attrflow._native")]
pub(crate) struct NativeRuntime {
    location: String,
    runtime: RwLock<Option<Arc<Runtime>>>,
}

#[pymethods]
impl NativeRuntime {
    /// Opens (creating if needed) the store named by `url`: a path or an `sqlite:` URL.
    /// `synchronous` (`"full"` or `"normal"`) overrides the URL's durability setting.
    /// With `built_in_flows=False` no flow type is registered until `register_flow`.
    #[new]
    #[pyo3(signature = (url, synchronous = None, built_in_flows = true))]
    fn new(
        py: Python<'_>,
        url: String,
        synchronous: Option<String>,
        built_in_flows: bool,
    ) -> PyResult<Self> {
        let opened = py.detach(move || open(&url, synchronous.as_deref(), built_in_flows));
        let runtime = opened.into_py_result(py)?;
        Ok(NativeRuntime {
            location: runtime.store().location(),
            runtime: RwLock::new(Some(Arc::new(runtime))),
        })
    }

    /// Where the store lives (a path, or a URL without credentials).
    #[getter]
    fn location(&self) -> &str {
        &self.location
    }

    /// Whether `close` has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// Starts a flow and returns its run ID. `initial` lists initial values as
    /// `(attribute_or_map, instance_or_None, json_text)`, in the order given.
    #[pyo3(signature = (flow_type, flow_id, ignore_already_started = false, initial = Vec::new()))]
    fn start_flow(
        &self,
        py: Python<'_>,
        flow_type: String,
        flow_id: String,
        ignore_already_started: bool,
        initial: Vec<InitialArg>,
    ) -> PyResult<String> {
        let runtime = self.runtime().into_py_result(py)?;
        let started = py.detach(move || {
            let mut options =
                StartFlowOptions::new().ignore_already_started(ignore_already_started);
            for (name, instance, json) in initial {
                let value = parse_json(&json, || match &instance {
                    Some(instance) => format!("initial value of {name}/{instance}"),
                    None => format!("initial value of {name}"),
                })?;
                options = match instance {
                    Some(instance) => options.with_map_instance(name, instance, value),
                    None => options.with_attribute(name, value),
                };
            }
            runtime.start_flow(&flow_type, &flow_id, &options)
        });
        started.into_py_result(py)
    }

    /// Invokes an RPC and returns its output as JSON text.
    ///
    /// `lock_instances` and `load_instances` are `(map, instance)` pairs added to the RPC's
    /// fixed locks and loads for this call. A non-empty `run_id` must be the flow's run.
    #[pyo3(signature = (
        flow_type,
        flow_id,
        rpc_name,
        input_json,
        lock_instances = Vec::new(),
        load_instances = Vec::new(),
        run_id = String::new(),
    ))]
    #[allow(clippy::too_many_arguments)]
    fn invoke_rpc(
        &self,
        py: Python<'_>,
        flow_type: String,
        flow_id: String,
        rpc_name: String,
        input_json: String,
        lock_instances: Vec<InstanceArg>,
        load_instances: Vec<InstanceArg>,
        run_id: String,
    ) -> PyResult<String> {
        let runtime = self.runtime().into_py_result(py)?;
        let output = py.detach(move || {
            let input = parse_json(&input_json, || format!("input of RPC {rpc_name}"))?;
            let options = RpcInvokeOptions {
                lock_attribute_map_instances: instances(lock_instances),
                load_attribute_map_instances: instances(load_instances),
                run_id: (!run_id.is_empty()).then_some(run_id),
            };
            runtime
                .invoke_rpc(&flow_type, &flow_id, &rpc_name, input, &options)
                .map(|value| value.to_string())
        });
        output.into_py_result(py)
    }

    /// Registers a flow type defined in Python. `rpcs` lists
    /// `(name, locks, loads, transactional, handler)`; a lock is `(name, instance or None)`,
    /// a load `(map, instance)`, and `handler(context, input_json)` returns the output as
    /// JSON text. The core checks the definition: an unknown lock or load target, a map
    /// lock without an instance, a duplicate or a bad name raises `InvalidInputError`.
    fn register_flow(
        &self,
        py: Python<'_>,
        flow_type: String,
        attributes: Vec<String>,
        maps: Vec<String>,
        rpcs: Vec<RpcArg>,
    ) -> PyResult<()> {
        let runtime = self.runtime().into_py_result(py)?;
        let registered = py.detach(move || {
            runtime.register(python_flow::definition(flow_type, attributes, maps, rpcs)?)
        });
        registered.into_py_result(py)
    }

    /// Releases this handle's store. Later calls raise `StorageError`.
    fn close(&self) {
        let released = self
            .runtime
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(released);
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("<attrflow._native.Runtime {:?} ({state})>", self.location)
    }
}

impl NativeRuntime {
    pub(crate) fn runtime(&self) -> attrflow::Result<Arc<Runtime>> {
        self.runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| Error::storage(format!("store {} is closed", self.location)))
    }
}

fn open(url: &str, synchronous: Option<&str>, built_in_flows: bool) -> attrflow::Result<Runtime> {
    let mut url = StoreUrl::parse(url)?;
    if let Some(synchronous) = synchronous {
        url = url.with_synchronous(Synchronous::parse(synchronous)?);
    }
    let store = url.open()?;
    Ok(if built_in_flows {
        Runtime::new(store)
    } else {
        Runtime::without_built_ins(store)
    })
}

fn parse_json(json: &str, what: impl FnOnce() -> String) -> attrflow::Result<Value> {
    serde_json::from_str(json)
        .map_err(|e| Error::invalid_input(format!("{} is not valid JSON: {e}", what())))
}

fn instances(pairs: Vec<InstanceArg>) -> Vec<MapInstance> {
    pairs
        .into_iter()
        .map(|(map, instance)| MapInstance::new(map, instance))
        .collect()
}
