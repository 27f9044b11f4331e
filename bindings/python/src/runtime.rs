//! `attrflow._native.Runtime`: one `attrflow::Runtime` over one store, callable from any
//! Python thread.

use std::sync::{Arc, PoisonError, RwLock};

use attrflow::definition::MapInstance;
use attrflow::store::{StoreUrl, Synchronous};
use attrflow::{
    Error, FlowSummary, IdReusePolicy, LockTarget, RpcInvokeOptions, RpcOutput, RpcRequest,
    Runtime, StartFlowOptions, StopType,
};
use pyo3::prelude::*;
use serde_json::Value;

use crate::decode::Decoder;
use crate::errors::IntoPyResult;
use crate::executor;
use crate::python_flow::{self, RpcArg};
use crate::rpc_call::{InstanceArg, RpcCallArgs};
use crate::text::{JsonText, Text};
use crate::transcode;
use crate::wait_timeout::wait_timeout;

/// An initial value as Python passes it: the Attribute or AttributeMap name, the instance
/// key (`None` for a singleton Attribute) and the value as JSON text.
type InitialArg = (Text, Option<Text>, JsonText);

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
        url: Text,
        synchronous: Option<Text>,
        built_in_flows: bool,
    ) -> PyResult<Self> {
        let opened = py.detach(move || open(&url, synchronous.as_deref(), built_in_flows));
        Ok(NativeRuntime::from(opened.into_py_result(py)?))
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
    /// `(attribute_or_map, instance_or_None, json_text)`, in the order given;
    /// `id_reuse_policy` names an ID reuse policy as Dex's Python SDK does (`DISALLOW`, …;
    /// `None` is the default).
    ///
    /// With `done`, the start runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the run ID or the exception.
    #[pyo3(signature = (
        flow_type,
        flow_id,
        ignore_already_started = false,
        initial = Vec::new(),
        id_reuse_policy = None,
        *,
        done = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn start_flow<'py>(
        &self,
        py: Python<'py>,
        flow_type: Text,
        flow_id: Text,
        ignore_already_started: bool,
        initial: Vec<InitialArg>,
        id_reuse_policy: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let policy = match id_reuse_policy {
            Some(name) => name.parse::<IdReusePolicy>().into_py_result(py)?,
            None => IdReusePolicy::default(),
        };
        let options = StartFlowOptions::new()
            .ignore_already_started(ignore_already_started)
            .id_reuse_policy(policy);
        let start = move || start_flow(&runtime, &flow_type, &flow_id, options, initial);
        let finish = |py: Python<'_>, started: attrflow::Result<String>| {
            Ok(started
                .into_py_result(py)?
                .into_pyobject(py)?
                .into_any()
                .unbind())
        };
        here_or_on_a_worker(py, done, false, start, finish)
    }

    /// The stored JSON text of the Attribute `name` (with `instance`, of that instance of
    /// the AttributeMap `name`) of the flow `flow_id`, or `None` when it holds no value. A
    /// non-empty `run_id` must be the flow's run.
    ///
    /// With `done`, the read runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the text or the exception. With `in_place` too, on a
    /// store whose reads wait for no writer (`Runtime::reads_values_in_place`), a read that
    /// is its event loop's only call runs here instead and this returns the text, as
    /// `call_rpc` runs a lone read-only RPC.
    #[pyo3(signature = (
        flow_id, name, instance = None, run_id = Text::default(), *, done = None, in_place = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn get_attribute<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        name: Text,
        instance: Option<Text>,
        run_id: Text,
        done: Option<executor::Done>,
        in_place: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let in_place = in_place && runtime.reads_values_in_place();
        let read = move || {
            let run_id = Some(&*run_id).filter(|id| !id.is_empty());
            runtime.get_attribute(&flow_id, &value_target(name, instance), run_id)
        };
        let finish = |py: Python<'_>, read: attrflow::Result<Option<String>>| {
            Ok(read
                .into_py_result(py)?
                .into_pyobject(py)?
                .into_any()
                .unbind())
        };
        here_or_on_a_worker(py, done, in_place, read, finish)
    }

    /// Writes `json` (a value's JSON text; `null` deletes it) to the Attribute `name` (with
    /// `instance`, to that instance of the AttributeMap `name`) of the flow `flow_id`, as
    /// the core's `Runtime::set_attribute` does. A non-empty `run_id` must be the flow's run.
    ///
    /// With `done`, the write runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with `None` or the exception.
    #[pyo3(signature = (flow_id, name, instance, json, run_id = Text::default(), *, done = None))]
    #[allow(clippy::too_many_arguments)]
    fn set_attribute<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        name: Text,
        instance: Option<Text>,
        json: Text,
        run_id: Text,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let write = move || {
            let run_id = Some(&*run_id).filter(|id| !id.is_empty());
            runtime.set_attribute(&flow_id, &value_target(name, instance), &json, run_id)
        };
        let finish = |py: Python<'_>, written: attrflow::Result<()>| {
            written.into_py_result(py)?;
            Ok(py.None())
        };
        here_or_on_a_worker(py, done, false, write, finish)
    }

    /// Waits up to `timeout` seconds for the committed value of the Attribute `name` (with
    /// `instance`, of that instance of the AttributeMap `name`) of the flow `flow_id` to
    /// equal `expected` (JSON text of a string, boolean or number), as the core's
    /// `Runtime::wait_for_attribute_equal` does: `True` once it does, `False` when the time
    /// runs out first.
    ///
    /// With `done`, the wait runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the outcome or the exception.
    #[pyo3(signature = (flow_id, name, instance, expected, timeout, *, done = None))]
    #[allow(clippy::too_many_arguments)]
    fn wait_for_attribute_equal<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        name: Text,
        instance: Option<Text>,
        expected: Text,
        timeout: f64,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let timeout = wait_timeout(py, timeout)?;
        let wait = move || {
            let target = value_target(name, instance);
            runtime.wait_for_attribute_equal(&flow_id, &target, &expected, timeout)
        };
        let finish = |py: Python<'_>, seen: attrflow::Result<bool>| {
            Ok(seen
                .into_py_result(py)?
                .into_pyobject(py)?
                .to_owned()
                .into_any()
                .unbind())
        };
        here_or_on_a_worker(py, done, false, wait, finish)
    }

    /// Stops the flow `flow_id`: `stop` is `"cancel"`, `"terminate"` or `"fail"`, and
    /// `reason`, if given, is kept with the closed run.
    ///
    /// With `done`, the stop runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with `None` or the exception.
    #[pyo3(signature = (flow_id, stop, reason = None, *, done = None))]
    fn stop_flow<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        stop: Text,
        reason: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let stop = match &*stop {
            "cancel" => StopType::Cancel,
            "terminate" => StopType::Terminate,
            "fail" => StopType::Fail,
            other => {
                return Err(Error::invalid_input(format!(
                    "stop type {other:?} is none of \"cancel\", \"terminate\", \"fail\""
                )))
                .into_py_result(py)
            }
        };
        let run = move || runtime.stop_flow(&flow_id, stop, reason.as_deref());
        let finish = |py: Python<'_>, stopped: attrflow::Result<()>| {
            stopped.into_py_result(py)?;
            Ok(py.None())
        };
        here_or_on_a_worker(py, done, false, run, finish)
    }

    /// Checks that the store answers (the core's `Runtime::health_check`).
    ///
    /// With `done`, the check runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with `None` or the exception.
    #[pyo3(signature = (*, done = None))]
    fn health_check<'py>(
        &self,
        py: Python<'py>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let check = move || runtime.health_check();
        let finish = |py: Python<'_>, checked: attrflow::Result<()>| {
            checked.into_py_result(py)?;
            Ok(py.None())
        };
        here_or_on_a_worker(py, done, false, check, finish)
    }

    /// Where the flow `flow_id` stands: `(flow_id, run_id, flow_type, status,
    /// started_at_ms, closed_at_ms, reason)`, the last two `None` while it runs.
    ///
    /// With `done`, the read runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the tuple or the exception.
    #[pyo3(signature = (flow_id, *, done = None))]
    fn describe_flow<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let read = move || runtime.describe_flow(&flow_id);
        let finish = |py: Python<'_>, described: attrflow::Result<FlowSummary>| {
            summary_tuple(py, described.into_py_result(py)?)
        };
        here_or_on_a_worker(py, done, false, read, finish)
    }

    /// Waits at most `timeout` seconds for the run of the flow `flow_id` to close, as the
    /// core's `Runtime::wait_for_flow` does: the closed flow as `describe_flow`'s tuple, or
    /// `None` when the time runs out first.
    ///
    /// With `done`, the wait runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the outcome or the exception.
    #[pyo3(signature = (flow_id, timeout, *, done = None))]
    fn wait_for_flow<'py>(
        &self,
        py: Python<'py>,
        flow_id: Text,
        timeout: f64,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let runtime = self.runtime().into_py_result(py)?;
        let timeout = wait_timeout(py, timeout)?;
        let wait = move || runtime.wait_for_flow(&flow_id, timeout);
        let finish = |py: Python<'_>, closed: attrflow::Result<Option<FlowSummary>>| {
            let closed = closed.into_py_result(py)?;
            closed.map_or_else(|| Ok(py.None()), |summary| summary_tuple(py, summary))
        };
        here_or_on_a_worker(py, done, false, wait, finish)
    }

    /// Invokes an RPC and returns its output decoded by `decoder` (`what` names the output
    /// in a `ValueMappingError`); with `as_json`, the output as JSON `bytes` written along
    /// `decoder`'s type instead (its fields in their declared order, as Python's compact
    /// `json.dumps` writes the decoded value).
    ///
    /// `input` is the input as JSON text; with `input_type`, it is the input value itself,
    /// written as JSON along that type here (`None` as `null`), as `Decoder.encode_json`
    /// does.
    ///
    /// Invokes the RPC `call` names ([`RpcCallArgs`]): its `lock_instances` and
    /// `load_instances` are added to the RPC's fixed locks and loads for this call (none:
    /// the core plans them from the input), and a non-empty `run_id` must be the flow's run.
    /// Returns the output decoded by the call's decoder, or with `as_json` as compact JSON
    /// `bytes` written along the decoder's type.
    ///
    /// With `done`, the call runs on a worker thread instead: this returns `done`'s future
    /// at once, later completed with the output or the exception. The
    /// call runs to its end (and may commit) whatever becomes of the caller meanwhile.
    /// With `in_place` too (the event loop has nothing else to do), a call that waits for
    /// nothing but its own reads (`Runtime::reads_in_place`) and is the loop's only one runs
    /// here instead, as without `done`, and this returns its output (see
    /// `Completions::run_in_place` for when such calls go to workers all the same).
    #[pyo3(signature = (call, *, as_json = false, done = None, in_place = false))]
    fn call_rpc<'py>(
        &self,
        py: Python<'py>,
        call: PyRef<'py, RpcCallArgs>,
        as_json: bool,
        done: Option<executor::Done>,
        in_place: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = call.input.bind(py);
        let input_json = match &call.input_type {
            None => input.extract::<JsonText>()?.0,
            Some(_) if input.is_none() => "null".to_owned(),
            Some(input_type) => input_type
                .get()
                .encode_value(py, input, || format!("input of RPC {}", call.rpc_name))?,
        };
        let decoder = call.decoder.clone_ref(py);
        let what = call.what.clone();
        let call = self.rpc_call(
            py,
            (
                call.flow_type.clone(),
                call.flow_id.clone(),
                call.rpc_name.clone(),
                input_json,
            ),
            &call.lock_instances,
            &call.load_instances,
            (!call.run_id.is_empty()).then(|| call.run_id.clone()),
        )?;
        let done = match done {
            // A lone read that waits for no writer runs here, as without `done`.
            Some((completions, _))
                if in_place && call.reads_in_place() && completions.get().may_run_in_place() =>
            {
                return call_here(py, call, &decoder, &what, as_json, Some(completions.get()));
            }
            Some(done) => done,
            None => return call_here(py, call, &decoder, &what, as_json, None),
        };
        let (runtime, batches) = call.handed_over();
        let request = move || call.into_request();
        if as_json {
            // Encoded on the worker: no interpreter needed.
            let encoder = decoder.clone_ref(py);
            let after = move |output| transcode::encode_output(output, encoder.get());
            let finish = move |py: Python<'_>, output: transcode::Encoded| {
                Ok(transcode::encoded(py, output, &what)?.unbind())
            };
            executor::submitted(py, done, |done| {
                executor::submit_rpc(done, runtime, batches, request, after, finish)
            })
        } else {
            let finish = move |py: Python<'_>, output: attrflow::Result<RpcOutput>| {
                let output = output.into_py_result(py)?;
                let decoded = decode_output(py, &output, decoder.get(), &what);
                if matches!(&output, RpcOutput::Value(value) if holds_a_list(value)) {
                    // A page's tree of values is freed by a worker thread, not the loop's.
                    executor::dispose(output);
                }
                Ok(decoded?.unbind())
            };
            executor::submitted(py, done, |done| {
                executor::submit_rpc(done, runtime, batches, request, |output| output, finish)
            })
        }
    }

    /// Registers a flow type defined in Python. `rpcs` lists
    /// `(name, locks, loads, transactional, handler, read_only)`; a lock is
    /// `(name, instance or None)`, a load `(map, instance or None)` (`None` loads the map
    /// whole), and `handler(context, input_json)` returns the output as JSON text. The core checks the
    /// definition: an unknown lock or load target, a map lock without an instance, a
    /// duplicate or a bad name raises `InvalidInputError`.
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

    /// Registers the built-in flow type `flow_type`; raises `InvalidInputError` when no
    /// built-in flow type has that name or the name is already registered.
    fn register_built_in(&self, py: Python<'_>, flow_type: Text) -> PyResult<()> {
        let runtime = self.runtime().into_py_result(py)?;
        let registered = py.detach(move || {
            let definition = attrflow::flows::built_in_named(&flow_type).ok_or_else(|| {
                Error::invalid_input(format!("flow type {flow_type:?} is not built in"))
            })?;
            runtime.register(definition)
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

impl From<Runtime> for NativeRuntime {
    fn from(runtime: Runtime) -> Self {
        NativeRuntime {
            location: runtime.store().location(),
            runtime: RwLock::new(Some(Arc::new(runtime))),
        }
    }
}

/// One RPC call, checked out of the handle and ready to run on any thread.
struct RpcCall {
    runtime: Arc<Runtime>,
    flow_type: String,
    flow_id: String,
    rpc_name: String,
    input_json: String,
    options: RpcInvokeOptions,
}

impl RpcCall {
    fn run(self) -> attrflow::Result<RpcOutput> {
        let runtime = Arc::clone(&self.runtime);
        let request = self.into_request()?;
        runtime.invoke_rpc_output(
            &request.flow_type,
            &request.flow_id,
            &request.rpc_name,
            request.input,
            &request.options,
        )
    }

    /// The runtime to hand the call to, and whether the call gains from a batch
    /// ([`Runtime::batches`]).
    fn handed_over(&self) -> (Arc<Runtime>, bool) {
        let batches = self
            .runtime
            .batches(&self.flow_type, &self.rpc_name, &self.options);
        (Arc::clone(&self.runtime), batches)
    }

    /// Whether the call waits for nothing but its own reads ([`Runtime::reads_in_place`]).
    fn reads_in_place(&self) -> bool {
        self.runtime
            .reads_in_place(&self.flow_type, &self.rpc_name, &self.options)
    }

    /// The request, or why the input is no request (it is not JSON): parsed on the thread
    /// that runs the call.
    fn into_request(self) -> attrflow::Result<RpcRequest> {
        let rpc_name = &self.rpc_name;
        let input = parse_json(&self.input_json, || format!("input of RPC {rpc_name}"))?;
        Ok(RpcRequest {
            flow_type: self.flow_type,
            flow_id: self.flow_id,
            rpc_name: self.rpc_name,
            input,
            options: self.options,
        })
    }
}

impl NativeRuntime {
    fn rpc_call(
        &self,
        py: Python<'_>,
        (flow_type, flow_id, rpc_name, input_json): (String, String, String, String),
        lock_instances: &[InstanceArg],
        load_instances: &[InstanceArg],
        run_id: Option<String>,
    ) -> PyResult<RpcCall> {
        Ok(RpcCall {
            runtime: self.runtime().into_py_result(py)?,
            flow_type,
            flow_id,
            rpc_name,
            input_json,
            options: RpcInvokeOptions {
                lock_attribute_map_instances: instances(lock_instances),
                load_attribute_map_instances: instances(load_instances),
                run_id,
            },
        })
    }

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

/// Runs `work` here with the GIL released and returns what `finish` makes of its result,
/// or with `done` hands both to a worker thread ([`executor::submit`]) and returns `done`'s
/// future; with `done` and `in_place` (work that waits for no writer), runs it here when it
/// is the event loop's only call ([`executor::Completions::may_run_in_place`]).
fn here_or_on_a_worker<'py, T, W, F>(
    py: Python<'py>,
    done: Option<executor::Done>,
    in_place: bool,
    work: W,
    finish: F,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    match done {
        Some((completions, _)) if in_place && completions.get().may_run_in_place() => {
            let result = completions.get().run_in_place(py, work);
            Ok(finish(py, result)?.into_bound(py))
        }
        Some(done) => executor::submitted(py, done, |done| executor::submit(done, work, finish)),
        None => Ok(finish(py, py.detach(work))?.into_bound(py)),
    }
}

/// Where a flow stands, as the tuple `describe_flow` returns: `(flow_id, run_id,
/// flow_type, status, started_at_ms, closed_at_ms, reason)`.
fn summary_tuple(py: Python<'_>, summary: FlowSummary) -> PyResult<Py<PyAny>> {
    let (closed_at_ms, reason) = match summary.closed {
        Some(closed) => (Some(closed.closed_at_ms), closed.reason),
        None => (None, None),
    };
    Ok((
        summary.flow_id,
        summary.run_id,
        summary.flow_type,
        summary.status.as_str(),
        summary.started_at_ms,
        closed_at_ms,
        reason,
    )
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

/// Runs an RPC call on this thread with the GIL released (`in_place`: timed as a lone read
/// of the event loop's, [`executor::Completions::run_in_place`]) and returns its output
/// decoded by `decoder`, or with `as_json` written along its type as compact JSON bytes.
fn call_here<'py>(
    py: Python<'py>,
    call: RpcCall,
    decoder: &Py<Decoder>,
    what: &str,
    as_json: bool,
    in_place: Option<&executor::Completions>,
) -> PyResult<Bound<'py, PyAny>> {
    fn run<T: Send>(
        py: Python<'_>,
        in_place: Option<&executor::Completions>,
        work: impl FnOnce() -> T + Send,
    ) -> T {
        match in_place {
            Some(queue) => queue.run_in_place(py, work),
            None => py.detach(work),
        }
    }
    if as_json {
        let encoder = decoder.get();
        let output = run(py, in_place, move || {
            transcode::encode_output(call.run(), encoder)
        });
        transcode::encoded(py, output, what)
    } else {
        let output = run(py, in_place, move || call.run()).into_py_result(py)?;
        decode_output(py, &output, decoder.get(), what)
    }
}

fn start_flow(
    runtime: &Runtime,
    flow_type: &str,
    flow_id: &str,
    mut options: StartFlowOptions,
    initial: Vec<InitialArg>,
) -> attrflow::Result<String> {
    for (name, instance, json) in initial {
        let value = parse_json(&json, || match &instance {
            Some(instance) => format!("initial value of {name}/{instance}"),
            None => format!("initial value of {name}"),
        })?;
        options = match instance {
            Some(instance) => options.with_map_instance(name.0, instance.0, value),
            None => options.with_attribute(name.0, value),
        };
    }
    runtime.start_flow(flow_type, flow_id, &options)
}

/// An RPC's output decoded by `decoder`: text in one pass, a value by walking it.
fn decode_output<'py>(
    py: Python<'py>,
    output: &RpcOutput,
    decoder: &Decoder,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match output {
        RpcOutput::Json(text) => decoder.decode_text(py, text.get(), what),
        RpcOutput::Value(value) => decoder.decode(py, value, what),
    }
}

/// Whether `value` is or has a list among its fields: many allocations to free.
fn holds_a_list(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(fields) => fields.values().any(Value::is_array),
        _ => false,
    }
}

fn parse_json(json: &str, what: impl Fn() -> String) -> attrflow::Result<Value> {
    attrflow::json::parse(json, what)
}

fn instances(pairs: &[InstanceArg]) -> Vec<MapInstance> {
    pairs
        .iter()
        .map(|(map, instance)| MapInstance::new(map.0.clone(), instance.0.clone()))
        .collect()
}

/// The singleton Attribute `name`, or with `instance` that instance of the AttributeMap
/// `name`.
fn value_target(name: Text, instance: Option<Text>) -> LockTarget {
    match instance {
        Some(instance) => LockTarget::MapInstance(MapInstance::new(name.0, instance.0)),
        None => LockTarget::Attribute(name.0),
    }
}
