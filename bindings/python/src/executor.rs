//! The binding's own worker threads for awaitable calls.
//!
//! `AsyncClient` hands each store call to [`submit`]: the call runs on a thread of a
//! blocking pool owned by this module (tokio's, which grows with the number of calls in
//! flight and lets idle threads go), never on the event loop and never through the loop's
//! default executor. When the call is done the worker attaches to the interpreter, turns
//! the result into a Python value or exception and calls `done(value, error)` — which the
//! Python side binds to `loop.call_soon_threadsafe`, completing an asyncio future.
//!
//! A worker must not attach to an interpreter that is shutting down, so the Python package
//! calls [`wait_for_calls`] at exit: it waits (detached) until every submitted call has
//! finished, as `concurrent.futures` waits for its workers.

use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How many store calls may run at once before further calls queue for a thread.
const MAX_THREADS: usize = 512;

/// How long an idle worker thread waits for another call before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

static POOL: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();

/// How many submitted calls have not finished yet, and a signal for when that reaches 0.
static IN_FLIGHT: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// Counts one call in flight for as long as it lives.
struct InFlight;

impl InFlight {
    fn start() -> Self {
        *IN_FLIGHT.0.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let (count, finished) = &IN_FLIGHT;
        let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
        *count = count.saturating_sub(1);
        if *count == 0 {
            finished.notify_all();
        }
    }
}

/// Waits, with the GIL released, until no submitted call is running or `timeout` seconds
/// have passed; returns how many are still running.
#[pyfunction]
pub(crate) fn wait_for_calls(py: Python<'_>, timeout: f64) -> usize {
    let deadline = Duration::try_from_secs_f64(timeout)
        .ok()
        .and_then(|timeout| Instant::now().checked_add(timeout));
    py.detach(move || {
        let (count, finished) = &IN_FLIGHT;
        let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count > 0 {
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break;
            }
            count = finished
                .wait_timeout(count, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *count
    })
}

fn pool() -> PyResult<&'static tokio::runtime::Runtime> {
    POOL.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(MAX_THREADS)
            .thread_keep_alive(KEEP_ALIVE)
            .thread_name("attrflow-call")
            .build()
            .map_err(|error| format!("cannot start attrflow's worker threads: {error}"))
    })
    .as_ref()
    .map_err(|message| PyRuntimeError::new_err(message.clone()))
}

/// Runs `work` on a worker thread, then `finish` (attached, turning its result into a
/// Python value), then `done(value, None)` or `done(None, exception)`.
///
/// An exception raised by `done` itself (the event loop was closed meanwhile) is reported
/// as unraisable: the caller that would have received the result is gone.
pub(crate) fn submit<T, W, F>(done: Py<PyAny>, work: W, finish: F) -> PyResult<()>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
{
    let pool = pool()?;
    let in_flight = InFlight::start();
    drop(pool.spawn_blocking(move || {
        let _in_flight = in_flight;
        let result = work();
        Python::attach(|py| {
            let called = match finish(py, result) {
                Ok(value) => done.call1(py, (value, py.None())),
                Err(error) => done.call1(py, (py.None(), error.into_value(py))),
            };
            if let Err(error) = called {
                error.write_unraisable(py, Some(done.bind(py)));
            }
        });
    }));
    Ok(())
}
