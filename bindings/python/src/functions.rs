//! Module-level functions: the core's validators and token helpers, unchanged.

use attrflow::chunked_log::token::first_sequence_out_of_range;
use attrflow::flows::{chunked_subscriber, customer_directory};
use pyo3::prelude::*;

use crate::errors::IntoPyResult;
use crate::integers::unsigned;
use crate::text::Text;

/// Checks a flow ID; raises `InvalidInputError` naming what is wrong.
#[pyfunction]
pub(crate) fn validate_flow_id(py: Python<'_>, flow_id: Text) -> PyResult<()> {
    attrflow::names::validate_flow_id(&flow_id).into_py_result(py)
}

/// Checks the name of an Attribute, AttributeMap, RPC or flow type (`what` says which, for
/// the message); raises `InvalidInputError` for a blank name or one containing `/`.
#[pyfunction]
pub(crate) fn validate_definition_name(py: Python<'_>, what: Text, name: Text) -> PyResult<()> {
    attrflow::names::validate_definition_name(&what, &name).into_py_result(py)
}

/// The physical name `<map>/<instance>` of a map instance, after checking the instance key;
/// raises `InvalidInputError` for an empty key or one containing `/`.
#[pyfunction]
pub(crate) fn instance_physical_name(
    py: Python<'_>,
    map: Text,
    instance: Text,
) -> PyResult<String> {
    attrflow::names::instance_physical_name(&map, &instance).into_py_result(py)
}

/// Checks a subscriber page token and returns the token to use (`current` for `""`);
/// raises `InvalidPageTokenError` with `invalid page token "<token>"`.
#[pyfunction]
pub(crate) fn validate_subscriber_page_token(py: Python<'_>, token: Text) -> PyResult<String> {
    chunked_subscriber::validate_subscriber_page_token(&token).into_py_result(py)
}

/// The archive token of the subscriber chunk whose first sequence is `first_sequence`:
/// the sequence zero-padded to 20 digits. An integer outside 1..=2⁶⁴-1 raises
/// `InvalidInputError` (not `OverflowError`), as every other bad input does.
#[pyfunction]
pub(crate) fn archive_chunk_token(first_sequence: &Bound<'_, PyAny>) -> PyResult<String> {
    let first = unsigned(first_sequence, |shown| first_sequence_out_of_range(shown))?;
    chunked_subscriber::archive_chunk_token(first).into_py_result(first_sequence.py())
}

/// The canonical form of an email address (ASCII only, trimmed, A-Z lowercased); raises
/// `InvalidInputError` with the pattern's message otherwise.
#[pyfunction]
pub(crate) fn canonical_email(py: Python<'_>, email_address: Text) -> PyResult<String> {
    customer_directory::canonical_email(&email_address).into_py_result(py)
}

/// The bucket instance (`partition-NNN`) holding the profile of `email_address`.
#[pyfunction]
pub(crate) fn customer_profile_partition(py: Python<'_>, email_address: Text) -> PyResult<String> {
    customer_directory::profile_partition(&email_address).into_py_result(py)
}

/// Checks only a page token's form (`""`, `current`, or 20 digits, not all zero), the same
/// check as `validate_subscriber_page_token`, and returns the
/// token to use (`current` for `""`); raises `InvalidPageTokenError` with
/// `invalid page token "<token>"`.
#[pyfunction]
pub(crate) fn validate_page_token_form(py: Python<'_>, token: Text) -> PyResult<String> {
    chunked_subscriber::validate_subscriber_page_token(&token).into_py_result(py)
}

/// Checks an idempotency key; raises `InvalidInputError` naming what is wrong.
#[pyfunction]
pub(crate) fn validate_idempotency_key(py: Python<'_>, key: Text) -> PyResult<()> {
    attrflow::chunked_log::validate_idempotency_key(&key).into_py_result(py)
}
