//! Dropping a log's oldest history: a [`Trim`] removes whole archived chunks, oldest first,
//! in the RPC that takes the log's appending locks, so it commits atomically with respect
//! to every append.
//!
//! What stays is untouched: every archived chunk that remains keeps its stored value byte
//! for byte, every token keeps its form and every retained token its page. The open chunk
//! is never dropped. The state records the oldest retained sequence; a page token of a
//! dropped chunk, or a read forward from a dropped sequence, is
//! [`crate::Error::PageTrimmed`] naming the oldest retained page, and
//! the newest-first walk ends at the oldest retained chunk.
//!
//! A trim of `N` chunks stages `N` deletes and one state write: its cost follows what it
//! drops, not the length of the history.
//!
//! A log may also keep a [`Retention`]: every append then applies `KeepNewest` in its own
//! transaction, so the log holds at least that many records (once it has had them) and
//! fewer than that many plus one chunk, like Redis's `XADD MAXLEN ~`.

use serde::{Deserialize, Serialize};

use super::append::OpenChunk;
pub use super::retention_setting::Retention;
use super::token::{out_of_range, PageToken};
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::error::{Error, Result};

/// Which archived chunks a trim drops. Only whole chunks go, so a log keeps a little more
/// than asked (like Redis's `XTRIM ~`), never less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    /// Keep at least the newest `n` records (`n` ≥ 1): drop the oldest archived chunks as
    /// long as at least `n` records remain.
    KeepNewest(u64),
    /// Drop every archived chunk whose records all come before this sequence, which is
    /// 1 to the first sequence of the open chunk (a trim never drops the open chunk).
    DropBefore(u64),
}

impl Trim {
    /// Checks what can be checked without the log: `KeepNewest(0)` and `DropBefore(0)`
    /// are [`Error::InvalidInput`] naming the value.
    pub fn validate(self) -> Result<()> {
        match self {
            // Keeping no record would drop the open chunk.
            Trim::KeepNewest(0) => Err(out_of_range("keepNewest", 0)),
            Trim::DropBefore(0) => Err(out_of_range("dropBefore", 0)),
            _ => Ok(()),
        }
    }

    /// Whether the archived chunk `first..end` goes, when `retained` records remain.
    fn drops(self, end: u64, len: u64, retained: u64) -> bool {
        match self {
            Trim::KeepNewest(keep) => retained.saturating_sub(len) >= keep,
            Trim::DropBefore(sequence) => end <= sequence,
        }
    }
}

/// The trim rule of an RPC input: exactly one of `keepNewest` and `dropBefore`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrimInput {
    /// Keep at least this many of the newest records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_newest: Option<u64>,
    /// Drop the archived chunks wholly before this sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_before: Option<u64>,
}

impl From<Trim> for TrimInput {
    fn from(trim: Trim) -> Self {
        match trim {
            Trim::KeepNewest(keep) => TrimInput {
                keep_newest: Some(keep),
                drop_before: None,
            },
            Trim::DropBefore(sequence) => TrimInput {
                keep_newest: None,
                drop_before: Some(sequence),
            },
        }
    }
}

impl TrimInput {
    /// The rule, checked: neither or both fields is [`Error::InvalidInput`].
    pub fn trim(self) -> Result<Trim> {
        let trim = match (self.keep_newest, self.drop_before) {
            (Some(keep), None) => Trim::KeepNewest(keep),
            (None, Some(sequence)) => Trim::DropBefore(sequence),
            _ => {
                return Err(Error::invalid_input(
                    "a trim takes exactly one of keepNewest and dropBefore",
                ))
            }
        };
        trim.validate()?;
        Ok(trim)
    }
}

/// What a trim did, and what the log holds afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrimOutcome {
    /// Archived chunks dropped.
    pub dropped_chunks: u64,
    /// Records dropped with them.
    pub dropped_records: u64,
    /// Records the log still holds.
    pub retained_records: u64,
    /// The sequence of the oldest retained record (the next one the log gets, when it
    /// holds none).
    pub oldest_sequence: u64,
    /// The page token of the oldest retained chunk (`current` when no archive remains).
    pub oldest_token: String,
}

/// Input of a retention-setting RPC: `keepNewest`, or nothing (or `null`) to keep every
/// record again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RetentionInput {
    /// Keep at least this many of the newest records; `None` keeps everything.
    pub keep_newest: Option<u64>,
}

/// What setting a retention did: the retention now in force and the trim it applied at
/// once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionChange {
    /// The retention in force, `None` when the log keeps everything.
    pub retention: Option<Retention>,
    /// The trim applied when it was set.
    pub trimmed: TrimOutcome,
}

