//! Changing the archive's chunk size and its idempotency window:
//! `ChangeSubscriberChunkSize` and `SetSubscriberIdempotencyWindow`.
//!
//! A new chunk size applies from the next chunk boundary: the open `current` chunk fills
//! up to the size it was opened with, and the chunk after it has the new size (on an
//! archive with no subscribers yet, the new size applies at once). Every archive token
//! issued before stays valid and names the same chunk; next-page tokens walk across the
//! change. Sizes are 1 to [`MAX_CHUNK_SIZE`](crate::chunked_log::MAX_CHUNK_SIZE), and an archive keeps at most
//! [`MAX_LAYOUTS`](crate::chunked_log::MAX_LAYOUTS) layouts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    SubscriberArchive, CHANGE_SUBSCRIBER_CHUNK_SIZE, LOG, SET_SUBSCRIBER_IDEMPOTENCY_WINDOW,
};
use crate::chunked_log::{ChunkLayout, IdempotencyWindow};
use crate::context::RpcContext;
use crate::definition::RpcDefinition;
use crate::error::Result;
use crate::output::RpcOutput;
use crate::typed::decode_input;

/// Input of `ChangeSubscriberChunkSize`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ChangeChunkSizeInput {
    /// The new number of subscribers per chunk, 1 to [`MAX_CHUNK_SIZE`](crate::chunked_log::MAX_CHUNK_SIZE).
    pub chunk_size: u64,
}

/// Output of `ChangeSubscriberChunkSize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkSizeChange {
    /// The size asked for.
    pub chunk_size: u64,
    /// The first sequence of the first chunk with that size.
    pub from_sequence: u64,
    /// The archive's whole layout history afterwards, oldest first.
    pub layouts: Vec<ChunkLayout>,
}

pub(super) fn change_chunk_size_rpc() -> RpcDefinition {
    LOG.appending(RpcDefinition::new_with_output(
        CHANGE_SUBSCRIBER_CHUNK_SIZE,
        change_chunk_size,
    ))
}

pub(super) fn set_idempotency_window_rpc() -> RpcDefinition {
    RpcDefinition::new_with_output(SET_SUBSCRIBER_IDEMPOTENCY_WINDOW, set_idempotency_window)
        .lock_attribute(super::ARCHIVE_STATE_ATTRIBUTE)
}

fn change_chunk_size(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: ChangeChunkSizeInput = decode_input(CHANGE_SUBSCRIBER_CHUNK_SIZE, input)?;
    let from_sequence = LOG.change_chunk_size(ctx, input.chunk_size)?;
    let layouts = LOG.layout_history(ctx)?.layouts().to_vec();
    RpcOutput::encode(
        "chunk size change",
        &ChunkSizeChange {
            chunk_size: input.chunk_size,
            from_sequence,
            layouts,
        },
    )
}

fn set_idempotency_window(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let window: IdempotencyWindow = decode_input(SET_SUBSCRIBER_IDEMPOTENCY_WINDOW, input)?;
    LOG.set_idempotency_window(ctx, window)?;
    RpcOutput::encode("idempotency window", &window)
}

impl SubscriberArchive<'_> {
    /// Moves the archive to `chunk_size` subscribers per chunk from the next chunk
    /// boundary; see the [module docs](self). A lock conflict is retried by the client's policy.
    pub fn change_chunk_size(&self, chunk_size: u64) -> Result<ChunkSizeChange> {
        self.call(
            CHANGE_SUBSCRIBER_CHUNK_SIZE,
            &ChangeChunkSizeInput { chunk_size },
        )
    }

    /// Sets how many idempotency keys the archive remembers, and for how long.
    pub fn set_idempotency_window(&self, window: IdempotencyWindow) -> Result<IdempotencyWindow> {
        self.call(SET_SUBSCRIBER_IDEMPOTENCY_WINDOW, &window)
    }
}
