//! `attrflow._native.RpcContext`: a Python handler's window on the core's
//! [`attrflow::RpcContext`] for exactly one call.
//!
//! Every read and write goes to the core context, so the rules of a snapshot (not loaded
//! versus absent, staged writes read first, names checked) exist once, in the core. The
//! window is closed when the handler returns, however it returns; a handler that kept the
//! object and uses it later gets an `InvalidInputError` instead of touching freed memory.

use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};

use attrflow::{Error, RpcContext};
use pyo3::prelude::*;
use serde_json::Value;

use crate::errors::IntoPyResult;
use crate::text::{JsonText, Text};

/// The core context of the call in progress, its lifetime erased.
struct OpenContext(NonNull<RpcContext<'static>>);

// SAFETY: the pointer is only dereferenced while `NativeRpcContext::context` holds the
// mutex, and only between `ContextWindow::open` and the window's drop, while the handler
// that owns the `&mut RpcContext` waits for the Python call to return and touches the
// context no other way. `RpcContext` itself is `Send`.
unsafe impl Send for OpenContext {}

/// The context of one running Python handler.
#[pyclass(frozen, name = "RpcContext", module = "attrflow._native")]
pub(crate) struct NativeRpcContext {
    flow_id: String,
    run_id: String,
    context: Mutex<Option<OpenContext>>,
}

/// Keeps a [`NativeRpcContext`] open while it lives and closes it when dropped, also when
/// the handler unwinds.
pub(crate) struct ContextWindow<'a> {
    handle: &'a NativeRpcContext,
}

impl<'a> ContextWindow<'a> {
    /// Opens `handle` on `context` until the window is dropped.
    pub(crate) fn open(handle: &'a NativeRpcContext, context: &'a mut RpcContext<'_>) -> Self {
        let erased = NonNull::from(context).cast::<RpcContext<'static>>();
        *handle.lock() = Some(OpenContext(erased));
        ContextWindow { handle }
    }
}

impl Drop for ContextWindow<'_> {
    fn drop(&mut self) {
        *self.handle.lock() = None;
    }
}

impl NativeRpcContext {
    /// A closed context for the run `run_id` of the flow `flow_id`; open it with
    /// [`ContextWindow::open`].
    pub(crate) fn new(flow_id: String, run_id: String) -> Self {
        NativeRpcContext {
            flow_id,
            run_id,
            context: Mutex::new(None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<OpenContext>> {
        self.context.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn with<R>(
        &self,
        action: impl FnOnce(&mut RpcContext<'_>) -> attrflow::Result<R>,
    ) -> attrflow::Result<R> {
        let mut open = self.lock();
        let Some(OpenContext(pointer)) = open.as_mut() else {
            return Err(Error::invalid_input(format!(
                "the RPC context of flow {:?} was used after its handler returned",
                self.flow_id
            )));
        };
        // SAFETY: see `OpenContext`; the mutex guard is held for the whole access.
        let context = unsafe { pointer.as_mut() };
        action(context)
    }
}

#[pymethods]
impl NativeRpcContext {
    /// The ID of the flow the RPC runs on.
    #[getter]
    fn flow_id(&self) -> &str {
        &self.flow_id
    }

    /// The ID of the flow's run (what starting it returned).
    #[getter]
    fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The singleton Attribute's value as JSON text, `None` when it holds none.
    fn attribute(&self, py: Python<'_>, name: Text) -> PyResult<Option<String>> {
        self.with(|ctx| Ok(ctx.attribute(&name)?.map(Value::to_string)))
            .into_py_result(py)
    }

    /// Stages a new value (JSON text) of a singleton Attribute.
    fn set_attribute(&self, py: Python<'_>, name: Text, json: JsonText) -> PyResult<()> {
        self.with(|ctx| ctx.set_attribute(&name, parse(&json, &name)?))
            .into_py_result(py)
    }

    /// A map instance's value as JSON text, `None` when loaded but absent; raises
    /// `AttributeMapNotLoadedError` for an instance the call did not load.
    fn map_instance(&self, py: Python<'_>, map: Text, instance: Text) -> PyResult<Option<String>> {
        self.with(|ctx| Ok(ctx.map_instance(&map, &instance)?.map(Value::to_string)))
            .into_py_result(py)
    }

    /// The keys of the map's instances that hold a value in this call's view (loaded, or
    /// staged by it), sorted.
    fn map_instance_keys(&self, py: Python<'_>, map: Text) -> PyResult<Vec<String>> {
        self.with(|ctx| ctx.map_instance_keys(&map))
            .into_py_result(py)
    }

    /// Stages a new value (JSON text) of a map instance.
    fn set_map_instance(
        &self,
        py: Python<'_>,
        map: Text,
        instance: Text,
        json: JsonText,
    ) -> PyResult<()> {
        self.with(|ctx| ctx.set_map_instance(&map, &instance, parse(&json, &map)?))
            .into_py_result(py)
    }

    /// Stages the deletion of a map instance.
    fn delete_map_instance(&self, py: Python<'_>, map: Text, instance: Text) -> PyResult<()> {
        self.with(|ctx| ctx.delete_map_instance(&map, &instance))
            .into_py_result(py)
    }

    fn __repr__(&self) -> String {
        let state = if self.lock().is_some() {
            "open"
        } else {
            "closed"
        };
        format!(
            "<attrflow._native.RpcContext of flow {:?} ({state})>",
            self.flow_id
        )
    }
}

fn parse(json: &str, name: &str) -> attrflow::Result<Value> {
    attrflow::json::parse(json, || format!("value written to {name:?}"))
}
