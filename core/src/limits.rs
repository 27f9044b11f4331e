//! The largest inputs attrflow accepts, in bytes, and the checks that enforce them at write
//! time.
//!
//! Every limit is a byte count of UTF-8 text or of compact JSON, so it bounds what a store
//! row, a page read or an HTTP answer can grow to, not only how many items they hold. Input
//! over a limit fails with [`Error::InvalidInput`] naming the limit and the size, before
//! anything is written.
//!
//! | what | limit | checked by |
//! | --- | --- | --- |
//! | flow ID | [`MAX_FLOW_ID_BYTES`] | [`crate::names::validate_flow_id`] |
//! | Attribute, map, RPC, flow type name | [`MAX_NAME_BYTES`] | [`crate::names::validate_definition_name`] |
//! | map instance key | [`MAX_INSTANCE_KEY_BYTES`] | [`crate::names::validate_instance_key`] |
//! | the JSON input of one RPC call | [`MAX_RPC_INPUT_BYTES`] | [`check_rpc_input`] |
//! | one chunked-log record | [`record_limit`] of the chunk size of the layout it lands in ([`MAX_RECORD_BYTES`] or more) | [`check_record`] |
//! | one stored value, so one whole chunk | [`MAX_VALUE_BYTES`] | [`check_stored_value`] |
//! | records in one chunk | [`MAX_CHUNK_SIZE`] | [`crate::chunked_log::validate_chunk_size`] |
//! | chunk layouts of one log | [`MAX_LAYOUTS`] | [`crate::chunked_log::LayoutHistory::change_chunk_size`] |
//! | records in one batch append | [`MAX_BATCH_SIZE`] | [`crate::chunked_log::validate_batch_size`] |
//! | records one read forward returns | [`MAX_READ_RECORDS`] | [`crate::chunked_log::validate_read_limit`] |
//! | how long one tail waits | [`MAX_TAIL_TIMEOUT`] | [`crate::chunked_log::validate_tail_timeout`] |
//! | idempotency key | [`MAX_IDEMPOTENCY_KEY_LEN`] | [`crate::chunked_log::validate_idempotency_key`] |
//! | keys an idempotency window keeps | [`MAX_WINDOW_KEYS`] | [`crate::chunked_log::IdempotencyWindow::validate`] |
//! | records the remembered keys hold | [`MAX_REMEMBERED_RECORDS`] | pruned on each keyed append |
//! | app log name | [`MAX_LOG_NAME_BYTES`] | [`crate::flows::app_log::validate_log_name`] |
//!
//! **A record's limit follows its chunk size.** A chunk is one stored value, so a full
//! chunk of the largest records must fit in [`MAX_VALUE_BYTES`]: a log whose chunks hold
//! `n` records takes records of up to [`record_limit`]`(n)` bytes, about 1 MiB / `n` (8247
//! bytes at [`MAX_CHUNK_SIZE`], 10 474 at the default 100, 130 943 at 8, 1 047 551 at 1).
//! The limit is the one of the layout the record's sequence falls in; layouts change only
//! at a chunk boundary, so every record of a chunk had the same limit, and the chunk always
//! fits (checked at compile time for every chunk size a log accepts): no sequence of calls
//! leaves a log unable to append. Every log takes records of [`MAX_RECORD_BYTES`] (8 KiB),
//! whatever its size; a log for larger records (agent messages, tool outputs) asks for a
//! smaller chunk size ([`chunk_size_for_record`] picks it).
//!
//! There is no separate limit on one text field: a string may take its record's whole
//! limit, so a 30 KB tool output is accepted by any log whose record limit allows 30 KB.
//! What a field may hold is bounded by the record, which bounds every row, page and answer.
//!
//! ```
//! use attrflow::limits::{check_record, record_limit};
//! use serde_json::json;
//! assert!(check_record(&json!({"output": "x".repeat(30_000)}), 8).is_ok());
//! let error = check_record(&json!({"output": "x".repeat(30_000)}), 100).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "record is 30013 bytes as JSON; the limit of a log with chunks of 100 records is \
//!      10474 bytes (a smaller chunk size allows larger records: 34 or less for this one)"
//! );
//! assert_eq!(record_limit(1), 1_047_551);
//! ```

use std::io;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// The longest flow ID, in bytes, attrflow accepts.
pub const MAX_FLOW_ID_BYTES: usize = 256;

/// The longest attribute, map, RPC or flow type name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// The longest map instance key, in bytes.
pub const MAX_INSTANCE_KEY_BYTES: usize = 256;

/// The longest app log name, in bytes, so that every chunk key of the log
/// (`<log>.<20-digit token>`, `<log>.idempotency-keys`) stays a valid instance key.
pub const MAX_LOG_NAME_BYTES: usize = 200;

/// The most records one batch append takes. It bounds the writes of one transaction
/// (at most this many records plus the chunks they fill).
pub const MAX_BATCH_SIZE: usize = 1_000;

