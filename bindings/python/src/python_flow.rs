//! Flow types defined in Python: a core [`FlowDefinition`] whose handlers call back into
//! Python.
//!
//! The definition is built and checked by the core, so a Python flow obeys the same rules
//! as a Rust one. Each handler runs inside the core's RPC (after the locks are taken and
//! the snapshot is read, before the commit): it attaches to the interpreter, hands the
//! Python callable a [`NativeRpcContext`] open for this call only, and turns what Python
//! returns or raises into the core's result. The thread waiting here holds the store's
//! write turn; that is safe because no thread ever waits for the store while attached
//! (every store call detaches first).

use attrflow::definition::FlowDefinition;
use attrflow::{Error, RpcContext, RpcDefinition, RpcOutput};
use pyo3::prelude::*;
use pyo3::types::PyTypeMethods;
use serde_json::Value;

use crate::rpc_context::{ContextWindow, NativeRpcContext};

/// A lock as Python passes it: the Attribute or AttributeMap name and, for a map, the
/// instance (`None` asks the core to lock the name itself).
pub(crate) type LockArg = (String, Option<String>);

/// A load as Python passes it: the map name and the instance key (`None` loads the map
/// whole).
pub(crate) type LoadArg = (String, Option<String>);

/// An RPC as Python passes it: name, locks, loads, whether it is transactional, the
/// callable `(context, input_json) -> output_json`, and whether it is read-only.
pub(crate) type RpcArg = (String, Vec<LockArg>, Vec<LoadArg>, bool, Py<PyAny>, bool);

/// The core definition of a Python flow type, checked by the core's builder.
pub(crate) fn definition(
    flow_type: String,
    attributes: Vec<String>,
    maps: Vec<String>,
    rpcs: Vec<RpcArg>,
) -> attrflow::Result<FlowDefinition> {
    let mut builder = FlowDefinition::builder(flow_type);
    for attribute in attributes {
        builder = builder.attribute(attribute);
    }
    for map in maps {
        builder = builder.map(map);
    }
    for (name, locks, loads, transactional, handler, read_only) in rpcs {
        let mut rpc = RpcDefinition::new_with_output(name, move |ctx, input| {
            call_python(&handler, ctx, input)
        });
        for (target, instance) in locks {
            rpc = match instance {
                Some(instance) => rpc.lock_map_instance(target, instance),
                None => rpc.lock_attribute(target),
            };
        }
        for (map, instance) in loads {
            rpc = match instance {
                Some(instance) => rpc.load_map_instance(map, instance),
                None => rpc.load_map(map),
            };
        }
        if transactional {
            rpc = rpc.transactional();
        }
        if read_only {
            rpc = rpc.read_only();
        }
        builder = builder.rpc(rpc);
    }
    builder.build()
}

fn call_python(
    handler: &Py<PyAny>,
    ctx: &mut RpcContext<'_>,
    input: Value,
) -> attrflow::Result<RpcOutput> {
    let input_json = input.to_string();
    let (flow_id, run_id) = (ctx.flow_id().to_owned(), ctx.run_id().to_owned());
    Python::attach(|py| {
        let handle =
            Bound::new(py, NativeRpcContext::new(flow_id, run_id)).map_err(|e| failure(py, &e))?;
        let output = {
            let _window = ContextWindow::open(handle.get(), ctx);
            handler.call1(py, (handle.clone(), input_json))
        };
        let output: String = output
            .and_then(|value| value.extract(py))
            .map_err(|e| failure(py, &e))?;
        // Kept as the handler wrote it: its caller decodes the text in one pass.
        attrflow::json::check_text(output, || "the output of a Python handler".into())
            .map(RpcOutput::Json)
            .map_err(|e| Error::handler(e.to_string()))
    })
}

/// A Python exception as the core's handler failure: its type's qualified name and its
/// message.
fn failure(py: Python<'_>, error: &PyErr) -> Error {
    let error_type = error
        .get_type(py)
        .qualname()
        .map(|name| name.to_string())
        .unwrap_or_default();
    let message = error
        .value(py)
        .str()
        .map(|text| text.to_string())
        .unwrap_or_else(|_| "<exception without a printable message>".to_owned());
    // An exception raised without a message (`KeyboardInterrupt`, `raise ValueError`) is
    // named by its type, so the caller's error never reads as empty.
    let message = if message.is_empty() {
        format!("{error_type} (raised without a message)")
    } else {
        message
    };
    Error::HandlerFailure {
        error_type,
        message,
    }
}
