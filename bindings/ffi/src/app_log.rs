//! The app log (`ChunkedLogFlow`) client object: named logs of JSON records, paged newest
//! first, for apps that need no flow type of their own. Its records, start, appends and
//! paging; retention and reads forward in `retention.rs`, the follow cursor in `follow.rs`,
//! proofs in `verifiable.rs`.

use attrflow::flows::app_log as core;
use attrflow::flows::app_log::AppLog as CoreAppLog;
use serde_json::Value;

use crate::client_target::Target;
use crate::error::Result;

/// One record of a log.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LogEntry {
    /// Its place in the log, from 1, dense.
    pub sequence: u64,
    /// The record as JSON text.
    pub record_json: String,
}

/// One page of a log, newest entry first.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LogPage {
    /// The log read.
    pub log: String,
    /// The token read (`current` for `""`).
    pub page_token: String,
    /// The chunk's entries, newest first.
    pub entries: Vec<LogEntry>,
    /// The next older page's token, `""` on the oldest page.
    pub next_page_token: String,
}

impl From<core::LogEntry> for LogEntry {
    fn from(entry: core::LogEntry) -> Self {
        LogEntry {
            sequence: entry.sequence,
            record_json: entry.record.to_string(),
        }
    }
}

impl From<core::LogPage> for LogPage {
    fn from(page: core::LogPage) -> Self {
        LogPage {
            log: page.log,
            page_token: page.page_token,
            entries: page.entries.into_iter().map(Into::into).collect(),
            next_page_token: page.next_page_token,
        }
    }
}

/// One app log (`ChunkedLogFlow`) of a store, `store.appLog(flowId)`: named logs of JSON
/// records; every call retries lock conflicts by the policy the app log was made with.
#[derive(Debug, uniffi::Object)]
pub struct AppLog(pub(crate) Target);

impl AppLog {
    /// The core's client of this app log, with its policy.
    pub(crate) fn core(&self) -> CoreAppLog<'_> {
        CoreAppLog::new(&self.0.store.runtime, &self.0.flow_id).with_retry_policy(self.0.retry)
    }
}

#[uniffi::export]
impl AppLog {
    /// Starts the app log, or returns the running one's run ID.
    pub fn start(&self) -> Result<String> {
        Ok(self.core().start()?)
    }

    /// Appends the JSON record `record_json` to `log` (`AppendLogRecord`); appends to
    /// different logs do not conflict.
    pub fn append(&self, log: String, record_json: String) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        Ok(self.core().append(&log, record)?.into())
    }

    /// Appends 1 to 1000 JSON records to `log` in one transaction (`AppendLogRecords`) and
    /// returns their entries, oldest first; one bad record fails the batch and stores
    /// nothing. With `idempotency_key`, a retry of the same batch returns the first call's
    /// entries.
    #[uniffi::method(default(idempotency_key = None))]
    pub fn append_batch(
        &self,
        log: String,
        records_json: Vec<String>,
        idempotency_key: Option<String>,
    ) -> Result<Vec<LogEntry>> {
        let records = parse_records(&log, &records_json)?;
        let entries = self
            .core()
            .append_batch(&log, records, idempotency_key.as_deref())?;
        Ok(entries.into_iter().map(Into::into).collect())
    }

    /// Appends the JSON record `record_json` to `log` under `idempotency_key`
    /// (`AppendLogRecordOnce`): a retry with the same key and record, from this or any
    /// other `Store` on the same file, returns the first call's entry and appends nothing.
    /// Keys are per log.
    pub fn append_once(
        &self,
        log: String,
        idempotency_key: String,
        record_json: String,
    ) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        let entry = self.core().append_once(&log, &idempotency_key, record)?;
        Ok(entry.into())
    }

    /// Reads one page of `log`: `""` or `current` for the newest, else the previous page's
    /// `nextPageToken`.
    pub fn page(&self, log: String, page_token: String) -> Result<LogPage> {
        Ok(self.core().page(&log, &page_token)?.into())
    }
}

/// Parses one record of `log`; `index` names it in a batch's errors.
fn parse_record(log: &str, json: &str, index: Option<usize>) -> Result<Value> {
    let which = index.map(|i| format!("records[{i}]: ")).unwrap_or_default();
    attrflow::json::parse(json, || format!("{which}record of log {log:?}")).map_err(Into::into)
}

/// Parses a batch of records of `log`, naming a bad one by its index.
fn parse_records(log: &str, records_json: &[String]) -> Result<Vec<Value>> {
    records_json
        .iter()
        .enumerate()
        .map(|(index, json)| parse_record(log, json, Some(index)))
        .collect()
}
