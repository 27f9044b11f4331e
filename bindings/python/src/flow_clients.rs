//! The core's flow clients for Python: the typed clients of the app log and the customer
//! directory as objects (`AppLog`, `CustomerDirectory`) whose `*_with_retry` calls retry by
//! the core's [`RetryPolicy`], and the policy itself, so `attrflow.flows` and the example
//! service derive none of them again. What a call locks and loads is planned by the core's
//! definitions from the call's input, so no plan crosses; records and results cross as JSON
//! text.

use std::sync::Arc;
use std::time::Duration;

use attrflow::chunked_log::token::out_of_range;
use attrflow::chunked_log::{
    after_out_of_range, limit_out_of_range, timeout_out_of_range, Trim, TrimInput,
};
use attrflow::flows::app_log::AppLog as CoreAppLog;
use attrflow::flows::chunked_subscriber::SubscriberArchive as CoreArchive;
use attrflow::flows::customer_directory::{CustomerDirectory as CoreDirectory, CustomerProfile};
use attrflow::retry::RetryPolicy as CorePolicy;
use attrflow::Runtime;
use pyo3::prelude::*;

use crate::errors::{to_py_err, IntoPyResult};
use crate::executor;
use crate::integers::{optional_unsigned, unsigned};
use crate::runtime::NativeRuntime;
use crate::text::{JsonText, Text};

/// The core's retry policy for lock conflicts: at most `max_attempts` calls, pauses drawn
/// at random below a bound doubling from `first_delay` to `max_delay` seconds, and no new
/// call after `budget` seconds.
#[pyclass(module = "attrflow._native", name = "RetryPolicy", frozen, eq)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PyRetryPolicy(CorePolicy);

fn seconds(py: Python<'_>, what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        to_py_err(
            py,
            attrflow::Error::invalid_input(format!(
                "a retry policy's {what} must be a number of seconds from 0, got {value}"
            )),
        )
    })
}

#[pymethods]
impl PyRetryPolicy {
    #[new]
    #[pyo3(signature = (max_attempts = None, first_delay = None, max_delay = None, budget = None))]
    fn new(
        py: Python<'_>,
        max_attempts: Option<u32>,
        first_delay: Option<f64>,
        max_delay: Option<f64>,
        budget: Option<f64>,
    ) -> PyResult<Self> {
        let default = CorePolicy::DEFAULT;
        let duration = |what, value: Option<f64>, default: Duration| match value {
            Some(value) => seconds(py, what, value),
            None => Ok(default),
        };
        CorePolicy::new(
            max_attempts.unwrap_or(default.max_attempts()),
            duration("first delay", first_delay, default.first_delay())?,
            duration("max delay", max_delay, default.max_delay())?,
            duration("budget", budget, default.budget())?,
        )
        .map(PyRetryPolicy)
        .into_py_result(py)
    }

    /// The most calls, the first included.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.0.max_attempts()
    }

    /// The bound of the first pause, in seconds.
    #[getter]
    fn first_delay(&self) -> f64 {
        self.0.first_delay().as_secs_f64()
    }

    /// The bound of any pause, in seconds.
    #[getter]
    fn max_delay(&self) -> f64 {
        self.0.max_delay().as_secs_f64()
    }

    /// The time after which no new call starts, in seconds.
    #[getter]
    fn budget(&self) -> f64 {
        self.0.budget().as_secs_f64()
    }

    /// The pause, in seconds, before retry `retry` (from 0) after `elapsed` seconds since
    /// the first call; `None` when the policy gives up.
    fn pause_before(&self, py: Python<'_>, retry: u32, elapsed: f64) -> PyResult<Option<f64>> {
        let elapsed = seconds(py, "elapsed time", elapsed)?;
        Ok(self
            .0
            .pause_before(retry, elapsed)
            .map(|pause| pause.as_secs_f64()))
    }

    fn __repr__(&self) -> String {
        format!(
            "RetryPolicy(max_attempts={}, first_delay={}, max_delay={}, budget={})",
            self.max_attempts(),
            self.first_delay(),
            self.max_delay(),
            self.budget()
        )
    }
}

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

/// A wait's `timeout` in seconds as a duration; a negative, infinite or NaN one is the
/// core's out-of-range error (the core checks the upper limit).
pub(crate) fn wait_timeout(py: Python<'_>, timeout: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(timeout)
        .map_err(|_| to_py_err(py, timeout_out_of_range(format_args!("{timeout} seconds"))))
}

/// Runs `work` (a tail, which may wait long) now with the GIL released and returns its
/// JSON text; or with `done` on a worker thread of the binding's pool ([`executor`]),
/// returning `done`'s future at once and later completing it with the text or the
/// exception.
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

