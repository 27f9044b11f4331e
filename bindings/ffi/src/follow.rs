//! Follow cursors: `archive.follow(after, limit)` and `appLog.follow(log, after, limit)`
//! wrap the core's [`FollowCursor`], so Kotlin and Swift read every record once, oldest
//! first, by calling `next(timeoutMs)` again and again. Where a cursor resumes (exactly
//! after the last record it delivered, across chunks, chunk-size changes and trims), which
//! run it follows and what a trim does to it are the core's rules
//! ([`attrflow::flows::follow`]); a cursor here only holds the core's one.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use attrflow::flows::follow::FollowCursor;

use crate::app_log::{AppLog, LogEntry};
use crate::error::Result;
use crate::subscribers::{Subscriber, SubscriberArchive};

/// A cursor over the subscribers of one archive, from `archive.follow(after, limit)`.
#[derive(Debug, uniffi::Object)]
pub struct SubscriberCursor {
    archive: Arc<SubscriberArchive>,
    cursor: Mutex<FollowCursor>,
}

/// A cursor over the entries of one log of an app log, from `appLog.follow(log, after,
/// limit)`.
#[derive(Debug, uniffi::Object)]
pub struct LogCursor {
    logs: Arc<AppLog>,
    log: String,
    cursor: Mutex<FollowCursor>,
}

/// The cursor, whoever held it last: a step that failed leaves it where it was.
fn held(cursor: &Mutex<FollowCursor>) -> MutexGuard<'_, FollowCursor> {
    cursor
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[uniffi::export]
impl SubscriberArchive {
    /// A cursor delivering the subscribers after sequence `after` (0: from the oldest
    /// retained one), up to `limit` (1 to 1000) a step, in the run `run_id` or else the
    /// run its first step reads. A bad `after` or `limit` is `InvalidInput`.
    #[uniffi::method(default(after = 0, limit = 100, run_id = None))]
    pub fn follow(
        self: Arc<Self>,
        after: u64,
        limit: u64,
        run_id: Option<String>,
    ) -> Result<Arc<SubscriberCursor>> {
        let cursor = FollowCursor::new(after, limit, run_id)?;
        Ok(Arc::new(SubscriberCursor {
            archive: self,
            cursor: Mutex::new(cursor),
        }))
    }
}

#[uniffi::export]
impl SubscriberCursor {
    /// The next subscribers after the cursor's position, oldest first, waiting (blocking)
    /// up to `timeout_ms` (at most 60 000) for any; none on timeout. The cursor moves after
    /// them. A trimmed next record is `PageTrimmed` and an archive started again is
    /// `RunNotCurrent`; either leaves the cursor where it was.
    pub fn next(&self, timeout_ms: u64) -> Result<Vec<Subscriber>> {
        let mut cursor = held(&self.cursor);
        let read = self
            .archive
            .core()
            .follow_next(&mut cursor, Duration::from_millis(timeout_ms))?;
        Ok(read.into_iter().map(Into::into).collect())
    }

    /// The sequence of the last subscriber delivered (or the `after` it was opened with).
    pub fn after(&self) -> u64 {
        held(&self.cursor).after()
    }

    /// The run the cursor follows, once its first step pinned it (or as opened).
    pub fn run_id(&self) -> Option<String> {
        held(&self.cursor).run_id().map(str::to_owned)
    }
}

#[uniffi::export]
impl AppLog {
    /// A cursor delivering the entries of `log` after sequence `after` (0: from the oldest
    /// retained one), up to `limit` (1 to 1000) a step, in the run `run_id` or else the
    /// run its first step reads. A bad `after` or `limit` is `InvalidInput`.
    #[uniffi::method(default(after = 0, limit = 100, run_id = None))]
    pub fn follow(
        self: Arc<Self>,
        log: String,
        after: u64,
        limit: u64,
        run_id: Option<String>,
    ) -> Result<Arc<LogCursor>> {
        let cursor = FollowCursor::new(after, limit, run_id)?;
        Ok(Arc::new(LogCursor {
            logs: self,
            log,
            cursor: Mutex::new(cursor),
        }))
    }
}

#[uniffi::export]
impl LogCursor {
    /// The next entries of the log after the cursor's position, oldest first, waiting
    /// (blocking) up to `timeout_ms` (at most 60 000) for any; none on timeout. The cursor
    /// moves after them. A trimmed next record is `PageTrimmed` and logs started again are
    /// `RunNotCurrent`; either leaves the cursor where it was.
    pub fn next(&self, timeout_ms: u64) -> Result<Vec<LogEntry>> {
        let mut cursor = held(&self.cursor);
        let read = self.logs.core().follow_next(
            &self.log,
            &mut cursor,
            Duration::from_millis(timeout_ms),
        )?;
        Ok(read.into_iter().map(Into::into).collect())
    }

    /// The log the cursor follows.
    pub fn log(&self) -> String {
        self.log.clone()
    }

    /// The sequence of the last entry delivered (or the `after` it was opened with).
    pub fn after(&self) -> u64 {
        held(&self.cursor).after()
    }

    /// The run the cursor follows, once its first step pinned it (or as opened).
    pub fn run_id(&self) -> Option<String> {
        held(&self.cursor).run_id().map(str::to_owned)
    }
}
