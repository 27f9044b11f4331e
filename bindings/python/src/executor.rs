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
//!
//! A process forked from one that made calls inherits neither the worker threads nor their
//! calls: the first use in the child starts a pool and a count of its own.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;

/// How many store calls may run at once before further calls queue for a thread.
const MAX_THREADS: usize = 512;

/// How long an idle worker thread waits for another call before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The pool and the calls in flight, of the process `pid`.
struct State {
    pid: u32,
    pool: Option<&'static Runtime>,
    in_flight: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    pid: 0,
    pool: None,
    in_flight: 0,
});

/// Signalled when the count of calls in flight reaches 0.
static FINISHED: Condvar = Condvar::new();

/// The state of this process: after a fork, the parent's pool and calls are forgotten (its
/// threads do not exist here; the pool is leaked, not dropped, as dropping would wait for
/// them).
fn state() -> MutexGuard<'static, State> {
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if state.pid != pid {
        *state = State {
            pid,
            pool: None,
            in_flight: 0,
        };
    }
    state
}

/// Counts one call in flight for as long as it lives.
struct InFlight;

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = state();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            FINISHED.notify_all();
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
        let mut state = state();
        while state.in_flight > 0 {
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break;
            }
            state = FINISHED
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.in_flight
    })
}

/// This process's pool (started at first use) and one more call counted in flight.
fn start_call() -> PyResult<(&'static Runtime, InFlight)> {
    let mut state = state();
    let pool = match state.pool {
        Some(pool) => pool,
        None => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .max_blocking_threads(MAX_THREADS)
                .thread_keep_alive(KEEP_ALIVE)
                .thread_name("attrflow-call")
                .build()
                .map_err(|error| {
                    PyRuntimeError::new_err(format!(
                        "cannot start attrflow's worker threads: {error}"
                    ))
                })?;
            let pool: &'static Runtime = Box::leak(Box::new(runtime));
            state.pool = Some(pool);
            pool
        }
    };
    state.in_flight += 1;
    Ok((pool, InFlight))
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
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let (pool, in_flight) = start_call()?;
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
