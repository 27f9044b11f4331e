//! `attrflow._native`: the PyO3 bridge between the Python package `attrflow` and the Rust
//! core.
//!
//! The bridge only translates. Values cross as JSON text, and outputs are built straight
//! into the Python types the Python codec describes (`decode`); errors cross as the exception classes of `attrflow.errors`, and every
//! rule — names, tokens, chunking, locking — stays in the core. Store work runs with the
//! GIL released, so Python threads and asyncio executors calling in really overlap.

mod app_log;
mod cli;
mod decode;
mod encode;
mod errors;
mod executor;
mod flow_clients;
mod functions;
mod integers;
mod metrics;
mod mismatch;
mod python_flow;
mod python_type_name;
mod rpc_call;
mod rpc_context;
mod runtime;
mod text;
mod transcode;
mod wait_timeout;

use attrflow::flows::{chunked_subscriber, customer_directory};
use pyo3::prelude::*;

/// The extension's Rust allocations go to mimalloc rather than the C library's `malloc`. A
/// call builds and frees many small values (an output's JSON tree, a page's strings), often
/// freeing on one thread what another made: serving archived pages under load, glibc's
/// allocator took about a quarter of the service's CPU, mimalloc about a twelfth
/// (bench/notes/3b-python.md). Python's own objects keep Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native module. Its Python face is described by `attrflow/_native.pyi`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<runtime::NativeRuntime>()?;
    m.add_class::<rpc_context::NativeRpcContext>()?;
    m.add_class::<decode::Decoder>()?;
    m.add_class::<rpc_call::RpcCallArgs>()?;
    m.add_class::<executor::Completions>()?;
    m.add_function(wrap_pyfunction!(executor::wait_for_calls, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate_flow_id, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate_definition_name, m)?)?;
    m.add_function(wrap_pyfunction!(functions::instance_physical_name, m)?)?;
    m.add_function(wrap_pyfunction!(
        functions::validate_subscriber_page_token,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(functions::archive_chunk_token, m)?)?;
    m.add_function(wrap_pyfunction!(functions::canonical_email, m)?)?;
    m.add_function(wrap_pyfunction!(functions::customer_profile_partition, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate_page_token_form, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate_idempotency_key, m)?)?;
    m.add("ERROR_KINDS", errors::kind_names())?;
    add_chunked_subscriber_constants(m)?;
    add_chunked_log_limits(m)?;
    app_log::add_to(m)?;
    metrics::add_to(m)?;
    flow_clients::add_to(m)?;
    add_customer_directory_constants(m)
}

/// The layout constants of `CustomerDirectoryFlow`.
fn add_customer_directory_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use customer_directory as cd;
    let names = [
        ("CUSTOMER_DIRECTORY_FLOW_TYPE", cd::FLOW_TYPE),
        ("CUSTOMER_DIRECTORY_FLOW_ID", cd::FLOW_ID),
        ("CUSTOMER_DIRECTORY_PROFILES_MAP", cd::PROFILES_MAP),
        (
            "CUSTOMER_DIRECTORY_UPSERT_CUSTOMER_PROFILE",
            cd::UPSERT_CUSTOMER_PROFILE,
        ),
        (
            "CUSTOMER_DIRECTORY_GET_CUSTOMER_PROFILE_BY_EMAIL",
            cd::GET_CUSTOMER_PROFILE_BY_EMAIL,
        ),
        (
            "CUSTOMER_DIRECTORY_DELETE_CUSTOMER_PROFILE",
            cd::DELETE_CUSTOMER_PROFILE,
        ),
    ];
    for (name, value) in names {
        m.add(name, value)?;
    }
    m.add("CUSTOMER_DIRECTORY_PARTITION_COUNT", cd::PARTITION_COUNT)
}

/// The RPC names and limits of chunk-size changes, batch and idempotent appends.
fn add_chunked_log_limits(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use attrflow::chunked_log as log;
    use chunked_subscriber as cs;
    let names = [
        (
            "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBERS",
            cs::REGISTER_SUBSCRIBERS,
        ),
        (
            "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER_ONCE",
            cs::REGISTER_SUBSCRIBER_ONCE,
        ),
        (
            "CHUNKED_SUBSCRIBER_CHANGE_CHUNK_SIZE",
            cs::CHANGE_SUBSCRIBER_CHUNK_SIZE,
        ),
        (
            "CHUNKED_SUBSCRIBER_SET_IDEMPOTENCY_WINDOW",
            cs::SET_SUBSCRIBER_IDEMPOTENCY_WINDOW,
        ),
        ("CHUNKED_SUBSCRIBER_TRIM_SUBSCRIBERS", cs::TRIM_SUBSCRIBERS),
        (
            "CHUNKED_SUBSCRIBER_SET_RETENTION",
            cs::SET_SUBSCRIBER_RETENTION,
        ),
        (
            "CHUNKED_SUBSCRIBER_READ_SUBSCRIBERS_FROM",
            cs::READ_SUBSCRIBERS_FROM,
        ),
    ];
    for (name, value) in names {
        m.add(name, value)?;
    }
    m.add("MAX_BATCH_SIZE", log::MAX_BATCH_SIZE)?;
    m.add("MAX_READ_RECORDS", log::MAX_READ_RECORDS)?;
    m.add(
        "MAX_TAIL_TIMEOUT_SECONDS",
        log::MAX_TAIL_TIMEOUT.as_secs_f64(),
    )?;
    m.add("MAX_CHUNK_SIZE", log::MAX_CHUNK_SIZE)?;
    m.add("MAX_LAYOUTS", log::MAX_LAYOUTS)?;
    m.add("MAX_IDEMPOTENCY_KEY_LEN", log::MAX_IDEMPOTENCY_KEY_LEN)?;
    let window = log::IdempotencyWindow::DEFAULT;
    m.add("DEFAULT_IDEMPOTENCY_MAX_KEYS", window.max_keys)?;
    m.add("DEFAULT_IDEMPOTENCY_MAX_AGE_MS", window.max_age_ms)
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
