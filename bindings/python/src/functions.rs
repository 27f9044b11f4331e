//! Module-level functions: the core's validators and token helpers, unchanged.

use attrflow::flows::{chunked_subscriber, customer_directory};
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::errors::{to_py_err, IntoPyResult};

/// Checks a flow ID; raises `InvalidInputError` naming what is wrong.
#[pyfunction]
pub(crate) fn validate_flow_id(py: Python<'_>, flow_id: &str) -> PyResult<()> {
    attrflow::names::validate_flow_id(flow_id).into_py_result(py)
}

/// Checks the name of an Attribute, AttributeMap, RPC or flow type (`what` says which, for
/// the message); raises `InvalidInputError` for a blank name or one containing `/`.
#[pyfunction]
pub(crate) fn validate_definition_name(py: Python<'_>, what: &str, name: &str) -> PyResult<()> {
    attrflow::names::validate_definition_name(what, name).into_py_result(py)
}

/// The physical name `<map>/<instance>` of a map instance, after checking the instance key;
/// raises `InvalidInputError` for an empty key or one containing `/`.
#[pyfunction]
pub(crate) fn instance_physical_name(
    py: Python<'_>,
    map: &str,
    instance: &str,
) -> PyResult<String> {
    attrflow::names::instance_physical_name(map, instance).into_py_result(py)
}

/// Checks a subscriber page token and returns the token to use (`current` for `""`);
/// raises `InvalidPageTokenError` with `invalid page token "<token>"`.
#[pyfunction]
pub(crate) fn validate_subscriber_page_token(py: Python<'_>, token: &str) -> PyResult<String> {
    chunked_subscriber::validate_subscriber_page_token(token).into_py_result(py)
}

/// The archive token of the subscriber chunk whose first sequence is `first_sequence`:
/// the sequence zero-padded to 20 digits. An integer outside 0..=2⁶⁴-1 raises
/// `InvalidInputError` (not `OverflowError`), as every other bad input does.
#[pyfunction]
pub(crate) fn archive_chunk_token(first_sequence: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = first_sequence.py();
    if first_sequence.is_instance_of::<PyInt>() {
        let Ok(first) = first_sequence.extract::<u64>() else {
            let error = attrflow::Error::invalid_input(format!(
                "first sequence must be from 0 to {}, not {first_sequence}",
                u64::MAX
            ));
            return Err(to_py_err(py, error));
        };
        return Ok(chunked_subscriber::archive_chunk_token(first));
    }
    let first: u64 = first_sequence.extract()?;
    Ok(chunked_subscriber::archive_chunk_token(first))
}

/// The canonical form of an email address (ASCII only, trimmed, A-Z lowercased); raises
/// `InvalidInputError` with the pattern's message otherwise.
#[pyfunction]
pub(crate) fn canonical_email(py: Python<'_>, email_address: &str) -> PyResult<String> {
    customer_directory::canonical_email(email_address).into_py_result(py)
}

/// The bucket instance (`partition-NNN`) holding the profile of `email_address`.
#[pyfunction]
pub(crate) fn customer_profile_partition(py: Python<'_>, email_address: &str) -> PyResult<String> {
    customer_directory::profile_partition(email_address).into_py_result(py)
}

/// Checks only a page token's form (`""`, `current`, or 20 digits, not all zero), as a
/// caller does before loading the token's chunk under any layout history, and returns the
/// token to use (`current` for `""`); raises `InvalidPageTokenError` with
/// `invalid page token "<token>"`.
#[pyfunction]
pub(crate) fn validate_page_token_form(py: Python<'_>, token: &str) -> PyResult<String> {
    chunked_subscriber::validate_page_token_form(token).into_py_result(py)
}

/// Checks an idempotency key; raises `InvalidInputError` naming what is wrong.
#[pyfunction]
pub(crate) fn validate_idempotency_key(py: Python<'_>, key: &str) -> PyResult<()> {
    attrflow::chunked_log::validate_idempotency_key(key).into_py_result(py)
}
