//! Read-only checks of a chunked log as it is stored, for inspection tools (`attrflow
//! verify`): the invariants every append keeps, checked on the stored values themselves.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};

use super::{
    archive_token, ChunkedLog, LayoutHistory, LogState, ARCHIVE_TOKEN_DIGITS, CURRENT_CHUNK,
};

/// What a log that passed [`ChunkedLog::verify`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSummary {
    /// Records stored, archived and open (dense from the oldest retained sequence).
    pub records: u64,
    /// Archived chunks.
    pub archives: u64,
}

/// A broken invariant: the stored value it was found in and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {reason}")]
pub struct Violation {
    /// The physical name of the value (`subscriber_chunks/00000000000000000101`).
    pub location: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A log's stored chunks: the archives (physical name, token, value), oldest first, and
/// the open chunk (physical name, value).
pub(super) type StoredChunks<'v> = (
    Vec<(&'v String, &'v str, &'v Value)>,
    Option<(&'v String, &'v Value)>,
);

pub(super) fn violation(location: &str, reason: impl Into<String>) -> Violation {
    Violation {
        location: location.to_owned(),
        reason: reason.into(),
    }
}

impl ChunkedLog {
    /// [`ChunkedLog::verify`] as a start's check ([`crate::definition::StartCheck`]): initial
    /// values that would break the log are [`Error::InvalidInput`] naming what is wrong.
    pub fn check_start(&self, values: &BTreeMap<String, Value>) -> Result<()> {
        self.verify(values).map(drop).map_err(|violation| {
            Error::invalid_input(format!(
                "initial values would leave the chunked log broken: {violation}"
            ))
        })
    }

    /// Checks the log in `values` (one flow's stored values, physical name → JSON) and
    /// returns the first broken invariant:
    /// - the state decodes and its layout history is valid;
    /// - archives are named by their first record's sequence, lie on the layout's chunk
    ///   boundaries and hold exactly one chunk of their layout's size;
    /// - sequences are dense from the oldest retained one (1 until a trim) across the
    ///   archives and the open chunk, which holds at most one chunk;
    /// - the state's next sequence is the last sequence + 1 and it names the newest archive.
    pub fn verify(&self, values: &BTreeMap<String, Value>) -> Result<LogSummary, Violation> {
        let (state_name, state, history) = self.stored_state(values)?;

        let (archives, current) = self.stored_chunks(values);

        // A trim drops the oldest chunks: what stays starts at the state's oldest sequence.
        let mut expected = state.oldest_sequence;
        let mut latest = String::new();
        for (name, key, value) in &archives {
            let sequences = self.sequences(name, value)?;
            let expected_token = archive_token(expected).unwrap_or_default();
            if *key != expected_token {
                return Err(violation(
                    name,
                    format!("expected the archive {expected_token} next (sequences are not dense)"),
                ));
            }
            if sequences
                .first()
                .and_then(|s| archive_token(*s).ok())
                .as_deref()
                != Some(*key)
            {
                return Err(violation(
                    name,
                    "the archive is not named by its first sequence",
                ));
            }
            let size = history.chunk_size_at(expected);
            if sequences.len() as u64 != size {
                return Err(violation(
                    name,
                    format!(
                        "holds {} records; its layout's chunk size is {size}",
                        sequences.len()
                    ),
                ));
            }
            expected = self.dense(name, &sequences, expected)?;
            latest = (*key).to_owned();
        }
        if let Some((name, value)) = current {
            let sequences = self.sequences(name, value)?;
            let size = history.chunk_size_at(expected);
            if sequences.len() as u64 > size {
                return Err(violation(
                    name,
                    format!(
                        "holds {} records; the chunk size is {size}",
                        sequences.len()
                    ),
                ));
            }
            expected = self.dense(name, &sequences, expected)?;
        }
        if state.next_sequence != expected {
            return Err(violation(
                &state_name,
                format!(
                    "next sequence is {}; the last stored sequence + 1 is {expected}",
                    state.next_sequence
                ),
            ));
        }
        if state.latest_archived_chunk_token != latest {
            return Err(violation(
                &state_name,
                format!(
                    "names {:?} as the newest archive; the newest stored is {latest:?}",
                    state.latest_archived_chunk_token
                ),
            ));
        }
        Ok(LogSummary {
            records: expected - state.oldest_sequence,
            archives: archives.len() as u64,
        })
    }

