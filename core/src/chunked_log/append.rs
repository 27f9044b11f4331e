//! Appending to a chunked log: one record or a batch, rolling full chunks into archives.
//!
//! The state and the open chunk are read once, every record goes through the same rule
//! (a full open chunk is archived before the next record goes in, with the chunk size of
//! the layout the chunk was opened in), and all writes are staged on the RPC context, so
//! a batch that crosses several chunk boundaries commits as one transaction, or not at all.
//!
//! The open chunk stays JSON text throughout ([`ChunkText`]): an append costs the records
//! it adds, not a decode and re-encode of the whole chunk.

use serde::Serialize;
use serde_json::Value;

use super::chunk_text::{remember_open, ChunkText};
use super::layout::LayoutHistory;
use super::state::LogState;
use super::token::{PageToken, CURRENT_CHUNK};
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::error::{Error, Result};
use crate::typed::encode;
use crate::verifiable::tiles::Frontier;

pub use crate::limits::MAX_BATCH_SIZE;

/// Checks a batch's length: 1 to [`MAX_BATCH_SIZE`] records.
pub fn validate_batch_size(len: usize) -> Result<()> {
    if len == 0 {
        return Err(Error::invalid_input("a batch needs at least one record"));
    }
    if len > MAX_BATCH_SIZE {
        return Err(Error::invalid_input(format!(
            "a batch holds at most {MAX_BATCH_SIZE} records, got {len}"
        )));
    }
    Ok(())
}

/// The open end of a log during one appending RPC.
pub(super) struct OpenChunk {
    pub(super) state: LogState,
    pub(super) history: LayoutHistory,
    pub(super) current: ChunkText,
    /// The tree's frontier, when the log is verifiable.
    pub(super) tree: Option<Frontier>,
}

impl OpenChunk {
    /// The sequence of the open chunk's first record (or of its next, when empty).
    pub(super) fn first_sequence(&self) -> u64 {
        self.state.next_sequence - self.current.len()
    }
}

impl ChunkedLog {
    /// Appends the record `make` builds for the next sequence and returns it.
    ///
    /// When `current` already holds a full chunk, it is first written to its archive
    /// instance and the state's newest-archive token advances; all of it is staged on
    /// `ctx` and commits together.
    pub fn append<R, F>(&self, ctx: &mut RpcContext<'_>, make: F) -> Result<R>
    where
        R: Serialize,
        F: FnOnce(u64) -> Result<R>,
    {
        let mut open = self.open_chunk(ctx)?;
        let record = make(open.state.next_sequence)?;
        self.push_record(ctx, &mut open, encode("record", &record)?)?;
        self.close_chunk(ctx, open)?;
        Ok(record)
    }

    /// Reads the state, layout history and open chunk an append works on.
    pub(super) fn open_chunk(&self, ctx: &RpcContext<'_>) -> Result<OpenChunk> {
        let state = self.state(ctx)?;
        let history = self.layout_history_of(&state)?;
        let key = self.chunk_key(CURRENT_CHUNK);
        let stored = ctx.map_instance_json(self.chunk_map, &key)?;
        let current = match stored {
            Some(json) => ChunkText::parse_open(
                &json,
                self.records_field,
                ctx.flow_id(),
                self.chunk_map,
                &key,
            )?,
            // A named log's chunks are created by its first append.
            None if !self.name.is_empty() => ChunkText::default(),
            None => {
                return Err(Error::storage(format!(
                    "flow {:?} has no {}/{CURRENT_CHUNK} chunk",
                    ctx.flow_id(),
                    self.chunk_map
                )))
            }
        };
        Ok(OpenChunk {
            tree: state.tree.as_ref().map(Frontier::from_stored).transpose()?,
            state,
            history,
            current,
        })
    }

    /// Adds one record at `open.state.next_sequence`, first archiving the open chunk when
    /// it is full.
    pub(super) fn push_record(
        &self,
        ctx: &mut RpcContext<'_>,
        open: &mut OpenChunk,
        record: Value,
    ) -> Result<()> {
        let encoded = serde_json::to_string(&record)
            .map_err(|e| Error::storage(format!("cannot encode a record: {e}")))?;
        let first = open.first_sequence();
        let len = open.current.len();
        if len >= open.history.capacity_at(first) {
            if len < open.history.chunk_size_at(first) {
                // A legacy layout's chunk, too large to fill: close it here, exactly.
                open.history
                    .close_legacy_chunk(first, open.state.next_sequence);
                open.state.layouts = open.history.to_stored(self.chunk_size);
            }
            let token = PageToken::Archive(first).to_string();
            let full = std::mem::take(&mut open.current);
            ctx.set_map_instance_json(
                self.chunk_map,
                &self.chunk_key(&token),
                full.into_json(self.records_field)?,
            )?;
            open.state.latest_archived_chunk_token = token;
        }
        // The record's limit is the one of the chunk it lands in (the layout of its
        // sequence); a refusal fails the RPC, so nothing staged above is stored.
        let lands_in = open.first_sequence();
        crate::limits::check_record_bytes(encoded.len(), open.history.capacity_at(lands_in))?;
        open.current.push(&encoded);
        if let Some(frontier) = &mut open.tree {
            self.append_leaf(ctx, frontier, &encoded)?;
        }
        open.state.next_sequence = open.state.next_sequence.checked_add(1).ok_or_else(|| {
            Error::storage(format!(
                "log of flow {:?} ran out of sequences",
                ctx.flow_id()
            ))
        })?;
        Ok(())
    }

    /// Applies the log's retention, if any, and stages the open chunk and the state.
    pub(super) fn close_chunk(&self, ctx: &mut RpcContext<'_>, mut open: OpenChunk) -> Result<()> {
        self.apply_retention(ctx, &mut open)?;
        let key = self.chunk_key(CURRENT_CHUNK);
        let len = open.current.len();
        let json = open.current.into_json(self.records_field)?;
        remember_open(ctx.flow_id(), self.chunk_map, &key, &json, len);
        ctx.set_map_instance_json(self.chunk_map, &key, json)?;
        if let Some(frontier) = &open.tree {
            open.state.tree = Some(frontier.to_stored());
        }
        self.write_state(ctx, &open.state)
    }

    /// Appends one record per item, in order, each built by `make` from its sequence and
    /// its item, and returns them. The batch may fill and archive several chunks (crossing
    /// layout changes too); it is staged on `ctx` and commits as one transaction. When
    /// `make` fails for any item, the error is returned and the RPC stores nothing.
    ///
    /// An empty batch, or one over [`MAX_BATCH_SIZE`] items, is [`Error::InvalidInput`].
    /// The RPC needs [`ChunkedLog::appending`]'s locks and load.
    pub fn append_batch<I, R, F>(
        &self,
        ctx: &mut RpcContext<'_>,
        items: Vec<I>,
        mut make: F,
    ) -> Result<Vec<R>>
    where
        R: Serialize,
        F: FnMut(u64, I) -> Result<R>,
    {
        validate_batch_size(items.len())?;
        let mut open = self.open_chunk(ctx)?;
        let mut records = Vec::with_capacity(items.len());
        for item in items {
            let record = make(open.state.next_sequence, item)?;
            self.push_record(ctx, &mut open, encode("record", &record)?)?;
            records.push(record);
        }
        self.close_chunk(ctx, open)?;
        Ok(records)
    }
}
