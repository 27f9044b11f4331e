//! Waiting for new records: a tail returns the records after a sequence, oldest first, as
//! soon as there are any, or nothing once its timeout passes.
//!
//! A tail reads forward ([`super::read_from`]); when it finds nothing it waits for the
//! next commit of its runtime ([`crate::commits`]), so a record appended in the same
//! process is delivered as soon as it commits. Commits of other runtimes and processes
//! are noticed after a pause that starts at [`FIRST_POLL_PAUSE`] and doubles: on SQLite by
//! checking the store's [`ChangeWatch`] (`PRAGMA data_version` on a connection of its own,
//! one cheap query, pauses up to [`MAX_WATCH_PAUSE`]), the tail reading again only when it
//! moved (on PostgreSQL with `notify=on`, a `LISTEN` connection of its own that heard a
//! `NOTIFY`); on a backend without a watch (PostgreSQL by default) by reading again,
//! pauses up to [`MAX_POLL_PAUSE`]. Each read is one read-only call.
//!
//! A tail never returns a record twice when the caller resumes from what it returned: ask
//! the next tail with the last sequence received (`next_sequence - 1`).
//!
//! ```
//! use std::time::Duration;
//! use attrflow::chunked_log::{validate_tail_timeout, MAX_TAIL_TIMEOUT};
//! assert!(validate_tail_timeout(MAX_TAIL_TIMEOUT).is_ok());
//! assert!(validate_tail_timeout(MAX_TAIL_TIMEOUT + Duration::from_millis(1)).is_err());
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use crate::commits::CommitSignal;
use crate::error::{Error, Result};
use crate::store::ChangeWatch;

pub use crate::limits::MAX_TAIL_TIMEOUT;

/// The first pause before a tail that found nothing reads again (unless a commit of its
/// runtime wakes it first).
pub const FIRST_POLL_PAUSE: Duration = Duration::from_millis(1);

/// The longest pause between two reads of a waiting tail on a store without a
/// [`ChangeWatch`]: how late, at most, it notices a commit of another process there.
pub const MAX_POLL_PAUSE: Duration = Duration::from_millis(50);

/// The longest pause between two checks of a waiting tail's [`ChangeWatch`] (one cheap
/// query each): how late, at most, it notices a commit of another process.
pub const MAX_WATCH_PAUSE: Duration = Duration::from_millis(5);

/// Checks a tail's timeout: at most [`MAX_TAIL_TIMEOUT`].
pub fn validate_tail_timeout(timeout: Duration) -> Result<()> {
    if timeout > MAX_TAIL_TIMEOUT {
        return Err(timeout_out_of_range(format_args!(
            "{} seconds",
            timeout.as_secs_f64()
        )));
    }
    Ok(())
}

/// The error for a tail's timeout outside 0 to [`MAX_TAIL_TIMEOUT`], showing it as the
/// caller gave it (a binding shows negative or non-finite seconds).
pub fn timeout_out_of_range(shown: impl fmt::Display) -> Error {
    Error::invalid_input(format!(
        "timeout must be from 0 to {} seconds, not {shown}",
        MAX_TAIL_TIMEOUT.as_secs()
    ))
}

/// The first sequence a tail after `after` reads: `after + 1` (0 reads from the start);
/// `after` must be below `u64::MAX`.
pub fn tail_start(after: u64) -> Result<u64> {
    after
        .checked_add(1)
        .ok_or_else(|| after_out_of_range(after))
}

/// The error for a tail's `after` outside 0 to `u64::MAX - 1`, showing it as the caller
/// gave it.
pub fn after_out_of_range(shown: impl fmt::Display) -> Error {
    Error::invalid_input(format!(
        "after must be from 0 to {}, not {shown}",
        u64::MAX - 1
    ))
}

