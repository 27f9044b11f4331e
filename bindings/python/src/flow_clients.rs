//! The core's flow clients for Python: one native class per log kind (`AppLog`,
//! `SubscriberArchive`, `CustomerDirectory`) exporting exactly the core client's operations,
//! the follow cursor, and the retry policy every call retries lock conflicts by (the core
//! retries; the binding never chooses by method name). What a call locks and loads is
//! planned by the core's definitions from the call's input, so no plan crosses; records and
//! results cross as JSON text.

mod app_log_client;
mod customer_directory_client;
mod follow_cursor;
mod retry_policy;
mod subscriber_archive_client;
mod verifiable;

use std::sync::Arc;
use std::time::Duration;

use attrflow::chunked_log::token::out_of_range;
use attrflow::chunked_log::{after_out_of_range, limit_out_of_range, Trim, TrimInput};
use attrflow::flows::app_log::AppLog as CoreAppLog;
use attrflow::flows::chunked_subscriber::SubscriberArchive as CoreArchive;
use attrflow::retry::RetryPolicy as CorePolicy;
use attrflow::Runtime;
use pyo3::prelude::*;

use crate::errors::IntoPyResult;
use crate::executor;
use crate::integers::{optional_unsigned, unsigned};
use crate::runtime::NativeRuntime;
pub(crate) use crate::wait_timeout::wait_timeout;

pub(crate) use retry_policy::PyRetryPolicy;

/// The error of a result that does not encode as JSON.
fn encode_error(error: serde_json::Error) -> attrflow::Error {
    attrflow::Error::storage(format!("cannot encode a result as JSON: {error}"))
}

/// The error of JSON text a caller passed as `what` that does not parse.
fn parse_error(what: &str, error: serde_json::Error) -> attrflow::Error {
    attrflow::Error::invalid_input(format!("{what} is not valid JSON: {error}"))
}

/// The store, flow and policy a native client calls with.
#[derive(Clone)]
struct Target {
    runtime: Arc<Runtime>,
    flow_id: String,
    retry: CorePolicy,
}

impl Target {
    fn new(
        py: Python<'_>,
        runtime: &NativeRuntime,
        flow_id: String,
        retry: Option<&PyRetryPolicy>,
    ) -> PyResult<Self> {
        Ok(Target {
            runtime: runtime.runtime().into_py_result(py)?,
            flow_id,
            retry: retry.map_or(CorePolicy::DEFAULT, |policy| policy.0),
        })
    }

    /// The core's app-log client of this target (for work moved to another thread).
    fn app_log(&self) -> CoreAppLog<'_> {
        CoreAppLog::new(&self.runtime, &self.flow_id).with_retry_policy(self.retry)
    }

    /// The core's subscriber-archive client of this target.
    fn archive(&self) -> CoreArchive<'_> {
        CoreArchive::new(&self.runtime, &self.flow_id).with_retry_policy(self.retry)
    }
}

/// A trim rule from its Python keyword arguments: exactly one of them, each 1 or more.
fn trim_rule(
    keep_newest: Option<&Bound<'_, PyAny>>,
    drop_before: Option<&Bound<'_, PyAny>>,
) -> PyResult<attrflow::Result<Trim>> {
    let input = TrimInput {
        keep_newest: optional_unsigned(keep_newest, |shown| out_of_range("keepNewest", shown))?,
        drop_before: optional_unsigned(drop_before, |shown| out_of_range("dropBefore", shown))?,
    };
    Ok(input.trim())
}

/// A retention's `keep_newest` from its Python argument (`None`: keep everything).
fn keep_newest(keep_newest: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    optional_unsigned(keep_newest, |shown| out_of_range("keepNewest", shown))
}

/// A read forward's start and limit from their Python arguments.
fn read_range(sequence: &Bound<'_, PyAny>, limit: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    Ok((
        unsigned(sequence, |shown| out_of_range("sequence", shown))?,
        unsigned(limit, |shown| limit_out_of_range(shown))?,
    ))
}

/// A tail's `after`, limit and timeout from their Python arguments: integers from 0 and
/// from 1, and seconds from 0 (the core checks the largest of each).
fn tail_arguments(
    py: Python<'_>,
    after: &Bound<'_, PyAny>,
    limit: &Bound<'_, PyAny>,
    timeout: f64,
) -> PyResult<(u64, u64, Duration)> {
    let after = unsigned(after, |shown| after_out_of_range(shown))?;
    let limit = unsigned(limit, |shown| limit_out_of_range(shown))?;
    Ok((after, limit, wait_timeout(py, timeout)?))
}

/// Runs `work` (a tail or a follow step, which may wait long) now with the GIL released
/// and returns its JSON text; or with `done` on a worker thread of the binding's pool
/// ([`executor`]), returning `done`'s future at once and later completing it with the text
/// or the exception.
fn run_or_submit<'py>(
    py: Python<'py>,
    done: Option<executor::Done>,
    work: impl FnOnce() -> attrflow::Result<String> + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    let finish = |py: Python<'_>, result: attrflow::Result<String>| -> PyResult<Py<PyAny>> {
        Ok(result
            .into_py_result(py)?
            .into_pyobject(py)?
            .into_any()
            .unbind())
    };
    match done {
        Some(done) => executor::submitted(py, done, |done| executor::submit(done, work, finish)),
        None => Ok(finish(py, py.detach(work))?.into_bound(py)),
    }
}

/// A result as JSON text.
fn to_json<T: serde::Serialize>(result: attrflow::Result<T>) -> attrflow::Result<String> {
    serde_json::to_string(&result?).map_err(encode_error)
}

/// Runs `call` with the GIL released and returns its result as JSON text.
fn detached_json<T: serde::Serialize>(
    py: Python<'_>,
    call: impl FnOnce() -> attrflow::Result<T> + Send,
) -> PyResult<String> {
    py.detach(|| to_json(call())).into_py_result(py)
}

/// A native client class `$native` (Python name `$name`) over the core client `$core`:
/// its constructor `(runtime, flow_id, retry=None)`, `start()`, and `$methods`. Every
/// method calls the core client, which retries lock conflicts by the client's policy.
macro_rules! native_client {
    ($(#[$doc:meta])* $native:ident, $name:literal, $core:ident, { $($methods:tt)* }) => {
        $(#[$doc])*
        #[pyclass(module = "attrflow._native", name = $name, frozen)]
        pub(crate) struct $native(pub(super) Target);

        impl $native {
            fn core(&self) -> $core<'_> {
                $core::new(&self.0.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
            }
        }

        #[pymethods]
        impl $native {
            #[new]
            #[pyo3(signature = (runtime, flow_id, retry = None))]
            fn new(
                py: Python<'_>,
                runtime: &NativeRuntime,
                flow_id: Text,
                retry: Option<&PyRetryPolicy>,
            ) -> PyResult<Self> {
                Target::new(py, runtime, flow_id.into(), retry).map($native)
            }

            /// Starts the flow, or returns the running one's run ID.
            fn start(&self, py: Python<'_>) -> PyResult<String> {
                py.detach(|| self.core().start()).into_py_result(py)
            }

            $($methods)*
        }
    };
}
use native_client;

/// Adds the clients, the follow cursor and the retry policy to the native module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRetryPolicy>()?;
    m.add_class::<app_log_client::NativeAppLog>()?;
    m.add_class::<subscriber_archive_client::NativeSubscriberArchive>()?;
    m.add_class::<customer_directory_client::NativeCustomerDirectory>()?;
    m.add_class::<follow_cursor::NativeFollowCursor>()?;
    verifiable::add_to(m)
}
