//! Batch and idempotent appends to an app log: `AppendLogRecords` and
//! `AppendLogRecordOnce`, with the rules of every chunked log.
//!
//! `AppendLogRecords` appends 1 to [`MAX_BATCH_SIZE`](crate::chunked_log::MAX_BATCH_SIZE)
//! records to one log in one transaction, filling and archiving as many chunks as they
//! need; one `null` record fails the batch and stores nothing. With an `idempotencyKey` it
//! is also idempotent. `AppendLogRecordOnce` appends one record under a required key. A
//! retry with the same key and payload, within the log's idempotency window (100 keys and
//! 24 hours), returns the first call's entries with their sequences and appends nothing;
//! the same key with another payload is `InvalidInput`. Keys are per log.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    log_entry, named_log, validate_log_name, AppLog, LogEntry, APPEND_LOG_RECORDS,
    APPEND_LOG_RECORD_ONCE, FLOW_TYPE,
};
use crate::context::RpcContext;
use crate::error::Result;
use crate::output::RpcOutput;
use crate::typed::{decode_input, encode};

/// Input of `AppendLogRecords`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppendLogRecordsInput {
    /// The log's name; required.
    pub log: String,
    /// The records, in the order they get their sequences; none may be `null`.
    pub records: Vec<Value>,
    /// An idempotency key for the whole batch; `""` for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub idempotency_key: String,
}

/// Output of `AppendLogRecords`: the appended entries, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendedLogEntries {
    /// The entries with their sequences, in the batch's order.
    pub entries: Vec<LogEntry>,
}

/// Input of `AppendLogRecordOnce`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppendLogRecordOnceInput {
    /// The log's name; required.
    pub log: String,
    /// The idempotency key; required, 1 to 128 visible ASCII characters.
    pub idempotency_key: String,
    /// The record: any JSON value but `null`.
    pub record: Value,
}

pub(super) fn append_log_records(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: AppendLogRecordsInput = decode_input(APPEND_LOG_RECORDS, input)?;
    validate_log_name(&input.log)?;
    let log = named_log(&input.log);
    let payload = Value::Array(input.records.clone());
    let items: Vec<(usize, Value)> = input.records.into_iter().enumerate().collect();
    let make = |sequence, (index, record)| log_entry(sequence, record, Some(index));
    let entries = if input.idempotency_key.is_empty() {
        log.append_batch(ctx, items, make)?
    } else {
        log.append_batch_once(ctx, &input.idempotency_key, &payload, items, make)?
    };
    RpcOutput::encode("log entries", &AppendedLogEntries { entries })
}

pub(super) fn append_log_record_once(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: AppendLogRecordOnceInput = decode_input(APPEND_LOG_RECORD_ONCE, input)?;
    validate_log_name(&input.log)?;
    let record = input.record;
    let payload = record.clone();
    let entry =
        named_log(&input.log).append_once(ctx, &input.idempotency_key, &payload, |sequence| {
            log_entry(sequence, record, None)
        })?;
    RpcOutput::encode("log entry", &entry)
}

impl AppLog<'_> {
    /// Appends `records` (1 to [`MAX_BATCH_SIZE`](crate::chunked_log::MAX_BATCH_SIZE)) to
    /// `log` in one transaction and returns their entries. With `idempotency_key`, a retry
    /// of the same batch returns the first call's entries; see the [module docs](crate::flows::app_log).
    pub fn append_batch(
        &self,
        log: &str,
        records: Vec<Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Vec<LogEntry>> {
        validate_log_name(log)?;
        let input = AppendLogRecordsInput {
            log: log.to_owned(),
            records,
            idempotency_key: idempotency_key.unwrap_or_default().to_owned(),
        };
        let output = self.invoke(APPEND_LOG_RECORDS, encode("input", &input)?)?;
        let appended: AppendedLogEntries = output.decode(APPEND_LOG_RECORDS)?;
        Ok(appended.entries)
    }

    /// Appends `record` to `log` under `idempotency_key`: a retry with the same key returns
    /// the first call's entry (same sequence) instead of appending again.
    pub fn append_once(&self, log: &str, idempotency_key: &str, record: Value) -> Result<LogEntry> {
        validate_log_name(log)?;
        let input = AppendLogRecordOnceInput {
            log: log.to_owned(),
            idempotency_key: idempotency_key.to_owned(),
            record,
        };
        let output = self.invoke(APPEND_LOG_RECORD_ONCE, encode("input", &input)?)?;
        output.decode(APPEND_LOG_RECORD_ONCE)
    }

    /// Invokes `rpc` with no options (it plans its own locks and loads from `input`),
    /// retrying lock conflicts by the client's policy.
    pub(super) fn invoke(&self, rpc: &str, input: Value) -> Result<RpcOutput> {
        let options = crate::options::RpcInvokeOptions::new();
        self.retry.run(|| {
            self.runtime
                .invoke_rpc_output(FLOW_TYPE, self.flow_id, rpc, input.clone(), &options)
        })
    }
}
