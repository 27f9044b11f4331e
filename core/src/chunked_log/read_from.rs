//! Reading a chunked log forward: up to a limit of records, oldest first, from a sequence,
//! across chunk and layout boundaries, with the next sequence to ask for.
//!
//! A read RPC loads its chunks before its handler runs, and which chunks hold a range
//! depends on the stored layout history and trims. So the handler plans the read from the
//! state it sees ([`ChunkedLog::read_from`]); when a chunk of the plan is not loaded it
//! reads nothing and names the chunks to load, and [`ChunkedLog::read_forward`] calls the
//! RPC again loading them. The first call loads the open chunk, which holds what a reader
//! that keeps up asks for, so such a reader needs one call.
//!
//! Sequences count within one run of the log's flow: a flow started again begins its log
//! at 1. So every read reports the run it read ([`ForwardPage::run_id`]), and a read or a
//! tail may be pinned to one run: asked again in another, it fails with
//! [`Error::RunNotCurrent`] instead of reading the new run's records at the old run's
//! position. The calls of one read forward are pinned to the run its first call read.
//!
//! ```
//! use attrflow::chunked_log::{validate_read_limit, MAX_READ_RECORDS};
//! assert!(validate_read_limit(MAX_READ_RECORDS).is_ok());
//! assert!(validate_read_limit(0).is_err());
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::layout::LayoutHistory;
use super::state::LogState;
use super::token::{out_of_range, PageToken, CURRENT_CHUNK};
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::typed::decode_stored_json;

pub use crate::limits::MAX_READ_RECORDS;

/// How often [`ChunkedLog::read_forward`] calls the RPC before it gives up with a
/// retryable [`Error::LockConflict`]: each retry follows appends that archived the chunks
/// the call before had loaded.
pub const MAX_READ_ATTEMPTS: usize = 8;

/// Checks a read's limit: 1 to [`MAX_READ_RECORDS`].
pub fn validate_read_limit(limit: u64) -> Result<()> {
    if limit == 0 || limit > MAX_READ_RECORDS {
        return Err(limit_out_of_range(limit));
    }
    Ok(())
}

/// The error for a read's limit outside 1 to [`MAX_READ_RECORDS`], showing it as the
/// caller gave it (a binding shows integers no `u64` holds).
pub fn limit_out_of_range(shown: impl std::fmt::Display) -> Error {
    Error::invalid_input(format!(
        "limit must be from 1 to {MAX_READ_RECORDS}, not {shown}"
    ))
}

/// Checks a read's start: at least 1.
pub fn validate_read_start(sequence: u64) -> Result<()> {
    if sequence == 0 {
        return Err(out_of_range("sequence", 0));
    }
    Ok(())
}

/// What one read forward returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardPage<R> {
    /// The records from the start on, oldest first: as many as the limit, or all there
    /// are; none when the start is past the newest record.
    pub records: Vec<R>,
    /// The sequence to read from next: one past the last record returned, or the start
    /// when none was.
    pub next_sequence: u64,
    /// The chunk instance keys the call must load to read anything, when it did not: the
    /// caller calls again loading them. Empty when the read is complete.
    pub chunks_to_load: Vec<String>,
    /// The run of the log's flow this read read; its sequences count in that run.
    pub run_id: String,
}

/// The chunks holding `start..end`, oldest first, each with its first sequence.
fn plan(history: &LayoutHistory, open_first: u64, start: u64, end: u64) -> Vec<(PageToken, u64)> {
    let mut chunks = Vec::new();
    if start >= end {
        return chunks;
    }
    let mut first = if start >= open_first {
        open_first
    } else {
        history
            .previous_boundary(start.saturating_add(1))
            .unwrap_or(1)
    };
    while first < end {
        if first >= open_first {
            chunks.push((PageToken::Current, open_first));
            break;
        }
        chunks.push((PageToken::Archive(first), first));
        first = history
            .next_boundary(first)
            .map_or(open_first, |next| next.min(open_first));
    }
    chunks
}

impl ChunkedLog {
    /// The first sequence of the open chunk, from the state alone: after the newest
    /// archive, or the oldest retained sequence when no archive is held.
    pub(super) fn open_first_of(&self, state: &LogState, history: &LayoutHistory) -> u64 {
        match PageToken::parse(&state.latest_archived_chunk_token) {
            Ok(PageToken::Archive(latest)) => {
                history.next_boundary(latest).unwrap_or(state.next_sequence)
            }
            _ => state.oldest_sequence,
        }
    }

    /// The per-call loads of a read forward loading the chunks `chunk_keys` (scoped keys,
    /// as [`ForwardPage::chunks_to_load`] names them): those, and a named log's state.
    pub fn read_options(&self, chunk_keys: &[String]) -> RpcInvokeOptions {
        let mut options = RpcInvokeOptions::new();
        if !self.name.is_empty() {
            options = options.load_attribute_map_instance(self.state_attribute, self.name.clone());
        }
        for key in chunk_keys {
            options = options.load_attribute_map_instance(self.chunk_map, key.clone());
        }
        options
    }

