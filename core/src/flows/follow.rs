//! The follow cursor: every record of a chunked log (the subscriber archive, one log of an
//! app log) delivered once, oldest first, as it is appended, for every front end.
//!
//! A [`FollowCursor`] remembers the sequence of the last record it delivered and the run it
//! read; each step ([`SubscriberArchive::follow_next`](crate::flows::chunked_subscriber::SubscriberArchive::follow_next),
//! [`AppLog::follow_next`](crate::flows::app_log::AppLog::follow_next)) tails the log from
//! just after that record, so a cursor resumes exactly after its last delivery: across
//! chunk boundaries, chunk-size changes and trims, and no record comes twice.
//!
//! Trims. A cursor opened from the start (`after` = 0) that has delivered nothing yet
//! begins at the oldest retained record: "from the start" of a trimmed log is its oldest
//! record. Once it has a position, a cursor never skips: when the next record it needs
//! was trimmed, the step fails with [`Error::PageTrimmed`] (naming the oldest retained
//! sequence) and the cursor stays where it was, so nothing is silently lost; a follower
//! that accepts the gap opens a new cursor after `oldest_sequence - 1`.
//!
//! Runs. The first step pins the cursor to the run it read (or to the `run_id` it was
//! opened with); a log started again since is [`Error::RunNotCurrent`], never read from the
//! old run's position.

use crate::chunked_log::{tail_start, validate_read_limit};
use crate::error::{Error, Result};

/// One forward read as a cursor step takes it: the records read (oldest first), the
/// sequence to read from next, and the run read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardRead<R> {
    /// The records, oldest first.
    pub records: Vec<R>,
    /// The sequence to read from next.
    pub next_sequence: u64,
    /// The run the records belong to.
    pub run_id: String,
}

/// Where a follower of one chunked log stands: after which sequence, in which run, how
/// many records a step delivers at most. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowCursor {
    after: u64,
    run_id: Option<String>,
    limit: u64,
    from_oldest: bool,
}

impl FollowCursor {
    /// A cursor delivering the records after sequence `after` (0: from the start, that is
    /// from the oldest retained record), up to `limit` (1 to
    /// [`MAX_READ_RECORDS`](crate::chunked_log::MAX_READ_RECORDS)) a step, in the run
    /// `run_id` or else the run its first step reads. A bad `after` or `limit` is
    /// [`Error::InvalidInput`].
    pub fn new(after: u64, limit: u64, run_id: Option<String>) -> Result<Self> {
        tail_start(after)?;
        validate_read_limit(limit)?;
        Ok(FollowCursor {
            after,
            run_id,
            limit,
            from_oldest: after == 0,
        })
    }

    /// The sequence of the last record delivered (or the `after` it was opened with).
    pub fn after(&self) -> u64 {
        self.after
    }

    /// The run the cursor follows, once pinned.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The most records a step delivers.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// One step: calls `read(after, limit, run_id)` (a tail, or a read forward from
    /// `after + 1`) and delivers what it read, moving the cursor after it. The rules of the
    /// [module docs](self) live here, once, for every log kind and front end.
    pub fn step<R>(
        &mut self,
        mut read: impl FnMut(u64, u64, Option<&str>) -> Result<ForwardRead<R>>,
    ) -> Result<Vec<R>> {
        let run_id = self.run_id.clone();
        let read = match read(self.after, self.limit, run_id.as_deref()) {
            Err(Error::PageTrimmed {
                oldest_sequence, ..
            }) if self.from_oldest && oldest_sequence > self.after + 1 => {
                read(oldest_sequence - 1, self.limit, run_id.as_deref())?
            }
            read => read?,
        };
        self.run_id = Some(read.run_id);
        if !read.records.is_empty() {
            self.after = read.next_sequence.saturating_sub(1);
            self.from_oldest = false;
        }
        Ok(read.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_limits_and_starts_are_refused() {
        assert!(matches!(
            FollowCursor::new(0, 0, None),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            FollowCursor::new(u64::MAX, 10, None),
            Err(Error::InvalidInput(_))
        ));
    }
}
