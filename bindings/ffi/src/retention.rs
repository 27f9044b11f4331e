//! Trimming, retention, reading forward and tailing of the subscriber archive and the app
//! log clients: the core's calls, their inputs and outputs translated. Like every client
//! call, each retries lock conflicts by the client's policy, in the core.

use std::time::Duration;

use attrflow::chunked_log as log;
use attrflow::flows::app_log as core_log;
use attrflow::flows::chunked_subscriber::retention as core_retention;

use crate::app_log::{AppLog, LogEntry};
use crate::error::Result;
use crate::subscribers::{Subscriber, SubscriberArchive};

/// Which archived chunks a trim drops (whole chunks, oldest first; never the open one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum TrimRule {
    /// Keep at least the newest `records` records (1 or more).
    KeepNewest {
        /// The fewest records to keep.
        records: u64,
    },
    /// Drop the chunks whose records all come before `sequence` (1 to the open chunk's
    /// first sequence).
    DropBefore {
        /// The first sequence that must stay.
        sequence: u64,
    },
}

/// What a trim did, and what the log holds afterwards.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct TrimOutcome {
    /// Archived chunks dropped.
    pub dropped_chunks: u64,
    /// Records dropped with them.
    pub dropped_records: u64,
    /// Records the log still holds.
    pub retained_records: u64,
    /// The oldest retained sequence.
    pub oldest_sequence: u64,
    /// The token of the oldest retained page (`current` when no archive is left).
    pub oldest_token: String,
}

/// What setting a retention did.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RetentionChange {
    /// The retention now in force: keep at least this many newest records; `None` keeps
    /// everything.
    pub keep_newest: Option<u64>,
    /// The trim applied when it was set.
    pub trimmed: TrimOutcome,
}

/// Subscribers read forward (or by a tail), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SubscribersFrom {
    /// The subscribers, oldest first; none past the newest.
    pub subscribers: Vec<Subscriber>,
    /// The sequence to read from next (one past the last returned).
    pub next_sequence: u64,
    /// The archive's run read: its sequences count in that run. Pass it to the next
    /// `tail` or `readFrom` to resume only in that run.
    pub run_id: String,
}

/// Entries of one log read forward (or by a tail), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LogEntriesFrom {
    /// The log read.
    pub log: String,
    /// The entries, oldest first; none past the newest.
    pub entries: Vec<LogEntry>,
    /// The sequence to read from next (one past the last returned).
    pub next_sequence: u64,
    /// The logs flow's run read: its sequences count in that run. Pass it to the next
    /// `tail` or `readFrom` to resume only in that run.
    pub run_id: String,
}

impl From<TrimRule> for log::Trim {
    fn from(rule: TrimRule) -> Self {
        match rule {
            TrimRule::KeepNewest { records } => log::Trim::KeepNewest(records),
            TrimRule::DropBefore { sequence } => log::Trim::DropBefore(sequence),
        }
    }
}

impl From<log::TrimOutcome> for TrimOutcome {
    fn from(outcome: log::TrimOutcome) -> Self {
        TrimOutcome {
            dropped_chunks: outcome.dropped_chunks,
            dropped_records: outcome.dropped_records,
            retained_records: outcome.retained_records,
            oldest_sequence: outcome.oldest_sequence,
            oldest_token: outcome.oldest_token,
        }
    }
}

impl From<log::RetentionChange> for RetentionChange {
    fn from(change: log::RetentionChange) -> Self {
        RetentionChange {
            keep_newest: change.retention.map(|retention| retention.keep_newest),
            trimmed: change.trimmed.into(),
        }
    }
}

impl From<core_retention::SubscribersFrom> for SubscribersFrom {
    fn from(read: core_retention::SubscribersFrom) -> Self {
        SubscribersFrom {
            subscribers: read.subscribers.into_iter().map(Into::into).collect(),
            next_sequence: read.next_sequence,
            run_id: read.run_id,
        }
    }
}