    /// Reads up to `limit` records from `sequence` on, oldest first (the handler's part of a
    /// read forward; see the [module docs](self)). A `sequence` of 0 or a `limit` outside
    /// 1 to [`MAX_READ_RECORDS`] is [`Error::InvalidInput`]; a `sequence` a trim dropped is
    /// [`Error::PageTrimmed`] naming the oldest retained page and sequence. A start past
    /// the newest record reads nothing.
    pub fn read_from<R: DeserializeOwned>(
        &self,
        ctx: &RpcContext<'_>,
        sequence: u64,
        limit: u64,
    ) -> Result<ForwardPage<R>> {
        validate_read_start(sequence)?;
        validate_read_limit(limit)?;
        let state = self.state(ctx)?;
        let history = self.layout_history_of(&state)?;
        if sequence < state.oldest_sequence {
            let first = history
                .previous_boundary(sequence.saturating_add(1))
                .unwrap_or(1);
            return Err(state.trimmed(PageToken::Archive(first).to_string()));
        }
        let end = sequence.saturating_add(limit).min(state.next_sequence);
        let open_first = self.open_first_of(&state, &history);
        let chunks = plan(&history, open_first, sequence, end);
        let mut records = Vec::new();
        for (token, first) in &chunks {
            let key = token.instance_key();
            let stored = match ctx.map_instance_json(self.chunk_map, &self.chunk_key(&key)) {
                Ok(stored) => stored,
                Err(Error::AttributeMapNotLoaded { .. }) => {
                    return Ok(ForwardPage {
                        records: Vec::new(),
                        next_sequence: sequence,
                        chunks_to_load: chunks
                            .iter()
                            .map(|(token, _)| self.chunk_key(&token.instance_key()))
                            .collect(),
                        run_id: ctx.run_id().to_owned(),
                    })
                }
                Err(other) => return Err(other),
            };
            let physical = format!("{}/{}", self.chunk_map, self.chunk_key(&key));
            let stored = match (&stored, token) {
                (Some(json), _) => self.raw_records(json, &physical)?,
                (None, PageToken::Current) => Vec::new(),
                (None, PageToken::Archive(_)) => {
                    return Err(Error::storage(format!(
                        "the log's state names the archive {physical:?}, which is not stored"
                    )))
                }
            };
            let skip = sequence.saturating_sub(*first);
            let take = end.saturating_sub((*first).max(sequence));
            for record in stored
                .iter()
                .skip(usize::try_from(skip).unwrap_or(usize::MAX))
                .take(usize::try_from(take).unwrap_or(usize::MAX))
            {
                records.push(decode_stored_json(&physical, record.get())?);
            }
        }
        let next_sequence = sequence.saturating_add(records.len() as u64);
        Ok(ForwardPage {
            records,
            next_sequence,
            chunks_to_load: Vec::new(),
            run_id: ctx.run_id().to_owned(),
        })
    }

    /// Runs a read forward through `call`, one invocation of the read RPC with the given
    /// options returning its output, the chunks it asked to load and the run it read:
    /// first loading the open chunk, then what the call before asked for, at most
    /// [`MAX_READ_ATTEMPTS`] times. Every call is pinned to `run_id` when given, and each
    /// after the first to the run the first read, so a flow started again in between is
    /// [`Error::RunNotCurrent`], never a read of two runs.
    pub fn read_forward<T>(
        &self,
        run_id: Option<&str>,
        mut call: impl FnMut(RpcInvokeOptions) -> Result<(T, Vec<String>, String)>,
    ) -> Result<T> {
        let mut run = run_id.map(str::to_owned);
        let mut chunks = vec![self.chunk_key(CURRENT_CHUNK)];
        for _ in 0..MAX_READ_ATTEMPTS {
            let mut options = self.read_options(&chunks);
            options.run_id.clone_from(&run);
            let (output, to_load, read_run) = call(options)?;
            if to_load.is_empty() {
                return Ok(output);
            }
            run.get_or_insert(read_run);
            chunks = to_load;
        }
        Err(Error::LockConflict(format!(
            "appends moved the {} log's chunks under {MAX_READ_ATTEMPTS} reads forward; retry",
            self.page_noun
        )))
    }
}

/// The input of a read-forward RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReadFromInput {
    /// The first sequence to read, at least 1.
    pub sequence: u64,
    /// The most records to return, 1 to [`MAX_READ_RECORDS`].
    pub limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_range_across_layouts() {
        let mut history = LayoutHistory::single(100);
        history.change_chunk_size(101, 50, 50).unwrap();
        // Archives 1, 101, 201, 251; the open chunk starts at 301.
        let tokens = |start, end| -> Vec<String> {
            plan(&history, 301, start, end)
                .into_iter()
                .map(|(token, _)| token.to_string())
                .collect()
        };
        assert_eq!(
            tokens(150, 260),
            [
                "00000000000000000101",
                "00000000000000000201",
                "00000000000000000251"
            ]
        );
        assert_eq!(
            tokens(250, 305),
            ["00000000000000000201", "00000000000000000251", "current"]
        );
        assert_eq!(tokens(305, 310), ["current"]);
        assert!(tokens(400, 400).is_empty());
    }

    #[test]
    fn limits_and_starts_are_checked_naming_the_value() {
        assert_eq!(
            validate_read_limit(MAX_READ_RECORDS + 1)
                .unwrap_err()
                .to_string(),
            format!(
                "limit must be from 1 to {MAX_READ_RECORDS}, not {}",
                MAX_READ_RECORDS + 1
            )
        );
        assert_eq!(
            validate_read_start(0).unwrap_err().to_string(),
            format!("sequence must be from 1 to {}, not 0", u64::MAX)
        );
    }
}