/// Calls `read` (one read forward, returning its output and whether it found records)
/// until it finds records or `timeout` passes, and returns the last output (an empty read
/// on timeout). A timeout over [`MAX_TAIL_TIMEOUT`] is [`Error::InvalidInput`].
///
/// Between reads it waits for a commit of the runtime `commits` belongs to, for at most a
/// pause from [`FIRST_POLL_PAUSE`] doubling up to [`MAX_POLL_PAUSE`]. After its first empty
/// read it asks `watch` for the store's [`ChangeWatch`] once; with one, each pause ends in
/// a check of the watch (reading again only when it reports a commit, with pauses up to
/// [`MAX_WATCH_PAUSE`]), without one in a read.
pub fn wait_for_records<T>(
    commits: &CommitSignal,
    timeout: Duration,
    watch: impl FnOnce() -> Result<Option<Box<dyn ChangeWatch>>>,
    mut read: impl FnMut() -> Result<(T, bool)>,
) -> Result<T> {
    validate_tail_timeout(timeout)?;
    let deadline = Instant::now() + timeout;
    let mut watch = Some(watch);
    let mut changes: Option<Box<dyn ChangeWatch>> = None;
    let mut pause = FIRST_POLL_PAUSE;
    loop {
        // Read the count first, so a commit between the read and the wait still wakes it.
        let seen = commits.current();
        let (output, found) = read()?;
        if found || Instant::now() >= deadline {
            return Ok(output);
        }
        if let Some(start) = watch.take() {
            changes = start()?;
            if changes.is_some() {
                // Read again: a commit between the read and the watch's start is not missed.
                continue;
            }
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if commits.wait_past(seen, deadline.min(now + pause)) != seen {
                pause = FIRST_POLL_PAUSE;
                break;
            }
            let Some(changes) = changes.as_mut() else {
                pause = (pause * 2).min(MAX_POLL_PAUSE);
                break;
            };
            if changes.changed()? {
                pause = FIRST_POLL_PAUSE;
                break;
            }
            pause = (pause * 2).min(MAX_WATCH_PAUSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_and_starts_are_checked_naming_the_value() {
        assert_eq!(
            validate_tail_timeout(Duration::from_secs(61))
                .unwrap_err()
                .to_string(),
            "timeout must be from 0 to 60 seconds, not 61 seconds"
        );
        assert_eq!(tail_start(0).unwrap(), 1);
        assert!(tail_start(u64::MAX).is_err());
    }

    #[test]
    fn a_read_that_finds_records_returns_at_once_and_an_empty_one_on_timeout() {
        let commits = CommitSignal::default();
        let mut reads = 0;
        let found = wait_for_records(
            &commits,
            MAX_TAIL_TIMEOUT,
            || Ok(None),
            || {
                reads += 1;
                Ok((reads, reads == 3))
            },
        );
        assert_eq!(found.unwrap(), 3);
        let empty = wait_for_records(&commits, Duration::ZERO, || Ok(None), || Ok(((), false)));
        assert!(empty.is_ok());
    }

    /// A watch that reports a change on its `at`-th check.
    struct ChangesAt {
        checks: u32,
        at: u32,
    }

    impl ChangeWatch for ChangesAt {
        fn changed(&mut self) -> Result<bool> {
            self.checks += 1;
            Ok(self.checks == self.at)
        }
    }

    #[test]
    fn with_a_watch_a_tail_reads_again_only_when_it_reports_a_change() {
        let commits = CommitSignal::default();
        let mut reads = 0;
        let read = wait_for_records(
            &commits,
            MAX_TAIL_TIMEOUT,
            || {
                Ok(Some(
                    Box::new(ChangesAt { checks: 0, at: 4 }) as Box<dyn ChangeWatch>
                ))
            },
            || {
                reads += 1;
                // Records appear with the fourth check's change.
                Ok((reads, reads == 3))
            },
        );
        // One read, one after the watch started, one after the reported change.
        assert_eq!(read.unwrap(), 3);
    }
}
