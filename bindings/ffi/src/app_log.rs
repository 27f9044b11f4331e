//! The app log (`ChunkedLogFlow`) on [`Store`]: named logs of JSON records, paged newest
//! first, for apps that need no flow type of their own.

use attrflow::flows::app_log as core;
use attrflow::flows::app_log::AppLog;
use serde_json::Value;

use crate::error::Result;
use crate::store::Store;

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

#[uniffi::export]
impl Store {
    /// Starts the app-log flow `flow_id`, or returns the running one's run ID.
    pub fn start_app_log(&self, flow_id: String) -> Result<String> {
        Ok(AppLog::new(&self.runtime, &flow_id).start()?)
    }

    /// Appends the JSON record `record_json` to the log `log` of flow `flow_id` once; a
    /// concurrent append to the same log fails with `LockConflict`, to be retried.
    pub fn append_log_record(
        &self,
        flow_id: String,
        log: String,
        record_json: String,
    ) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        Ok(AppLog::new(&self.runtime, &flow_id)
            .append(&log, record)?
            .into())
    }

    /// Appends 1 to 1000 JSON records to the log `log` in one transaction
    /// (`AppendLogRecords`) and returns their entries, oldest first; one bad record fails
    /// the batch and stores nothing. With `idempotency_key`, a retry of the same batch
    /// returns the first call's entries.
    #[uniffi::method(default(idempotency_key = None))]
    pub fn append_log_records(
        &self,
        flow_id: String,
        log: String,
        records_json: Vec<String>,
        idempotency_key: Option<String>,
    ) -> Result<Vec<LogEntry>> {
        let records = parse_records(&log, &records_json)?;
        let entries = AppLog::new(&self.runtime, &flow_id).append_batch(
            &log,
            records,
            idempotency_key.as_deref(),
        )?;
        Ok(entries.into_iter().map(Into::into).collect())
    }

    /// Appends the JSON record `record_json` to the log `log` under `idempotency_key`
    /// (`AppendLogRecordOnce`): a retry with the same key and record, from this or any
    /// other `Store` on the same file, returns the first call's entry and appends nothing.
    /// Keys are per log.
    pub fn append_log_record_once(
        &self,
        flow_id: String,
        log: String,
        idempotency_key: String,
        record_json: String,
    ) -> Result<LogEntry> {
        let record = parse_record(&log, &record_json, None)?;
        Ok(AppLog::new(&self.runtime, &flow_id)
            .append_once(&log, &idempotency_key, record)?
            .into())
    }

    /// Reads one page of the log `log`: `""` or `current` for the newest, else the
    /// previous page's `next_page_token`.
    pub fn get_log_page(
        &self,
        flow_id: String,
        log: String,
        page_token: String,
    ) -> Result<LogPage> {
        Ok(AppLog::new(&self.runtime, &flow_id)
            .page(&log, &page_token)?
            .into())
    }
}

/// Parses one record of `log`; `index` names it in a batch's errors.
pub(crate) fn parse_record(log: &str, json: &str, index: Option<usize>) -> Result<Value> {
    let which = index.map(|i| format!("records[{i}]: ")).unwrap_or_default();
    attrflow::json::parse(json, || format!("{which}record of log {log:?}")).map_err(Into::into)
}

/// Parses a batch of records of `log`, naming a bad one by its index.
pub(crate) fn parse_records(log: &str, records_json: &[String]) -> Result<Vec<Value>> {
    records_json
        .iter()
        .enumerate()
        .map(|(index, json)| parse_record(log, json, Some(index)))
        .collect()
}
