//! The core's follow cursor for Python: a [`FollowCursor`] of one log (an app log's named
//! log, or the subscriber archive) whose steps run the core client's `follow_next`, so the
//! rules of resuming (after the last record delivered, across trims, pinned to one run)
//! live in the core once and `attrflow.flows` only repeats the step.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use attrflow::chunked_log::{after_out_of_range, limit_out_of_range};
use attrflow::flows::follow::FollowCursor;
use pyo3::prelude::*;

use super::{run_or_submit, to_json, wait_timeout, Target};
use crate::errors::{to_py_err, IntoPyResult};
use crate::executor;
use crate::integers::unsigned;
use crate::text::Text;

/// The log a cursor follows.
#[derive(Clone)]
pub(super) enum Followed {
    /// The named log of an app log.
    Log(String),
    /// The subscriber archive's log.
    Archive,
}

/// Where a follower of one log stands; each `next` delivers the records after it.
#[pyclass(module = "attrflow._native", name = "FollowCursor", frozen)]
pub(crate) struct NativeFollowCursor {
    target: Target,
    followed: Followed,
    // Locked only to read or store the position, never across a step's wait, so reading
    // `after` or `run_id` never blocks (an event loop's thread, say) behind a waiting step.
    cursor: Arc<Mutex<FollowCursor>>,
    // Set while a step runs: two steps from one position would deliver records twice.
    stepping: Arc<AtomicBool>,
}

/// Clears a cursor's `stepping` flag when its step ends, or when the step is dropped
/// unrun (its worker could not be started).
struct Stepping(Arc<AtomicBool>);

impl Drop for Stepping {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl NativeFollowCursor {
    /// A cursor of `followed` after `after` (0: from the oldest retained record), up to
    /// `limit` records a step, pinned to `run_id` or to the run its first step reads.
    pub(super) fn open(
        py: Python<'_>,
        target: Target,
        followed: Followed,
        (after, limit): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
        run_id: Option<Text>,
    ) -> PyResult<Self> {
        let after = unsigned(after, |shown| after_out_of_range(shown))?;
        let limit = unsigned(limit, |shown| limit_out_of_range(shown))?;
        let cursor =
            FollowCursor::new(after, limit, run_id.map(String::from)).into_py_result(py)?;
        Ok(NativeFollowCursor {
            target,
            followed,
            cursor: Arc::new(Mutex::new(cursor)),
            stepping: Arc::new(AtomicBool::new(false)),
        })
    }

    fn read<T>(&self, read: impl FnOnce(&FollowCursor) -> T) -> T {
        read(&self.cursor.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[pymethods]
impl NativeFollowCursor {
    /// The sequence of the last record delivered (or the `after` it was opened with).
    #[getter]
    fn after(&self) -> u64 {
        self.read(FollowCursor::after)
    }

    /// The run the cursor follows, once its first step pinned it (or it was opened so).
    #[getter]
    fn run_id(&self) -> Option<String> {
        self.read(|cursor| cursor.run_id().map(str::to_owned))
    }

    /// The most records one step delivers.
    #[getter]
    fn limit(&self) -> u64 {
        self.read(FollowCursor::limit)
    }

    /// One step: waits up to `timeout` seconds for records after the cursor and returns
    /// them (none on timeout) as a JSON array, oldest first, moving the cursor after them.
    /// With `done`, waits on a worker thread instead (see `run_or_submit`). A step while
    /// another is in flight raises `InvalidInputError`.
    #[pyo3(signature = (timeout, *, done = None))]
    fn next<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let timeout = wait_timeout(py, timeout)?;
        if self.stepping.swap(true, Ordering::AcqRel) {
            return Err(to_py_err(
                py,
                attrflow::Error::invalid_input(
                    "a follow cursor takes one step at a time: await the step in flight first",
                ),
            ));
        }
        let stepping = Stepping(Arc::clone(&self.stepping));
        let (target, followed, shared) = (
            self.target.clone(),
            self.followed.clone(),
            Arc::clone(&self.cursor),
        );
        run_or_submit(py, done, move || {
            let _stepping = stepping;
            let mut cursor = shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let step = match followed {
                Followed::Log(log) => {
                    to_json(target.app_log().follow_next(&log, &mut cursor, timeout))
                }
                Followed::Archive => to_json(target.archive().follow_next(&mut cursor, timeout)),
            };
            *shared.lock().unwrap_or_else(PoisonError::into_inner) = cursor;
            step
        })
    }

    fn __repr__(&self) -> String {
        self.read(|cursor| {
            format!(
                "FollowCursor(after={}, limit={}, run_id={:?})",
                cursor.after(),
                cursor.limit(),
                cursor.run_id()
            )
        })
    }
}
