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
//! | one text field of a chunked-log record | [`MAX_RECORD_FIELD_BYTES`] | [`check_record`] |
//! | one chunked-log record | [`MAX_RECORD_BYTES`] | [`check_record`] |
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
//! A chunk of [`MAX_CHUNK_SIZE`] records of the largest size always fits in
//! [`MAX_VALUE_BYTES`] (checked at compile time), and every chunk size a log accepts is at
//! most that, so a chunk never grows past what can be stored before it rolls over: no
//! sequence of calls leaves a log unable to append.
//!
//! ```
//! use attrflow::limits::{check_record, MAX_RECORD_FIELD_BYTES};
//! use serde_json::json;
//! assert!(check_record(&json!({"subscriberId": "s-1"})).is_ok());
//! let long = "x".repeat(MAX_RECORD_FIELD_BYTES + 1);
//! let error = check_record(&json!({"subscriberId": long})).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "record field \"subscriberId\" is 4097 bytes; the limit is 4096 bytes"
//! );
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
/// returns. It bounds the chunks one read loads (at most this many plus one) and the size
/// of its answer (this many records of at most [`MAX_RECORD_BYTES`]).
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

/// The longest text field (a JSON string anywhere in a record) of a chunked-log record.
pub const MAX_RECORD_FIELD_BYTES: usize = 4 * 1024;

/// The largest chunked-log record, compact-encoded JSON.
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

/// Whether a full chunk of `chunk_size` records of the largest size fits in one stored
/// value; `const`, so a log's default size is checked when it is compiled.
pub const fn chunk_fits(chunk_size: u64) -> bool {
    chunk_size as usize * (MAX_RECORD_BYTES + 1) + CHUNK_OVERHEAD_BYTES <= MAX_VALUE_BYTES
}

const _: () = assert!(
    chunk_fits(MAX_CHUNK_SIZE),
    "a full chunk of the largest records must fit in one stored value"
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

/// Checks one chunked-log record: every text field against [`MAX_RECORD_FIELD_BYTES`] (the
/// message names the field by its path), the whole record against [`MAX_RECORD_BYTES`].
pub fn check_record(record: &Value) -> Result<()> {
    check_fields(record, &mut String::new())?;
    let size = json_len(record);
    if size > MAX_RECORD_BYTES {
        return Err(Error::invalid_input(format!(
            "record is {size} bytes as JSON; the limit is {MAX_RECORD_BYTES} bytes"
        )));
    }
    Ok(())
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

fn check_fields(value: &Value, path: &mut String) -> Result<()> {
    match value {
        Value::String(text) if text.len() > MAX_RECORD_FIELD_BYTES => {
            Err(Error::invalid_input(format!(
                "record field {path:?} is {} bytes; the limit is {MAX_RECORD_FIELD_BYTES} bytes",
                text.len()
            )))
        }
        Value::Object(fields) => fields
            .iter()
            .try_for_each(|(key, field)| nested(path, key, field)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(index, item)| nested(path, &index.to_string(), item)),
        _ => Ok(()),
    }
}

fn nested(path: &mut String, key: &str, value: &Value) -> Result<()> {
    let parent = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
    let checked = check_fields(value, path);
    path.truncate(parent);
    checked
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
    fn fields_at_the_limit_pass_and_one_byte_more_fails_naming_the_path() {
        let at = "x".repeat(MAX_RECORD_FIELD_BYTES);
        assert!(check_record(&json!({"a": {"b": [at]}})).is_ok());
        let over = "é".repeat(MAX_RECORD_FIELD_BYTES / 2 + 1);
        let error = check_record(&json!({"a": {"b": ["ok", over]}})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "record field \"a.b.1\" is 4098 bytes; the limit is 4096 bytes"
        );
    }

    #[test]
    fn whole_records_inputs_and_values_are_bounded() {
        let field = "x".repeat(MAX_RECORD_FIELD_BYTES);
        let record = json!({"a": field, "b": field});
        assert!(
            matches!(check_record(&record), Err(Error::InvalidInput(m)) if m.starts_with("record is "))
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