/// The most records one read forward ([`crate::chunked_log::ChunkedLog::read_from`])
/// returns. It bounds the chunks one read loads (at most this many plus one) and so the
/// size of its answer (at most as many stored values' worth of records).
pub const MAX_READ_RECORDS: u64 = 1_000;

/// The longest a tail ([`crate::chunked_log::tail`]) waits for new records; a caller
/// that wants to wait longer tails again.
pub const MAX_TAIL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The longest idempotency key, in bytes.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 128;

/// The largest `max_keys` an idempotency window may have: it bounds the instance every
/// keyed append reads and rewrites.
pub const MAX_WINDOW_KEYS: u32 = 10_000;

/// The most records a log's remembered idempotency keys hold in all, whatever the window:
/// it bounds the instance every keyed append reads and rewrites.
pub const MAX_REMEMBERED_RECORDS: usize = 10_000;

/// The largest JSON input of one RPC call, compact-encoded: 1 MiB, the size of one stored
/// value, so that a batch of the largest count of typical records (a thousand of about a
/// kilobyte) fits. The example HTTP service accepts smaller bodies (64 KiB).
pub const MAX_RPC_INPUT_BYTES: usize = 1024 * 1024;

/// The record size every chunked log accepts, whatever its chunk size, compact-encoded
/// JSON: 8 KiB. [`MAX_CHUNK_SIZE`] is as many of these as fit in one stored value; a log
/// with smaller chunks takes larger records ([`record_limit`]).
pub const MAX_RECORD_BYTES: usize = 8 * 1024;

/// The largest stored value (an Attribute or one map instance, hence one whole chunk),
/// compact-encoded JSON: 1 MiB.
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;

/// Room for a chunk's own JSON around its records (`{"<field>":[…]}`); the comma after
/// each record is counted with the record.
pub const CHUNK_OVERHEAD_BYTES: usize = 1024;

/// The most records one chunk holds, 127: as many records of [`MAX_RECORD_BYTES`] as fit
/// in one stored value. A chunked log's chunk size, its default or a changed one, is at
/// most this.
pub const MAX_CHUNK_SIZE: u64 =
    ((MAX_VALUE_BYTES - CHUNK_OVERHEAD_BYTES) / (MAX_RECORD_BYTES + 1)) as u64;

/// The most chunk layouts one log keeps; a further chunk-size change is refused. It
/// bounds the state every append of the log reads.
pub const MAX_LAYOUTS: usize = 64;

/// The largest record, compact-encoded JSON, a log with chunks of `chunk_size` records
/// takes: as much as lets a full chunk of such records (each with its comma) fit in one
/// stored value. A `chunk_size` of 0 counts as 1.
pub const fn record_limit(chunk_size: u64) -> usize {
    let size = if chunk_size == 0 { 1 } else { chunk_size };
    if size > MAX_VALUE_BYTES as u64 {
        return 0;
    }
    (MAX_VALUE_BYTES - CHUNK_OVERHEAD_BYTES) / size as usize - 1
}

/// The largest chunk size, 1 to [`MAX_CHUNK_SIZE`], whose [`record_limit`] takes records of
/// `record_bytes`; `None` when none does (a record over [`record_limit`]`(1)`).
pub const fn chunk_size_for_record(record_bytes: usize) -> Option<u64> {
    if record_bytes > record_limit(1) {
        return None;
    }
    let size = ((MAX_VALUE_BYTES - CHUNK_OVERHEAD_BYTES) / (record_bytes + 1)) as u64;
    Some(if size > MAX_CHUNK_SIZE {
        MAX_CHUNK_SIZE
    } else {
        size
    })
}

/// Whether a full chunk of `chunk_size` records of its [`record_limit`] fits in one stored
/// value and takes records of [`MAX_RECORD_BYTES`]; `const`, so a log's default size is
/// checked when it is compiled.
pub const fn chunk_fits(chunk_size: u64) -> bool {
    let limit = record_limit(chunk_size);
    chunk_size > 0
        && limit >= MAX_RECORD_BYTES
        && chunk_size as usize * (limit + 1) + CHUNK_OVERHEAD_BYTES <= MAX_VALUE_BYTES
}

const _: () = assert!(
    chunk_fits(MAX_CHUNK_SIZE) && chunk_fits(1),
    "a full chunk of the largest records must fit in one stored value"
);
const _: () = assert!(
    record_limit(MAX_CHUNK_SIZE) >= MAX_RECORD_BYTES,
    "every log takes records of MAX_RECORD_BYTES"
);
const _: () = assert!(
    MAX_CHUNK_SIZE >= 100,
    "the seed's chunk size of 100 is allowed"
);

/// The size of `value` as compact JSON, counted without building the text.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = ByteCounter(0);
    // Serializing into a counter only fails for values JSON cannot hold (maps with
    // non-string keys); those fail again, with a message, where they are really encoded.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Checks the JSON input of a call of `rpc` against [`MAX_RPC_INPUT_BYTES`].
