//! The binding's own worker threads for awaitable calls.
//!
//! `AsyncClient` hands each store call to [`submit`]: the call runs on a thread of a
//! blocking pool owned by this module (tokio's, which grows with the number of calls in
//! flight and lets idle threads go), never on the event loop and never through the loop's
//! default executor. When the call is done the worker never attaches to the interpreter: it
//! queues the result on the event loop's [`Completions`] and, when that queue was empty,
//! wakes the loop by writing a byte to a socket the loop watches (`loop.add_reader`). The
//! loop's thread then drains the queue in one go: it turns each result into a Python value
//! or exception (decoding the output there) and completes the awaited futures. The GIL thus
//! never passes between worker threads and the loop for a call, and many calls finishing at
//! once cost the loop one wake-up.
//!
//! The Python package calls [`wait_for_calls`] at exit: it waits (detached) until every
//! submitted call has finished, as `concurrent.futures` waits for its workers, so that calls
//! whose callers were cancelled still run to their end.
//!
//! A process forked from one that made calls inherits neither the worker threads nor their
//! calls: the first use in the child starts a pool and a count of its own.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
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

/// A result turned into a Python value on the event loop's thread.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// One finished call: the future awaiting it and how to make its result.
struct Finished {
    future: Py<PyAny>,
    finish: Finish,
}

/// The finished calls of one event loop, and the socket pair that wakes it.
///
/// Python creates one per event loop, watches [`Completions::fileno`] with
/// `loop.add_reader` and calls [`Completions::drain`] when it is readable.
#[pyclass(frozen, name = "Completions", module = "attrflow._native")]
pub(crate) struct Completions {
    ready: Mutex<Vec<Finished>>,
    reader: UnixStream,
    writer: UnixStream,
}

impl Completions {
    fn push(&self, finished: Finished) {
        let was_empty = {
            let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
            ready.push(finished);
            ready.len() == 1
        };
        if was_empty {
            // A full socket buffer already holds a wake-up; any other failure means the
            // reader is gone with its loop, and nobody awaits the result any more.
            let _ = (&self.writer).write(&[1]);
        }
    }
}

#[pymethods]
impl Completions {
    /// A new, empty queue with its own socket pair.
    #[new]
    fn new() -> PyResult<Self> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        Ok(Completions {
            ready: Mutex::new(Vec::new()),
            reader,
            writer,
        })
    }

    /// The file descriptor that becomes readable when calls have finished.
    fn fileno(&self) -> i32 {
        self.reader.as_raw_fd()
    }

    /// Takes every finished call: `(future, value, None)` or `(future, None, exception)`
    /// each, in the order they finished.
    fn drain(&self, py: Python<'_>) -> PyResult<Vec<Settled>> {
        let mut wake_ups = [0_u8; 64];
        loop {
            match (&self.reader).read(&mut wake_ups) {
                Ok(read) if read == wake_ups.len() => continue,
                Ok(_) => break,
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                Err(error) => return Err(error.into()),
            }
        }
        let finished =
            std::mem::take(&mut *self.ready.lock().unwrap_or_else(PoisonError::into_inner));
        Ok(finished
            .into_iter()
            .map(|Finished { future, finish }| match finish(py) {
                Ok(value) => (future, value, py.None()),
                Err(error) => (future, py.None(), error.into_value(py).into_any()),
            })
            .collect())
    }
}

/// A finished call as Python receives it: `(future, value, exception)`.
type Settled = (Py<PyAny>, Py<PyAny>, Py<PyAny>);

/// Where a submitted call reports: the event loop's queue and the future to complete.
pub(crate) type Done = (Py<Completions>, Py<PyAny>);

/// Runs `work` on a worker thread, then queues it on `done`'s [`Completions`]; the event
/// loop's thread later runs `finish` (turning the result into a Python value) and completes
/// `done`'s future with it, or with the exception `finish` raised.
pub(crate) fn submit<T, W, F>(done: Done, work: W, finish: F) -> PyResult<()>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let (pool, in_flight) = start_call()?;
    let (completions, future) = done;
    drop(pool.spawn_blocking(move || {
        let _in_flight = in_flight;
        let result = work();
        completions.get().push(Finished {
            future,
            finish: Box::new(move |py| finish(py, result)),
        });
    }));
    Ok(())
}
