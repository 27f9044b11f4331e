//! Changing one log's chunk size: `ChangeLogChunkSize`.
//!
//! A log's chunk size sets the largest record it takes ([`crate::limits::record_limit`]):
//! a log of agent messages or tool outputs asks for small chunks so that large records
//! fit, either by size (`chunkSize`) or by the record size it must take
//! (`maxRecordBytes`, and the core picks the largest chunk size that takes it). As for
//! every chunked log ([`crate::chunked_log::LayoutHistory`]) the new size applies from the
//! next chunk boundary (at once on a log with no entries yet), every token issued stays
//! valid, and asking for the size every later chunk has changes nothing (and writes
//! nothing).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{named_log, validate_log_name, AppLog, CHANGE_LOG_CHUNK_SIZE};
use crate::chunked_log::ChunkLayout;
use crate::context::RpcContext;
use crate::error::{Error, Result};
use crate::limits::{chunk_size_for_record, record_limit};
use crate::output::RpcOutput;
use crate::typed::{decode_input, encode};

/// Input of `ChangeLogChunkSize`: the log and exactly one of `chunkSize` and
/// `maxRecordBytes`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ChangeLogChunkSizeInput {
    /// The log's name; required.
    pub log: String,
    /// The new number of entries per chunk, 1 to [`crate::limits::MAX_CHUNK_SIZE`]; 0 when
    /// `max_record_bytes` picks it.
    #[serde(skip_serializing_if = "is_zero")]
    pub chunk_size: u64,
    /// The largest record (compact JSON bytes, as given to an append) the log must take from
    /// the change on; the chunk size is the largest whose limit takes its entry (the record
    /// with the largest sequence, [`ENTRY_OVERHEAD_BYTES`] more). 0 when `chunk_size` is
    /// given.
    #[serde(skip_serializing_if = "is_zero_bytes")]
    pub max_record_bytes: usize,
}

/// What an entry adds to its record at most: `{"sequence":<20 digits>,"record":}`.
pub const ENTRY_OVERHEAD_BYTES: usize = r#"{"sequence":18446744073709551615,"record":}"#.len();

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn is_zero_bytes(value: &usize) -> bool {
    *value == 0
}

/// Output of `ChangeLogChunkSize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogChunkSizeChange {
    /// The log changed.
    pub log: String,
    /// The chunk size from the change on.
    pub chunk_size: u64,
    /// The largest stored entry (`{"sequence":…,"record":…}`, compact JSON bytes) that chunk
    /// size takes: the limit an over-long append's error names.
    pub record_limit: usize,
    /// The first sequence of the first chunk with that size.
    pub from_sequence: u64,
    /// The log's whole layout history afterwards, oldest first.
    pub layouts: Vec<ChunkLayout>,
}

impl ChangeLogChunkSizeInput {
    /// The chunk size asked for, after checking that exactly one of the two is given.
    fn chunk_size(&self) -> Result<u64> {
        match (self.chunk_size, self.max_record_bytes) {
            (0, 0) | (1.., 1..) => Err(Error::invalid_input(
                "give exactly one of chunkSize and maxRecordBytes",
            )),
            (size, 0) => Ok(size),
            (0, bytes) => bytes
                .checked_add(ENTRY_OVERHEAD_BYTES)
                .and_then(chunk_size_for_record)
                .ok_or_else(|| {
                    Error::invalid_input(format!(
                        "maxRecordBytes {bytes} is over the largest record any log takes, {} \
                         bytes (at chunk size 1)",
                        record_limit(1) - ENTRY_OVERHEAD_BYTES
                    ))
                }),
        }
    }
}

pub(super) fn change_log_chunk_size(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: ChangeLogChunkSizeInput = decode_input(CHANGE_LOG_CHUNK_SIZE, input)?;
    validate_log_name(&input.log)?;
    let chunk_size = input.chunk_size()?;
    let log = named_log(&input.log);
    let history = log.layout_history(ctx)?;
    // Asking for the size every later chunk has already writes nothing: a session that
    // sets its log's size each time it opens costs no write once it is set.
    let (from_sequence, layouts) = match history.layouts().last() {
        Some(last) if last.chunk_size == chunk_size => {
            (last.from_sequence, history.layouts().to_vec())
        }
        _ => {
            let from = log.change_chunk_size(ctx, chunk_size)?;
            (from, log.layout_history(ctx)?.layouts().to_vec())
        }
    };
    RpcOutput::encode(
        "chunk size change",
        &LogChunkSizeChange {
            log: input.log,
            chunk_size,
            record_limit: record_limit(chunk_size),
            from_sequence,
            layouts,
        },
    )
}

impl AppLog<'_> {
    /// Moves `log` to `chunk_size` entries per chunk from its next chunk boundary; see
    /// the [app log docs](crate::flows::app_log).
    pub fn change_chunk_size(&self, log: &str, chunk_size: u64) -> Result<LogChunkSizeChange> {
        self.change(ChangeLogChunkSizeInput {
            log: log.to_owned(),
            chunk_size,
            max_record_bytes: 0,
        })
    }

    /// Moves `log` to the largest chunk size that takes records of `max_record_bytes`,
    /// from its next chunk boundary.
    pub fn fit_records(&self, log: &str, max_record_bytes: usize) -> Result<LogChunkSizeChange> {
        self.change(ChangeLogChunkSizeInput {
            log: log.to_owned(),
            chunk_size: 0,
            max_record_bytes,
        })
    }

    fn change(&self, input: ChangeLogChunkSizeInput) -> Result<LogChunkSizeChange> {
        validate_log_name(&input.log)?;
        let output = self.invoke(CHANGE_LOG_CHUNK_SIZE, encode("input", &input)?)?;
        output.decode(CHANGE_LOG_CHUNK_SIZE)
    }
}
