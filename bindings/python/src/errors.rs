//! `attrflow::Error` → the exception classes of `attrflow.errors`.
//!
//! The classes, and the one table from core error kind to class, live in pure Python (so
//! they can inherit from `ValueError` and `LookupError`, carry documented attributes and be
//! type-checked). This module only hands each error across: its kind's name, the core's
//! message unchanged, and the variant's fields by name.

use attrflow::Error;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// The Python module that defines the exception classes and the kind table.
const ERRORS_MODULE: &str = "attrflow.errors";
/// The function of [`ERRORS_MODULE`] that builds the exception for a core error.
const FROM_CORE: &str = "from_core_error";

static FACTORY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python exception for a core error, built by `attrflow.errors.from_core_error` from
/// the kind's name, the core's `Display` text and the variant's fields.
///
/// If `attrflow.errors` cannot be imported or the call fails, that failure is returned
/// instead, so nothing is ever silently swallowed.
pub(crate) fn to_py_err(py: Python<'_>, error: Error) -> PyErr {
    let kind = error.kind().name();
    let message = error.to_string();
    let mut numbers: Vec<(&str, u64)> = Vec::new();
    let fields: Vec<(&str, String)> = match error {
        Error::FlowNotFound { flow_id } => vec![("flow_id", flow_id)],
        Error::FlowNotActive { flow_id, status } => {
            vec![("flow_id", flow_id), ("status", status.as_str().to_owned())]
        }
        Error::FlowAlreadyStarted {
            flow_id,
            run_id,
            status,
        } => vec![
            ("flow_id", flow_id),
            ("run_id", run_id),
            ("status", status.as_str().to_owned()),
        ],
        Error::RunNotCurrent {
            flow_id,
            run_id,
            current_run_id,
        } => vec![
            ("flow_id", flow_id),
            ("run_id", run_id),
            ("current_run_id", current_run_id),
        ],
        Error::InvalidPageToken { token } => vec![("token", token)],
        Error::PageTrimmed {
            token,
            oldest_token,
            oldest_sequence,
        } => {
            numbers.push(("oldest_sequence", oldest_sequence));
            vec![("token", token), ("oldest_token", oldest_token)]
        }
        Error::RecordTrimmed {
            sequence,
            oldest_sequence,
        } => {
            numbers.push(("sequence", sequence));
            numbers.push(("oldest_sequence", oldest_sequence));
            vec![]
        }
        Error::AttributeMapNotLoaded { physical_name } => {
            vec![("physical_name", physical_name)]
        }
        Error::HandlerFailure {
            error_type,
            message: detail,
        } => vec![
            ("worker_error_type", error_type),
            ("worker_error_detail", detail),
        ],
        Error::LockConflict(_)
        | Error::InvalidInput(_)
        | Error::PageNotFound(_)
        | Error::RecordNotFound(_)
        | Error::Storage(_)
        | Error::StorageFull(_) => vec![],
    };
    let built = (|| -> PyResult<PyErr> {
        let factory = FACTORY.import(py, ERRORS_MODULE, FROM_CORE)?;
        let keywords = PyDict::new(py);
        for (name, value) in fields {
            keywords.set_item(name, value)?;
        }
        for (name, value) in numbers {
            keywords.set_item(name, value)?;
        }
        let exception = factory.call((kind, message), Some(&keywords))?;
        Ok(PyErr::from_value(exception))
    })();
    built.unwrap_or_else(|failure| failure)
}

/// The names of every core error kind, for the test that `attrflow.errors` maps each one.
pub(crate) fn kind_names() -> Vec<&'static str> {
    attrflow::ErrorKind::ALL
        .iter()
        .map(|kind| kind.name())
        .collect()
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
