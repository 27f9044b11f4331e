//! `attrflow._native.RpcCall`: one RPC call as `attrflow.Client` hands it to
//! `Runtime.call_rpc`, its parts by name instead of a row of positional arguments.

use pyo3::prelude::*;

use crate::decode::Decoder;
use crate::text::Text;

/// A `(map name, instance key)` pair as Python passes it.
pub(crate) type InstanceArg = (Text, Text);

/// One RPC call: which RPC of which flow, its input (JSON text, or with `input_type` a value
/// encoded along that type), the per-call locks and loads as `(map, instance)` pairs (none:
/// the core plans them from the input), the run it means (`""`: the current one), and how
/// its output is decoded (`decoder`, named `what` in errors).
#[pyclass(frozen, name = "RpcCall", module = "attrflow._native")]
pub(crate) struct RpcCallArgs {
    pub(crate) decoder: Py<Decoder>,
    pub(crate) what: String,
    pub(crate) flow_type: String,
    pub(crate) flow_id: String,
    pub(crate) rpc_name: String,
    pub(crate) input: Py<PyAny>,
    pub(crate) lock_instances: Vec<InstanceArg>,
    pub(crate) load_instances: Vec<InstanceArg>,
    pub(crate) run_id: String,
    pub(crate) input_type: Option<Py<Decoder>>,
}

#[pymethods]
impl RpcCallArgs {
    #[new]
    #[pyo3(signature = (
        *,
        decoder,
        what,
        flow_type,
        flow_id,
        rpc_name,
        input,
        lock_instances = Vec::new(),
        load_instances = Vec::new(),
        run_id = Text::default(),
        input_type = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        decoder: Py<Decoder>,
        what: String,
        flow_type: Text,
        flow_id: Text,
        rpc_name: Text,
        input: Py<PyAny>,
        lock_instances: Vec<InstanceArg>,
        load_instances: Vec<InstanceArg>,
        run_id: Text,
        input_type: Option<Py<Decoder>>,
    ) -> Self {
        RpcCallArgs {
            decoder,
            what,
            flow_type: flow_type.0,
            flow_id: flow_id.0,
            rpc_name: rpc_name.0,
            input,
            lock_instances,
            load_instances,
            run_id: run_id.0,
            input_type,
        }
    }

    /// The RPC's name.
    #[getter]
    fn rpc_name(&self) -> &str {
        &self.rpc_name
    }

    /// The flow it runs on.
    #[getter]
    fn flow_id(&self) -> &str {
        &self.flow_id
    }

    fn __repr__(&self) -> String {
        format!(
            "<attrflow._native.RpcCall {}.{} on {:?}>",
            self.flow_type, self.rpc_name, self.flow_id
        )
    }
}
