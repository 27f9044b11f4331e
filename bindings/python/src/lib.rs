//! `attrflow._native`: the PyO3 bridge between the Python package `attrflow` and the Rust
//! core.
//!
//! The bridge only translates. Values cross as JSON text (the Python package owns the
//! dataclass codec), errors cross as the exception classes of `attrflow.errors`, and every
//! rule — names, tokens, chunking, locking — stays in the core. Store work runs with the
//! GIL released, so Python threads and asyncio executors calling in really overlap.

mod app_log;
mod errors;
mod functions;
mod runtime;

use attrflow::flows::chunked_subscriber;
use pyo3::prelude::*;

/// The native module. Its Python face is described by `attrflow/_native.pyi`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<runtime::NativeRuntime>()?;
    m.add_function(wrap_pyfunction!(functions::validate_flow_id, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate_definition_name, m)?)?;
    m.add_function(wrap_pyfunction!(functions::instance_physical_name, m)?)?;
    m.add_function(wrap_pyfunction!(
        functions::validate_subscriber_page_token,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(functions::archive_chunk_token, m)?)?;
    app_log::add_to(m)?;
    add_chunked_subscriber_constants(m)
}

/// The layout constants of `ChunkedSubscriberFlow`, so Python never repeats their values.
fn add_chunked_subscriber_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use chunked_subscriber as cs;
    let names = [
        ("CHUNKED_SUBSCRIBER_FLOW_TYPE", cs::FLOW_TYPE),
        ("CHUNKED_SUBSCRIBER_FLOW_ID", cs::FLOW_ID),
        (
            "CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE",
            cs::CURRENT_CHUNK_INSTANCE,
        ),
        (
            "CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE",
            cs::ARCHIVE_STATE_ATTRIBUTE,
        ),
        ("CHUNKED_SUBSCRIBER_CHUNKS_MAP", cs::SUBSCRIBER_CHUNKS_MAP),
        (
            "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER",
            cs::REGISTER_SUBSCRIBER,
        ),
        (
            "CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE",
            cs::GET_SUBSCRIBER_PAGE,
        ),
    ];
    for (name, value) in names {
        m.add(name, value)?;
    }
    m.add("CHUNKED_SUBSCRIBER_CHUNK_SIZE", cs::SUBSCRIBER_CHUNK_SIZE)
}
