//! Verifiable logs for Python (issue 53): the signer key as Python passes it (text or the
//! bytes of it), and the tree head and proofs as the JSON the CLI prints (base64 hashes).
//! Every rule (the tree, the proofs, the note format) is the core's (`attrflow::verifiable`).

use attrflow::verifiable::{generate_key, ConsistencyProof, InclusionProof, NoteSigner, TreeHead};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::encode_error;
use crate::errors::{to_py_err, IntoPyResult};
use crate::text::Text;

/// The signer key `key` (`PRIVATE+KEY+<name>+<hash>+<base64>`, as `str` or as the UTF-8
/// `bytes` of it, as read from a key file), parsed for one call and never kept.
pub(super) fn signer(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<NoteSigner> {
    let text = match key.cast::<PyBytes>() {
        Ok(bytes) => std::str::from_utf8(bytes.as_bytes())
            .map_err(|_| {
                to_py_err(
                    py,
                    attrflow::Error::invalid_input("malformed key: a signer key is UTF-8 text"),
                )
            })?
            .to_owned(),
        Err(_) => key.extract::<Text>()?.into(),
    };
    NoteSigner::from_key_text(&text)
        .map_err(attrflow::Error::from)
        .into_py_result(py)
}

/// The error of a tree size argument `what` (`treeSize`, `from`, `to`) that is negative or
/// larger than any `u64`.
pub(super) fn size_out_of_range(what: &str, shown: &dyn std::fmt::Display) -> attrflow::Error {
    attrflow::Error::invalid_input(format!(
        "{what} must be a tree size from 0 to {}, not {shown}",
        u64::MAX
    ))
}

/// A tree head as JSON: `{"treeSize": M, "rootHash": "<base64>"}`.
pub(super) fn tree_head_json(head: attrflow::Result<TreeHead>) -> attrflow::Result<String> {
    let head = head?;
    serde_json::to_string(&serde_json::json!({
        "treeSize": head.tree_size,
        "rootHash": STANDARD.encode(head.root_hash),
    }))
    .map_err(encode_error)
}

/// An inclusion proof as the CLI prints it: `{"leafIndex", "treeSize", "hashes"}`.
pub(super) fn inclusion_json(proof: attrflow::Result<InclusionProof>) -> attrflow::Result<String> {
    serde_json::to_string(&proof?.to_json()).map_err(encode_error)
}

/// A consistency proof as the CLI prints it: `{"from", "to", "hashes"}`.
pub(super) fn consistency_json(
    proof: attrflow::Result<ConsistencyProof>,
) -> attrflow::Result<String> {
    serde_json::to_string(&proof?.to_json()).map_err(encode_error)
}

/// A new Ed25519 note key pair named `name`: `(signer key, verifier key)` as texts, in the
/// format of Go's `note.GenerateKey`. attrflow keeps neither.
#[pyfunction]
fn generate_note_key(py: Python<'_>, name: Text) -> PyResult<(String, String)> {
    generate_key(&name)
        .map_err(attrflow::Error::from)
        .into_py_result(py)
}

/// The verifier key text of the signer key `key` (text or bytes); raises
/// `InvalidInputError` for a malformed key.
#[pyfunction]
fn note_verifier_key(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(signer(py, key)?.verifier().key_text())
}

/// Adds the key functions to the native module.
pub(super) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate_note_key, m)?)?;
    m.add_function(wrap_pyfunction!(note_verifier_key, m)?)
}
