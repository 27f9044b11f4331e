//! [`Restarts`]: whether a file's checkpoint thread (`checkpoint.rs`) is in its `RESTART`
//! step, a leaf both the thread and the busy handler that waits for the step's end
//! (`busy_wait.rs`) use.

use std::time::Duration;

use crate::sync::{Condvar, Mutex};

/// Whether the checkpoint thread of a file is in its `RESTART` step, which holds the file's
/// write lock: writers of the process that find the file busy meanwhile wait here for the
/// step's end, woken as it ends (`busy_wait.rs`).
#[derive(Debug, Default)]
pub(crate) struct Restarts {
    running: Mutex<bool>,
    ended: Condvar,
}

impl Restarts {
    /// Waits, at most `longest`, for the end of the `RESTART` step running now; whether
    /// one was running.
    pub(super) fn wait_for_end(&self, longest: Duration) -> bool {
        let running = self.running.lock();
        if !*running {
            return false;
        }
        drop(
            self.ended
                .wait_while_for(running, |running| *running, longest),
        );
        true
    }

    /// Runs `step` as the `RESTART` step: writers finding the file busy meanwhile wait for
    /// its end, which wakes them however `step` ends.
    pub(super) fn run<T>(&self, step: impl FnOnce() -> T) -> T {
        /// Ends the step and wakes its waiters, even when `step` panics.
        struct Ending<'a>(&'a Restarts);
        impl Drop for Ending<'_> {
            fn drop(&mut self) {
                *self.0.running.lock() = false;
                self.0.ended.notify_all();
            }
        }
        *self.running.lock() = true;
        let _ending = Ending(self);
        step()
    }
}