pub fn check_rpc_input(rpc: &str, input: &Value) -> Result<()> {
    let size = json_len(input);
    within("input of RPC", rpc, size, MAX_RPC_INPUT_BYTES)
}

/// Checks one record about to land in a chunk of `chunk_size` records against
/// [`record_limit`]`(chunk_size)`. The error names the log's limit and chunk size, and the
/// chunk size that would take the record.
pub fn check_record(record: &Value, chunk_size: u64) -> Result<()> {
    check_record_bytes(json_len(record), chunk_size)
}

/// [`check_record`] of a record whose compact JSON is `size` bytes.
pub fn check_record_bytes(size: usize, chunk_size: u64) -> Result<()> {
    let limit = record_limit(chunk_size);
    if size <= limit {
        return Ok(());
    }
    let remedy = match chunk_size_for_record(size) {
        Some(fits) => {
            format!("a smaller chunk size allows larger records: {fits} or less for this one")
        }
        None => format!(
            "no chunk size takes it: the largest record any log takes is {} bytes",
            record_limit(1)
        ),
    };
    Err(Error::invalid_input(format!(
        "record is {size} bytes as JSON; the limit of a log with chunks of {chunk_size} \
         records is {limit} bytes ({remedy})"
    )))
}

/// Checks a value about to be stored under `physical_name` against [`MAX_VALUE_BYTES`];
/// `json` is its compact encoding.
pub fn check_stored_value(physical_name: &str, json: &str) -> Result<()> {
    within("stored value", physical_name, json.len(), MAX_VALUE_BYTES)
}

fn within(what: &str, name: &str, size: usize, limit: usize) -> Result<()> {
    if size > limit {
        return Err(Error::invalid_input(format!(
            "{what} {name:?} is {size} bytes as JSON; the limit is {limit} bytes"
        )));
    }
    Ok(())
}

struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_len_is_the_compact_encoding_length() {
        let value = json!({"a": [1, "é"], "b": null});
        assert_eq!(json_len(&value), value.to_string().len());
    }

    #[test]
    fn a_records_limit_follows_its_chunk_size_and_a_full_chunk_always_fits() {
        for chunk_size in 2..=MAX_CHUNK_SIZE {
            assert!(chunk_fits(chunk_size), "chunk size {chunk_size}");
            let limit = record_limit(chunk_size);
            assert!(limit >= MAX_RECORD_BYTES);
            assert_eq!(
                chunk_size_for_record(limit).map(|s| s >= chunk_size),
                Some(true)
            );
            let at = json!("x".repeat(limit - 2));
            assert!(check_record(&at, chunk_size).is_ok());
            let over = json!("x".repeat(limit - 1));
            let fits = chunk_size_for_record(limit + 1).unwrap();
            assert!(fits < chunk_size && record_limit(fits) > limit);
            assert!(check_record(&over, fits).is_ok());
            assert_eq!(
                check_record(&over, chunk_size).unwrap_err().to_string(),
                format!(
                    "record is {} bytes as JSON; the limit of a log with chunks of {chunk_size} \
                     records is {limit} bytes (a smaller chunk size allows larger records: \
                     {fits} or less for this one)",
                    limit + 1
                )
            );
        }
        assert_eq!(
            (
                record_limit(MAX_CHUNK_SIZE),
                record_limit(100),
                record_limit(8)
            ),
            (8247, 10_474, 130_943)
        );
        assert!(chunk_fits(1) && check_record(&json!("x".repeat(record_limit(1) - 2)), 1).is_ok());
        assert_eq!(chunk_size_for_record(1), Some(MAX_CHUNK_SIZE));
        assert_eq!(chunk_size_for_record(record_limit(1) + 1), None);
        let huge = json!("x".repeat(record_limit(1)));
        assert!(check_record(&huge, 1).unwrap_err().to_string().ends_with(
            "(no chunk size takes it: the largest record any log takes is 1047551 bytes)"
        ));
    }

    #[test]
    fn whole_records_inputs_and_values_are_bounded() {
        let field = "x".repeat(MAX_RECORD_BYTES / 2 + 100);
        let record = json!({"a": field, "b": field});
        assert!(
            matches!(check_record(&record, MAX_CHUNK_SIZE), Err(Error::InvalidInput(m)) if m.starts_with("record is "))
        );
        let input = json!("x".repeat(MAX_RPC_INPUT_BYTES));
        assert!(check_rpc_input("R", &input).is_err());
        assert!(check_rpc_input("R", &json!("x".repeat(MAX_RPC_INPUT_BYTES - 2))).is_ok());
        assert!(check_stored_value("m/current", &"x".repeat(MAX_VALUE_BYTES)).is_ok());
        let error = check_stored_value("m/current", &"x".repeat(MAX_VALUE_BYTES + 1)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "stored value \"m/current\" is 1048577 bytes as JSON; the limit is 1048576 bytes"
        );
    }
}