impl From<core_log::LogEntriesFrom> for LogEntriesFrom {
    fn from(read: core_log::LogEntriesFrom) -> Self {
        LogEntriesFrom {
            log: read.log,
            entries: read.entries.into_iter().map(Into::into).collect(),
            next_sequence: read.next_sequence,
            run_id: read.run_id,
        }
    }
}

#[uniffi::export]
impl SubscriberArchive {
    /// Drops whole archived chunks, oldest first, as `rule` says. A token of a dropped
    /// chunk then fails with `PageTrimmed`.
    pub fn trim(&self, rule: TrimRule) -> Result<TrimOutcome> {
        Ok(self.core().trim(rule.into())?.into())
    }

    /// Makes every registration keep at least the newest `keep_newest` subscribers (or,
    /// with `None`, every one) and applies it at once.
    pub fn set_retention(&self, keep_newest: Option<u64>) -> Result<RetentionChange> {
        Ok(self.core().set_retention(keep_newest)?.into())
    }

    /// Up to `limit` (1 to 1000) subscribers from `sequence` on, oldest first; with
    /// `run_id`, only in that run of the archive (another is `RunNotCurrent`).
    #[uniffi::method(default(run_id = None))]
    pub fn read_from(
        &self,
        sequence: u64,
        limit: u64,
        run_id: Option<String>,
    ) -> Result<SubscribersFrom> {
        Ok(self
            .core()
            .read_from(sequence, limit, run_id.as_deref())?
            .into())
    }

    /// Waits (blocking) up to `timeout_ms` (at most 60 000) for subscribers after `after`
    /// (0: from the start) and returns up to `limit` of them, oldest first, as soon as
    /// there are any; none on timeout. Resume with the last sequence received and the
    /// read's `runId`: an archive started again since is then `RunNotCurrent`.
    #[uniffi::method(default(run_id = None))]
    pub fn tail(
        &self,
        after: u64,
        limit: u64,
        timeout_ms: u64,
        run_id: Option<String>,
    ) -> Result<SubscribersFrom> {
        let timeout = Duration::from_millis(timeout_ms);
        Ok(self
            .core()
            .tail(after, limit, timeout, run_id.as_deref())?
            .into())
    }
}

#[uniffi::export]
impl AppLog {
    /// Drops whole archived chunks of `log`, oldest first, as `rule` says.
    pub fn trim(&self, log: String, rule: TrimRule) -> Result<TrimOutcome> {
        Ok(self.core().trim(&log, rule.into())?.into())
    }

    /// Makes every append to `log` keep at least its newest `keep_newest` entries (or,
    /// with `None`, every one) and applies it at once.
    pub fn set_retention(&self, log: String, keep_newest: Option<u64>) -> Result<RetentionChange> {
        Ok(self.core().set_retention(&log, keep_newest)?.into())
    }

    /// Up to `limit` (1 to 1000) entries of `log` from `sequence` on, oldest first; with
    /// `run_id`, only in that run of the logs flow (another is `RunNotCurrent`).
    #[uniffi::method(default(run_id = None))]
    pub fn read_from(
        &self,
        log: String,
        sequence: u64,
        limit: u64,
        run_id: Option<String>,
    ) -> Result<LogEntriesFrom> {
        Ok(self
            .core()
            .read_from(&log, sequence, limit, run_id.as_deref())?
            .into())
    }

    /// Waits (blocking) up to `timeout_ms` (at most 60 000) for entries of `log` after
    /// `after` and returns up to `limit` of them, oldest first; none on timeout. Resume
    /// with the last sequence received and the read's `runId`: logs started again since
    /// are then `RunNotCurrent`.
    #[uniffi::method(default(run_id = None))]
    pub fn tail(
        &self,
        log: String,
        after: u64,
        limit: u64,
        timeout_ms: u64,
        run_id: Option<String>,
    ) -> Result<LogEntriesFrom> {
        let timeout = Duration::from_millis(timeout_ms);
        Ok(self
            .core()
            .tail(&log, after, limit, timeout, run_id.as_deref())?
            .into())
    }
}