    /// The page token of the chunk holding `sequence` in the log stored in `values` (one
    /// flow's stored values): its archive's token, or `current` for a sequence in the open
    /// chunk or after it. Reading from that page down, newest first, starts at `sequence`.
    pub fn page_token_of(
        &self,
        values: &BTreeMap<String, Value>,
        sequence: u64,
    ) -> Result<String, Violation> {
        let (_, state, history) = self.stored_state(values)?;
        let first = history
            .previous_boundary(sequence.saturating_add(1))
            .unwrap_or(1);
        // A boundary is a first sequence, never 0, so its token always exists.
        Ok(archive_token(first)
            .ok()
            .filter(|token| {
                !state.latest_archived_chunk_token.is_empty()
                    && *token <= state.latest_archived_chunk_token
            })
            .unwrap_or_else(|| CURRENT_CHUNK.to_owned()))
    }

    /// The log's archived chunks (physical name, token, value), oldest first, and its open
    /// chunk, as stored in `values`.
    pub(super) fn stored_chunks<'v>(
        &self,
        values: &'v BTreeMap<String, Value>,
    ) -> StoredChunks<'v> {
        let prefix = format!("{}/{}", self.chunk_map, self.chunk_key(""));
        let mut archives = Vec::new();
        let mut current = None;
        for (name, value) in values.range(prefix.clone()..) {
            let Some(key) = name.strip_prefix(&prefix) else {
                break;
            };
            if key == CURRENT_CHUNK {
                current = Some((name, value));
            } else if key.len() == ARCHIVE_TOKEN_DIGITS && key.bytes().all(|b| b.is_ascii_digit()) {
                archives.push((name, key, value));
            }
        }
        (archives, current)
    }

    /// The log's state (its physical name, value and layout history) as stored in `values`.
    pub(super) fn stored_state(
        &self,
        values: &BTreeMap<String, Value>,
    ) -> Result<(String, LogState, LayoutHistory), Violation> {
        let state_name = if self.name.is_empty() {
            self.state_attribute.to_owned()
        } else {
            format!("{}/{}", self.state_attribute, self.name)
        };
        let state: LogState = match values.get(&state_name) {
            Some(value) => serde_json::from_value(value.clone())
                .map_err(|e| violation(&state_name, format!("not a log state: {e}")))?,
            None if self.name.is_empty() => return Err(violation(&state_name, "missing")),
            None => LogState::default(),
        };
        let history = LayoutHistory::from_stored(&state.layouts, self.chunk_size)
            .map_err(|e| violation(&state_name, e.to_string()))?;
        Ok((state_name, state, history))
    }

    /// The `sequence` of every record of the chunk stored as `name`.
    fn sequences(&self, name: &str, chunk: &Value) -> Result<Vec<u64>, Violation> {
        let Some(Value::Array(records)) = chunk.get(self.records_field) else {
            return Err(violation(
                name,
                format!("has no {:?} list", self.records_field),
            ));
        };
        records
            .iter()
            .map(|record| {
                record["sequence"]
                    .as_u64()
                    .ok_or_else(|| violation(name, format!("a record has no sequence: {record}")))
            })
            .collect()
    }

    /// Checks that `sequences` are `first`, `first + 1`, …; returns the one after the last.
    fn dense(&self, name: &str, sequences: &[u64], first: u64) -> Result<u64, Violation> {
        let mut expected = first;
        for &sequence in sequences {
            if sequence != expected {
                return Err(violation(
                    name,
                    format!(
                        "sequence {sequence} where {expected} belongs (sequences are not dense)"
                    ),
                ));
            }
            expected += 1;
        }
        Ok(expected)
    }
}
