//! The app log (`ChunkedLogFlow`) for Python: its layout constants and the chunk-key rule,
//! so `attrflow.flows.app_log` repeats neither.

use attrflow::chunked_log::IDEMPOTENCY_INSTANCE;
use attrflow::flows::app_log;
use pyo3::prelude::*;

use crate::errors::IntoPyResult;
use crate::text::Text;

/// The chunk instance key holding `log`'s page `page_token` (`audit.current`, …); raises
/// `InvalidInputError` for a bad log name and `InvalidPageTokenError` for a bad token.
#[pyfunction]
fn app_log_page_chunk_key(py: Python<'_>, log: Text, page_token: Text) -> PyResult<String> {
    app_log::page_chunk_key(&log, &page_token).into_py_result(py)
}

/// Adds the app log's constants and functions to the native module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(app_log_page_chunk_key, m)?)?;
    let names = [
        ("APP_LOG_FLOW_TYPE", app_log::FLOW_TYPE),
        ("APP_LOG_STATES_MAP", app_log::LOG_STATES_MAP),
        ("APP_LOG_CHUNKS_MAP", app_log::LOG_CHUNKS_MAP),
        ("APP_LOG_APPEND_LOG_RECORD", app_log::APPEND_LOG_RECORD),
        ("APP_LOG_GET_LOG_PAGE", app_log::GET_LOG_PAGE),
        ("APP_LOG_APPEND_LOG_RECORDS", app_log::APPEND_LOG_RECORDS),
        (
            "APP_LOG_APPEND_LOG_RECORD_ONCE",
            app_log::APPEND_LOG_RECORD_ONCE,
        ),
        ("APP_LOG_IDEMPOTENCY_INSTANCE", IDEMPOTENCY_INSTANCE),
    ];
    for (name, value) in names {
        m.add(name, value)?;
    }
    m.add("APP_LOG_CHUNK_SIZE", app_log::LOG_CHUNK_SIZE)
}
