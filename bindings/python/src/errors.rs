//! `attrflow::Error` → the exception classes of `attrflow.errors`.
//!
//! The classes are defined in pure Python (so they can inherit from `ValueError` and
//! `LookupError`, carry documented attributes and be type-checked); this module imports
//! each one once and raises it with the core's message unchanged.

use attrflow::Error;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The Python module that defines the exception classes.
const ERRORS_MODULE: &str = "attrflow.errors";

static LOCK_CONFLICT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FLOW_NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FLOW_ALREADY_STARTED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_INPUT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_PAGE_TOKEN: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PAGE_NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static RECORD_NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NOT_LOADED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static WORKER_INVOCATION: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static STORAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static STORAGE_FULL: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The Python exception for a core error: the class of its variant, called with the
/// core's `Display` text followed by the variant's fields.
///
/// If `attrflow.errors` cannot be imported, the import failure is returned instead, so
/// nothing is ever silently swallowed.
pub(crate) fn to_py_err(py: Python<'_>, error: Error) -> PyErr {
    let message = error.to_string();
    let (cell, name, args): (_, _, Vec<String>) = match error {
        Error::LockConflict(_) => (&LOCK_CONFLICT, "RpcLockConflictError", vec![]),
        Error::FlowNotFound { flow_id } => (&FLOW_NOT_FOUND, "FlowNotFoundError", vec![flow_id]),
        Error::FlowAlreadyStarted { flow_id, run_id } => (
            &FLOW_ALREADY_STARTED,
            "FlowAlreadyStartedError",
            vec![flow_id, run_id],
        ),
        Error::InvalidInput(_) => (&INVALID_INPUT, "InvalidInputError", vec![]),
        Error::InvalidPageToken { token } => {
            (&INVALID_PAGE_TOKEN, "InvalidPageTokenError", vec![token])
        }
        Error::PageNotFound(_) => (&PAGE_NOT_FOUND, "PageNotFoundError", vec![]),
        Error::RecordNotFound(_) => (&RECORD_NOT_FOUND, "RecordNotFoundError", vec![]),
        Error::AttributeMapNotLoaded { physical_name } => (
            &NOT_LOADED,
            "AttributeMapNotLoadedError",
            vec![physical_name],
        ),
        Error::HandlerFailure {
            error_type,
            message: detail,
        } => (
            &WORKER_INVOCATION,
            "WorkerInvocationError",
            vec![error_type, detail],
        ),
        Error::Storage(_) => (&STORAGE, "StorageError", vec![]),
        Error::StorageFull(_) => (&STORAGE_FULL, "StorageFullError", vec![]),
    };
    match cell.import(py, ERRORS_MODULE, name) {
        Ok(class) => {
            let mut all = Vec::with_capacity(args.len() + 1);
            all.push(message);
            all.extend(args);
            match pyo3::types::PyTuple::new(py, all) {
                Ok(args) => PyErr::from_type(class.clone(), args.unbind()),
                Err(err) => err,
            }
        }
        Err(import_error) => import_error,
    }
}

/// Converts core results into Python results.
pub(crate) trait IntoPyResult<T> {
    /// The value, or the core error raised as its Python exception.
    fn into_py_result(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for attrflow::Result<T> {
    fn into_py_result(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| to_py_err(py, error))
    }
}
