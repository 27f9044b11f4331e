//! A chunked log's state: its bookkeeping ([`LogState`]), where it is stored (the state
//! Attribute, or an instance of the state map for a named log) and its layout history.

use serde::{Deserialize, Serialize};

use super::idempotency::IdempotencyWindow;
use super::layout::{ChunkLayout, LayoutHistory};
use super::retention_setting::Retention;
use super::token::{PageToken, CURRENT_CHUNK};
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::error::{Error, Result};
use crate::typed::{decode_stored, encode};
use crate::verifiable::tiles::StoredFrontier;

/// The log's bookkeeping, stored in its state Attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogState {
    /// The sequence the next appended record gets.
    pub next_sequence: u64,
    /// The token of the newest archived chunk, `""` while the log holds none (before the
    /// first archive, or after a trim dropped them all).
    #[serde(default)]
    pub latest_archived_chunk_token: String,
    /// The sequence of the oldest record the log holds: 1 until a trim drops chunks, then
    /// the first sequence of the oldest retained chunk. Not stored while it is 1, so a log
    /// never trimmed keeps the state it was written with.
    #[serde(default = "first_sequence", skip_serializing_if = "is_first_sequence")]
    pub oldest_sequence: u64,
    /// The layout history, oldest first; empty (and not stored) while the log keeps its
    /// default chunk size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layouts: Vec<ChunkLayout>,
    /// The retention every append applies, absent (and not stored) while the log keeps
    /// every record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<Retention>,
    /// The idempotency window, absent (and not stored) while it is the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_window: Option<IdempotencyWindow>,
    /// The Merkle tree's frontier, absent (and not stored) while the log is not verifiable
    /// ([`ChunkedLog::switch_on_tree`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<StoredFrontier>,
}

impl Default for LogState {
    fn default() -> Self {
        LogState {
            next_sequence: 1,
            latest_archived_chunk_token: String::new(),
            oldest_sequence: first_sequence(),
            layouts: Vec::new(),
            retention: None,
            idempotency_window: None,
            tree: None,
        }
    }
}

fn first_sequence() -> u64 {
    1
}

fn is_first_sequence(sequence: &u64) -> bool {
    *sequence == first_sequence()
}

impl LogState {
    /// The page token of the oldest chunk the log holds: its oldest archive's, or
    /// `current` when it holds no archive.
    pub fn oldest_page_token(&self) -> String {
        if self.latest_archived_chunk_token.is_empty() {
            CURRENT_CHUNK.to_owned()
        } else {
            PageToken::Archive(self.oldest_sequence.max(1)).to_string()
        }
    }

    /// The error for the page `token` (of a chunk before the oldest retained one), which a
    /// trim dropped.
    pub fn trimmed(&self, token: String) -> Error {
        Error::PageTrimmed {
            token,
            oldest_token: self.oldest_page_token(),
            oldest_sequence: self.oldest_sequence,
        }
    }
}

impl ChunkedLog {
    /// The log's layout history, read from its state.
    pub fn layout_history(&self, ctx: &RpcContext<'_>) -> Result<LayoutHistory> {
        self.layout_history_of(&self.state(ctx)?)
    }

    /// Moves the log to `chunk_size` records per chunk and returns the sequence it applies
    /// from: the next chunk boundary (the open chunk keeps the size it was opened with), or
    /// at once while the log is empty. A change whose boundary is not reached yet is
    /// replaced by a later one. Sizes outside 1 to [`MAX_CHUNK_SIZE`](super::MAX_CHUNK_SIZE), and a change beyond
    /// [`MAX_LAYOUTS`](super::MAX_LAYOUTS) layouts, are [`Error::InvalidInput`]. The RPC needs
    /// [`ChunkedLog::appending`]'s locks and load.
    pub fn change_chunk_size(&self, ctx: &mut RpcContext<'_>, chunk_size: u64) -> Result<u64> {
        let mut open = self.open_chunk(ctx)?;
        let first = open.first_sequence();
        let from = open
            .history
            .change_chunk_size(first, open.current.len(), chunk_size)?;
        open.state.layouts = open.history.to_stored(self.chunk_size);
        self.write_state(ctx, &open.state)?;
        Ok(from)
    }
    pub(super) fn layout_history_of(&self, state: &LogState) -> Result<LayoutHistory> {
        LayoutHistory::from_stored(&state.layouts, self.chunk_size)
    }

    pub(super) fn state(&self, ctx: &RpcContext<'_>) -> Result<LogState> {
        if !self.name.is_empty() {
            return match ctx.map_instance(self.state_attribute, &self.name)? {
                Some(value) => {
                    decode_stored(&format!("{}/{}", self.state_attribute, self.name), value)
                }
                None => Ok(LogState::default()),
            };
        }
        let value = ctx.attribute(self.state_attribute)?.ok_or_else(|| {
            Error::storage(format!(
                "flow {:?} has no {} Attribute",
                ctx.flow_id(),
                self.state_attribute
            ))
        })?;
        decode_stored(self.state_attribute, value)
    }

    /// Stages the log's state.
    pub(super) fn write_state(&self, ctx: &mut RpcContext<'_>, state: &LogState) -> Result<()> {
        let value = encode("log state", state)?;
        if self.name.is_empty() {
            ctx.set_attribute(self.state_attribute, value)
        } else {
            ctx.set_map_instance(self.state_attribute, &self.name, value)
        }
    }
}