impl ChunkedLog {
    /// Sets (or with `None` clears) the log's retention and applies it at once; later
    /// appends apply it too. A `keep_newest` of 0 is [`Error::InvalidInput`]. The RPC needs
    /// [`ChunkedLog::appending`]'s locks and load.
    pub fn set_retention(
        &self,
        ctx: &mut RpcContext<'_>,
        retention: Option<Retention>,
    ) -> Result<RetentionChange> {
        if let Some(retention) = retention {
            Trim::KeepNewest(retention.keep_newest).validate()?;
        }
        let mut open = self.open_chunk(ctx)?;
        open.state.retention = retention;
        let trimmed = self.apply_retention(ctx, &mut open)?;
        self.write_state(ctx, &open.state)?;
        Ok(RetentionChange { retention, trimmed })
    }

    /// Applies the retention of `open.state`, if any: what every append does before it
    /// stages the state.
    pub(super) fn apply_retention(
        &self,
        ctx: &mut RpcContext<'_>,
        open: &mut OpenChunk,
    ) -> Result<TrimOutcome> {
        let keep = open
            .state
            .retention
            .map_or(u64::MAX, |retention| retention.keep_newest);
        self.drop_chunks(ctx, open, Trim::KeepNewest(keep))
    }

    /// Drops the archived chunks `trim` names, oldest first, and returns what it did. A
    /// `DropBefore` past the first sequence of the open chunk is [`Error::InvalidInput`]
    /// naming both. A trim that drops nothing writes nothing. The RPC needs
    /// [`ChunkedLog::appending`]'s locks and load.
    pub fn trim(&self, ctx: &mut RpcContext<'_>, trim: Trim) -> Result<TrimOutcome> {
        trim.validate()?;
        let mut open = self.open_chunk(ctx)?;
        let outcome = self.drop_chunks(ctx, &mut open, trim)?;
        if outcome.dropped_chunks > 0 {
            self.write_state(ctx, &open.state)?;
        }
        Ok(outcome)
    }

    /// Stages the deletes of the chunks `trim` drops and moves `open.state`'s oldest
    /// sequence (and, when no archive remains, its newest-archive token) past them.
    pub(super) fn drop_chunks(
        &self,
        ctx: &mut RpcContext<'_>,
        open: &mut OpenChunk,
        trim: Trim,
    ) -> Result<TrimOutcome> {
        let open_first = open.first_sequence();
        if let Trim::DropBefore(sequence) = trim {
            if sequence > open_first {
                return Err(Error::invalid_input(format!(
                    "dropBefore {sequence} would drop records of the open chunk, which starts \
                     at sequence {open_first}; a trim drops whole archived chunks only"
                )));
            }
        }
        let state = &mut open.state;
        let mut first = state.oldest_sequence;
        let mut retained = state.next_sequence.saturating_sub(first);
        let mut dropped_chunks = 0;
        while first < open_first {
            let end = open
                .history
                .next_boundary(first)
                .map_or(open_first, |end| end.min(open_first));
            let len = end - first;
            if !trim.drops(end, len, retained) {
                break;
            }
            let token = PageToken::Archive(first).to_string();
            ctx.delete_map_instance(self.chunk_map, &self.chunk_key(&token))?;
            retained -= len;
            first = end;
            dropped_chunks += 1;
        }
        let dropped_records = first - state.oldest_sequence;
        if dropped_chunks > 0 {
            state.oldest_sequence = first;
            if first >= open_first {
                state.latest_archived_chunk_token.clear();
            }
        }
        Ok(TrimOutcome {
            dropped_chunks,
            dropped_records,
            retained_records: retained,
            oldest_sequence: state.oldest_sequence,
            oldest_token: state.oldest_page_token(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_name_exactly_one_rule() {
        let keep = TrimInput {
            keep_newest: Some(5),
            drop_before: None,
        };
        assert_eq!(keep.trim().unwrap(), Trim::KeepNewest(5));
        assert_eq!(
            TrimInput::from(Trim::DropBefore(7)).trim().unwrap(),
            Trim::DropBefore(7)
        );
        for bad in [
            TrimInput::default(),
            TrimInput {
                keep_newest: Some(1),
                drop_before: Some(1),
            },
        ] {
            assert_eq!(
                bad.trim().unwrap_err().to_string(),
                "a trim takes exactly one of keepNewest and dropBefore"
            );
        }
    }

    #[test]
    fn zero_is_refused_naming_the_value() {
        assert_eq!(
            Trim::KeepNewest(0).validate().unwrap_err().to_string(),
            format!("keepNewest must be from 1 to {}, not 0", u64::MAX)
        );
        assert_eq!(
            Trim::DropBefore(0).validate().unwrap_err().to_string(),
            format!("dropBefore must be from 1 to {}, not 0", u64::MAX)
        );
    }

    #[test]
    fn the_rule_keeps_at_least_what_it_is_asked() {
        // A chunk of 10 with 25 records left: dropping it leaves 15.
        assert!(Trim::KeepNewest(15).drops(11, 10, 25));
        assert!(!Trim::KeepNewest(16).drops(11, 10, 25));
        assert!(Trim::DropBefore(11).drops(11, 10, 25));
        assert!(!Trim::DropBefore(10).drops(11, 10, 25));
    }
}
