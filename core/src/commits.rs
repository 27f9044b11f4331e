//! Commit notifications within a process: a count every committed write of a [`Runtime`]
//! raises, and a bounded wait for it to move, so a reader waiting for new records (a tail,
//! [`crate::chunked_log::tail`]) wakes when a call of the same runtime commits instead of
//! on a timer. Commits of other runtimes and other processes are not signalled here; a
//! tail learns of them from the store's [`crate::store::ChangeWatch`] (or by reading again)
//! after a short pause.
//!
//! [`Runtime`]: crate::Runtime

use std::time::Instant;

use crate::sync::{Condvar, Mutex};

/// How many writing calls a runtime has committed, and a wait for the next.
#[derive(Debug, Default)]
pub struct CommitSignal {
    count: Mutex<u64>,
    moved: Condvar,
}

impl CommitSignal {
    /// The number of commits so far.
    pub fn current(&self) -> u64 {
        *self.count.lock()
    }

    /// Records one commit and wakes every waiter.
    pub(crate) fn notify(&self) {
        *self.count.lock() += 1;
        self.moved.notify_all();
    }

    /// Waits until the count is no longer `seen` (a commit happened since it was read) or
    /// `until` passes, and returns the count then.
    pub fn wait_past(&self, seen: u64, until: Instant) -> u64 {
        let mut count = self.count.lock();
        while *count == seen {
            let (guard, timed_out) = self.moved.wait_until(count, until);
            count = guard;
            if timed_out {
                break;
            }
        }
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_waiter_wakes_on_a_commit_after_what_it_saw() {
        let signal = Arc::new(CommitSignal::default());
        let seen = signal.current();
        let notifier = Arc::clone(&signal);
        let thread = std::thread::spawn(move || notifier.notify());
        let far = Instant::now() + Duration::from_secs(600);
        assert_eq!(signal.wait_past(seen, far), seen + 1);
        thread.join().unwrap();
        // A commit already past what was seen returns at once.
        assert_eq!(signal.wait_past(seen, far), seen + 1);
    }

    #[test]
    fn a_wait_with_no_commit_ends_at_its_deadline() {
        let signal = CommitSignal::default();
        assert_eq!(signal.wait_past(0, Instant::now()), 0);
    }
}