/// A native client class `$native` (Python name `$name`) over the core client `$core`:
/// its constructor `(runtime, flow_id, retry=None)`, `start()`, and `$methods`.
macro_rules! native_client {
    ($(#[$doc:meta])* $native:ident, $name:literal, $core:ident, { $($methods:tt)* }) => {
        $(#[$doc])*
        #[pyclass(module = "attrflow._native", name = $name, frozen)]
        pub(crate) struct $native(Target);

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

/// The reads forward of a chunked native client `$native` over the core client `$core`:
/// `tail_json` (a tail, now or on a worker thread) and `read_json` (a read from a sequence),
/// each retrying lock conflicts by the client's policy and returning JSON text.
macro_rules! chunked_reads {
    ($native:ident, $core:ident) => {
        impl $native {
            /// Runs `tail(client, after, limit, timeout)` as [`run_or_submit`] does, the
            /// arguments checked by [`tail_arguments`].
            fn tail_json<'py, T: serde::Serialize>(
                &self,
                py: Python<'py>,
                (after, limit, timeout): (&Bound<'_, PyAny>, &Bound<'_, PyAny>, f64),
                done: Option<executor::Done>,
                tail: impl Fn(&$core<'_>, u64, u64, Duration) -> attrflow::Result<T>
                    + Send
                    + 'static,
            ) -> PyResult<Bound<'py, PyAny>> {
                let (after, limit, timeout) = tail_arguments(py, after, limit, timeout)?;
                let target = self.0.clone();
                run_or_submit(py, done, move || {
                    let client = $core::new(&target.runtime, &target.flow_id)
                        .with_retry_policy(target.retry);
                    to_json(client.retrying(|client| tail(client, after, limit, timeout)))
                })
            }

            /// Runs `read(client, sequence, limit)` with the GIL released, the arguments
            /// checked by [`read_range`].
            fn read_json<T: serde::Serialize>(
                &self,
                py: Python<'_>,
                sequence: &Bound<'_, PyAny>,
                limit: &Bound<'_, PyAny>,
                read: impl Fn(&$core<'_>, u64, u64) -> attrflow::Result<T> + Send + Sync,
            ) -> PyResult<String> {
                let (sequence, limit) = read_range(sequence, limit)?;
                py.detach(|| to_json(self.core().retrying(|client| read(client, sequence, limit))))
                    .into_py_result(py)
            }
        }
    };
}

native_client!(
    /// The app log (`ChunkedLogFlow`) `flow_id` of a store, as the core's typed client.
    NativeAppLog, "AppLog", CoreAppLog, {
    /// Appends the JSON record `record_json` to `log`, retrying lock conflicts by the
    /// client's policy; returns the entry as JSON.
    fn append_with_retry(&self, py: Python<'_>, log: Text, record_json: JsonText) -> PyResult<String> {
        py.detach(|| {
            let record = attrflow::json::parse(&record_json, || format!("record of log {:?}", &*log))?;
            serde_json::to_string(&self.core().append(&log, record)?)
                .map_err(encode_error)
        })
        .into_py_result(py)
    }

    /// Reads one page of `log`; returns it as JSON.
    fn page(&self, py: Python<'_>, log: Text, page_token: Text) -> PyResult<String> {
        py.detach(|| {
            serde_json::to_string(&self.core().page(&log, &page_token)?).map_err(encode_error)
        })
        .into_py_result(py)
    }

    /// Drops whole archived chunks of `log`, oldest first (exactly one of `keep_newest` and
    /// `drop_before`), retrying lock conflicts by the client's policy; returns what it did
    /// as JSON.
    #[pyo3(signature = (log, keep_newest = None, drop_before = None))]
    fn trim(
        &self,
        py: Python<'_>,
        log: Text,
        keep_newest: Option<&Bound<'_, PyAny>>,
        drop_before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let trim = trim_rule(keep_newest, drop_before)?;
        py.detach(|| to_json(trim.and_then(|trim| self.core().retrying(|logs| logs.trim(&log, trim)))))
            .into_py_result(py)
    }

    /// Sets (or with `None` clears) the retention of `log`, retrying lock conflicts by the
    /// client's policy; returns the change as JSON.
    #[pyo3(signature = (log, keep_newest))]
    fn set_retention(
        &self,
        py: Python<'_>,
        log: Text,
        keep_newest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let keep = optional_unsigned(keep_newest, |shown| out_of_range("keepNewest", shown))?;
        py.detach(|| to_json(self.core().retrying(|logs| logs.set_retention(&log, keep))))
            .into_py_result(py)
    }

    /// Waits up to `timeout` seconds for entries of `log` after `after` (in the run
    /// `run_id`, when given); returns up to `limit` of them, oldest first, with the next
    /// sequence and the run read, as JSON (none on timeout). With `done`, waits on a
    /// worker thread instead (see `run_or_submit`).
    #[pyo3(signature = (log, after, limit, timeout, *, run_id = None, done = None))]
    #[allow(clippy::too_many_arguments)]
    fn tail<'py>(
        &self,
        py: Python<'py>,
        log: Text,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        timeout: f64,
        run_id: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.tail_json(py, (after, limit, timeout), done, move |logs, after, limit, timeout| {
            logs.tail(&log, after, limit, timeout, run_id.as_deref())
        })
    }

    /// Up to `limit` entries of `log` from `sequence` on (in the run `run_id`, when given),
    /// oldest first, with the next sequence and the run read, as JSON.
    #[pyo3(signature = (log, sequence, limit, *, run_id = None))]
    fn read_from(
        &self,
        py: Python<'_>,
        log: Text,
        sequence: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<String> {
        self.read_json(py, sequence, limit, |logs, sequence, limit| {
            logs.read_from(&log, sequence, limit, run_id.as_deref())
        })
    }
});

native_client!(
    /// The subscriber archive (`ChunkedSubscriberFlow`) `flow_id` of a store, as the core's
    /// typed client.
    NativeSubscriberArchive, "SubscriberArchive", CoreArchive, {
    /// Reads one page; returns it as JSON.
    fn page(&self, py: Python<'_>, page_token: Text) -> PyResult<String> {
        py.detach(|| to_json(self.core().page(&page_token)))
            .into_py_result(py)
    }

    /// Drops whole archived chunks, oldest first (exactly one of `keep_newest` and
    /// `drop_before`), retrying lock conflicts by the client's policy; returns what it did
    /// as JSON.
    #[pyo3(signature = (keep_newest = None, drop_before = None))]
    fn trim(
        &self,
        py: Python<'_>,
        keep_newest: Option<&Bound<'_, PyAny>>,
        drop_before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let trim = trim_rule(keep_newest, drop_before)?;
        py.detach(|| to_json(trim.and_then(|trim| self.core().retrying(|archive| archive.trim(trim)))))
            .into_py_result(py)
    }

    /// Sets (or with `None` clears) the archive's retention, retrying lock conflicts by the
    /// client's policy; returns the change as JSON.
    #[pyo3(signature = (keep_newest))]
    fn set_retention(
        &self,
        py: Python<'_>,
        keep_newest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let keep = optional_unsigned(keep_newest, |shown| out_of_range("keepNewest", shown))?;
        py.detach(|| to_json(self.core().retrying(|archive| archive.set_retention(keep))))
            .into_py_result(py)
    }

    /// Waits up to `timeout` seconds for subscribers after `after` (in the run `run_id`,
    /// when given); returns up to `limit` of them, oldest first, with the next sequence
    /// and the run read, as JSON (none on timeout). With `done`, waits on a worker thread
    /// instead (see `run_or_submit`).
    #[pyo3(signature = (after, limit, timeout, *, run_id = None, done = None))]
    fn tail<'py>(
        &self,
        py: Python<'py>,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        timeout: f64,
        run_id: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.tail_json(py, (after, limit, timeout), done, move |archive, after, limit, timeout| {
            archive.tail(after, limit, timeout, run_id.as_deref())
        })
    }

    /// Up to `limit` subscribers from `sequence` on (in the run `run_id`, when given),
    /// oldest first, with the next sequence and the run read, as JSON.
    #[pyo3(signature = (sequence, limit, *, run_id = None))]
    fn read_from(
        &self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<String> {
        self.read_json(py, sequence, limit, |archive, sequence, limit| {
            archive.read_from(sequence, limit, run_id.as_deref())
        })
    }
});

native_client!(
    /// The customer directory (`CustomerDirectoryFlow`) `flow_id` of a store, as the core's
    /// typed client.
    NativeCustomerDirectory, "CustomerDirectory", CoreDirectory, {
    /// Saves the profile `profile_json`, retrying lock conflicts by the client's policy;
    /// returns it as stored, as JSON.
    fn upsert_with_retry(&self, py: Python<'_>, profile_json: JsonText) -> PyResult<String> {
        py.detach(|| {
            let profile: CustomerProfile = serde_json::from_str(&profile_json)
                .map_err(|e| parse_error("customer profile", e))?;
            serde_json::to_string(&self.core().upsert(&profile)?).map_err(encode_error)
        })
        .into_py_result(py)
    }

    /// The profile of `email_address`, as JSON.
    fn get(&self, py: Python<'_>, email_address: Text) -> PyResult<String> {
        py.detach(|| {
            serde_json::to_string(&self.core().get(&email_address)?).map_err(encode_error)
        })
        .into_py_result(py)
    }
});

chunked_reads!(NativeAppLog, CoreAppLog);
chunked_reads!(NativeSubscriberArchive, CoreArchive);

/// Adds the clients, the plans and the retry policy to the native module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRetryPolicy>()?;
    m.add_class::<NativeAppLog>()?;
    m.add_class::<NativeSubscriberArchive>()?;
    m.add_class::<NativeCustomerDirectory>()?;
    Ok(())
}
