//! The binding's own worker threads for awaitable calls.
//!
//! `AsyncClient` hands each store call to [`submit`]: the call runs on a thread of a
//! blocking pool owned by this module (tokio's, which grows with the number of calls in
//! flight and lets idle threads go), never on the event loop and never through the loop's
//! default executor. When the call is done the worker attaches to the interpreter, turns
//! the result into a Python value or exception and calls `done(value, error)` — which the
//! Python side binds to `loop.call_soon_threadsafe`, completing an asyncio future.

use std::sync::OnceLock;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How many store calls may run at once before further calls queue for a thread.
const MAX_THREADS: usize = 512;

/// How long an idle worker thread waits for another call before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

static POOL: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();

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
    drop(pool.spawn_blocking(move || {
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
