//! `ChunkedLogFlow`: many named, append-only logs of JSON records in one flow, each kept
//! by the rules of the sequentially chunked AttributeMap ([`crate::chunked_log`]).
//!
//! An app that keeps agent messages, an audit trail or any other insertion-ordered history
//! needs no flow type of its own: it starts one `ChunkedLogFlow` and appends records to
//! logs it names at will (`"audit"`, `"chat-42"`, …).
//!
//! Layout, for a log named `L`:
//! - `log_states/L` holds its [`LogState`](crate::chunked_log::LogState) (absent until the first append);
//! - `log_chunks/L.current` holds its open chunk of at most [`LOG_CHUNK_SIZE`] entries;
//! - a full chunk moves, on the next append, to `log_chunks/L.<first sequence as 20
//!   digits>` and is never written again;
//! - `log_chunks/L.idempotency-keys` remembers keyed appends (`AppendLogRecordOnce`, and
//!   `AppendLogRecords` with a key), as for every chunked log ([`crate::chunked_log`]).
//!
//! Each log is a [`ChunkedLog::named`] log, so it appends, batches and pages exactly as
//! the subscriber archive does; only its locks and loads are per call, planned by each
//! RPC from its input (`plans`), so callers pass no options.
//!
//! Page tokens follow the same rules as every chunked log: `""` or `current`, else the
//! 20-digit first sequence of an archived chunk. `TrimLog` drops a log's oldest archived
//! chunks and `ReadLogFrom` reads it forward from a sequence, as for every chunked log.
//! `ChangeLogChunkSize` changes one log's chunk size, and with it the largest record the
//! log takes ([`crate::limits::record_limit`]): 10 474 bytes at the default 100.
//!
//! ```
//! use attrflow::flows::app_log::AppLog;
//! use attrflow::Runtime;
//! use serde_json::json;
//! # let dir = tempfile::tempdir().unwrap();
//! # let store = dir.path().join("app.db");
//! let runtime = Runtime::open(store.to_str().unwrap())?;
//! let log = AppLog::new(&runtime, "my-app");
//! log.start()?;
//! log.append("audit", json!({"event": "login", "user": "ada"}))?;
//! let entry = log.append("audit", json!({"event": "logout", "user": "ada"}))?;
//! assert_eq!(entry.sequence, 2);
//! let page = log.page("audit", "current")?;
//! assert_eq!(page.entries[0].record["event"], "logout");
//! assert_eq!(page.next_page_token, "");
//! # Ok::<(), attrflow::Error>(())
//! ```

mod appends;
mod layout;
mod plans;
mod retention;
mod verifiable;

pub use appends::{AppendLogRecordOnceInput, AppendLogRecordsInput, AppendedLogEntries};
pub use layout::{ChangeLogChunkSizeInput, LogChunkSizeChange, ENTRY_OVERHEAD_BYTES};
pub use retention::{LogEntriesFrom, ReadLogFromInput, SetLogRetentionInput, TrimLogInput};
pub use verifiable::MakeLogVerifiableInput;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::chunked_log::{ChunkedLog, PageToken};
use crate::context::RpcContext;
use crate::definition::{FlowDefinition, RpcDefinition};
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::output::RpcOutput;
use crate::retry::RetryPolicy;
use crate::runtime::{ReadRpc, Runtime};
use crate::typed::{decode_input, encode};

/// The flow type.
pub const FLOW_TYPE: &str = "ChunkedLogFlow";
/// Entries per chunk. Part of the stored layout.
pub const LOG_CHUNK_SIZE: u64 = 100;
/// The AttributeMap of log states, one instance a log.
pub const LOG_STATES_MAP: &str = "log_states";
/// The AttributeMap of chunks, instances `<log>.current` and `<log>.<archive token>`.
pub const LOG_CHUNKS_MAP: &str = "log_chunks";
/// The appending RPC.
pub const APPEND_LOG_RECORD: &str = "AppendLogRecord";
/// The paging RPC.
pub const GET_LOG_PAGE: &str = "GetLogPage";
/// The batch-appending RPC (optionally idempotent).
pub const APPEND_LOG_RECORDS: &str = "AppendLogRecords";
/// The idempotent appending RPC.
pub const APPEND_LOG_RECORD_ONCE: &str = "AppendLogRecordOnce";
/// The RPC that drops a log's oldest archived chunks.
pub const TRIM_LOG: &str = "TrimLog";
/// The RPC that reads a log forward from a sequence.
pub const READ_LOG_FROM: &str = "ReadLogFrom";
/// The RPC that sets the retention every append to a log applies.
pub const SET_LOG_RETENTION: &str = "SetLogRetention";
/// The RPC that switches a log's Merkle tree on, one bounded step a call.
pub const MAKE_LOG_VERIFIABLE: &str = "MakeLogVerifiable";
/// The RPC that changes one log's chunk size, and so the largest record it takes.
pub const CHANGE_LOG_CHUNK_SIZE: &str = "ChangeLogChunkSize";
pub use crate::limits::MAX_LOG_NAME_BYTES;

/// The field of a stored chunk that lists its entries.
const ENTRIES_FIELD: &str = "entries";

/// One record of a log, with its place in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// Its place in the log, from 1, dense.
    pub sequence: u64,
    /// The record as the app gave it.
    pub record: Value,
}

/// Input of `AppendLogRecord`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppendLogRecordInput {
    /// The log's name; required.
    pub log: String,
    /// The record to append: any JSON value but `null`.
    pub record: Value,
}

/// Input of `GetLogPage`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GetLogPageInput {
    /// The log's name; required.
    pub log: String,
    /// `""` or `current` for the open chunk, else a 20-digit archive token.
    pub page_token: String,
}

/// One page of a log, newest entry first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogPage {
    /// The log read.
    pub log: String,
    /// The token read (`current` for `""`).
    pub page_token: String,
    /// The chunk's entries, newest first.
    pub entries: Vec<LogEntry>,
    /// The next older page's token, `""` when none.
    pub next_page_token: String,
}

/// Checks a log name: not blank, at most [`MAX_LOG_NAME_BYTES`] bytes, no `/` and no
/// control characters.
pub fn validate_log_name(log: &str) -> Result<()> {
    if log.trim().is_empty() {
        return Err(Error::invalid_input("log name must not be blank"));
    }
    if log.len() > MAX_LOG_NAME_BYTES {
        return Err(Error::invalid_input(format!(
            "log name is {} bytes long; the limit is {MAX_LOG_NAME_BYTES}",
            log.len()
        )));
    }
    if log.contains('/') || log.chars().any(char::is_control) {
        return Err(Error::invalid_input(format!(
            "log name {log:?} must not contain '/' or control characters"
        )));
    }
    Ok(())
}

/// The chunk instance key of a log's page: `<log>.<token>`.
pub fn chunk_key(log: &str, token: PageToken) -> String {
    named_log(log).chunk_key(&token.instance_key())
}

/// Refuses initial values that would leave one of the named logs broken: every log that
/// has a state or a chunk among them is checked as `attrflow verify` checks a stored one.
fn check_start(values: &BTreeMap<String, Value>) -> Result<()> {
    let states = format!("{LOG_STATES_MAP}/");
    let chunks = format!("{LOG_CHUNKS_MAP}/");
    let logs: BTreeSet<&str> = values
        .keys()
        .filter_map(|name| {
            name.strip_prefix(&states).or_else(|| {
                name.strip_prefix(&chunks)
                    .and_then(|key| key.rsplit_once('.'))
                    .map(|(log, _)| log)
            })
        })
        .collect();
    logs.into_iter()
        .try_for_each(|log| named_log(log).check_start(values))
}

/// The flow type's definition.
pub fn definition() -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .map(LOG_STATES_MAP)
        .map(LOG_CHUNKS_MAP)
        .check_start(check_start)
        .written_by_rpcs_only()
        .rpc(
            RpcDefinition::new_with_output(APPEND_LOG_RECORD, append_log_record)
                .planned_by(plans::APPEND),
        )
        .rpc(
            RpcDefinition::new_with_output(GET_LOG_PAGE, get_log_page)
                .read_only()
                .planned_by(plans::PAGE),
        )
        .rpc(
            RpcDefinition::new_with_output(APPEND_LOG_RECORDS, appends::append_log_records)
                .planned_by(plans::APPEND_BATCH),
        )
        .rpc(
            RpcDefinition::new_with_output(APPEND_LOG_RECORD_ONCE, appends::append_log_record_once)
                .planned_by(plans::APPEND_ONCE),
        )
        .rpc(
            RpcDefinition::new_with_output(TRIM_LOG, retention::trim_log).planned_by(plans::APPEND),
        )
        .rpc(
            RpcDefinition::new_with_output(READ_LOG_FROM, retention::read_log_from)
                .read_only()
                .planned_by(plans::READ_FROM),
        )
        .rpc(
            RpcDefinition::new_with_output(SET_LOG_RETENTION, retention::set_log_retention)
                .planned_by(plans::APPEND),
        )
        .rpc(
            RpcDefinition::new_with_output(MAKE_LOG_VERIFIABLE, verifiable::make_log_verifiable)
                .planned_by(plans::APPEND),
        )
        .rpc(
            RpcDefinition::new_with_output(CHANGE_LOG_CHUNK_SIZE, layout::change_log_chunk_size)
                .planned_by(plans::APPEND),
        )
        .build()
        .unwrap_or_else(|e| unreachable!("the built-in definition is valid: {e}"))
}

/// The per-call locks and loads an append to `log` needs: its state and open chunk.
pub fn append_options(log: &str) -> RpcInvokeOptions {
    named_log(log).append_options(false)
}

/// The per-call locks and loads a keyed append to `log` needs: [`append_options`] plus
/// the log's remembered idempotency keys (`log_chunks/<log>.idempotency-keys`).
pub fn idempotent_append_options(log: &str) -> RpcInvokeOptions {
    named_log(log).append_options(true)
}

/// The chunk instance key that holds `log`'s page `page_token`, after checking the log
/// name and the token's form (the page RPC checks the chunk boundary).
///
/// ```
/// use attrflow::flows::app_log::page_chunk_key;
/// assert_eq!(page_chunk_key("audit", "").unwrap(), "audit.current");
/// assert!(page_chunk_key("audit", "7").is_err());
/// ```
pub fn page_chunk_key(log: &str, page_token: &str) -> Result<String> {
    validate_log_name(log)?;
    Ok(chunk_key(log, PageToken::parse(page_token)?))
}

/// The per-call loads a read of `log`'s page `page_token` needs; checks both first.
pub fn page_options(log: &str, page_token: &str) -> Result<RpcInvokeOptions> {
    validate_log_name(log)?;
    named_log(log).page_options(page_token)
}

/// The chunked log `log` of the flow: state `log_states/<log>`, chunks `log_chunks/<log>.…`.
pub fn named_log(log: &str) -> ChunkedLog {
    ChunkedLog::named(
        LOG_STATES_MAP,
        LOG_CHUNKS_MAP,
        ENTRIES_FIELD,
        LOG_CHUNK_SIZE,
        "log",
        log,
    )
}

/// Checks one record: any JSON value but `null`; `index` names it in a batch's errors.
fn log_entry(sequence: u64, record: Value, index: Option<usize>) -> Result<LogEntry> {
    if record.is_null() {
        return Err(Error::invalid_input(match index {
            Some(index) => format!("records[{index}]: record is required"),
            None => "record is required".to_owned(),
        }));
    }
    Ok(LogEntry { sequence, record })
}

fn append_log_record(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: AppendLogRecordInput = decode_input(APPEND_LOG_RECORD, input)?;
    validate_log_name(&input.log)?;
    let record = input.record;
    let entry = named_log(&input.log).append(ctx, |sequence| log_entry(sequence, record, None))?;
    RpcOutput::encode("log entry", &entry)
}

fn get_log_page(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: GetLogPageInput = decode_input(GET_LOG_PAGE, input)?;
    validate_log_name(&input.log)?;
    // The stored entries are passed on as their text: `LogPage`'s form.
    named_log(&input.log).page_output(ctx, &input.page_token, |page| {
        RpcOutput::encode(
            "log page",
            &LogPageText {
                log: &input.log,
                page_token: page.page_token,
                entries: page.records,
                next_page_token: page.next_page_token,
            },
        )
    })
}

/// A [`LogPage`] as `GetLogPage` writes it, each entry its stored text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogPageText<'a> {
    log: &'a str,
    page_token: String,
    entries: Vec<&'a RawValue>,
    next_page_token: String,
}

/// Typed access to the logs of one app log (flow type `ChunkedLogFlow`): builds each
/// call's input and per-call locks and loads, checks tokens, and retries lock conflicts by
/// its [`RetryPolicy`].
#[derive(Debug, Clone, Copy)]
pub struct AppLog<'r> {
    runtime: &'r Runtime,
    flow_id: &'r str,
    retry: RetryPolicy,
}

impl<'r> AppLog<'r> {
    /// The logs of the flow `flow_id`, retrying by [`RetryPolicy::DEFAULT`].
    pub fn new(runtime: &'r Runtime, flow_id: &'r str) -> Self {
        AppLog {
            runtime,
            flow_id,
            retry: RetryPolicy::DEFAULT,
        }
    }

    /// This client retrying lock conflicts by `policy` in every call
    /// ([`RetryPolicy::NONE`]: each RPC is called once).
    pub fn with_retry_policy(self, policy: RetryPolicy) -> Self {
        AppLog {
            retry: policy,
            ..self
        }
    }

    /// Runs `call` on this client, retrying lock conflicts by its policy.
    pub fn retrying<T>(&self, mut call: impl FnMut(&Self) -> Result<T>) -> Result<T> {
        self.retry.run(|| call(self))
    }

    /// Starts the flow, or returns the running one's run ID (idempotent). A stopped
    /// one is not started again (a new run would hold none of its values): that fails with
    /// [`Error::FlowNotActive`] saying how it was stopped.
    pub fn start(&self) -> Result<String> {
        super::ensure_started(self.runtime, FLOW_TYPE, self.flow_id)
    }

    /// Appends `record` to `log`. A concurrent append to the same log gives a retryable
    /// [`Error::LockConflict`], retried by the client's [`RetryPolicy`]. Appends to
    /// different logs do not conflict.
    pub fn append(&self, log: &str, record: Value) -> Result<LogEntry> {
        validate_log_name(log)?;
        let input = AppendLogRecordInput {
            log: log.to_owned(),
            record,
        };
        let output = self.invoke(APPEND_LOG_RECORD, encode("input", &input)?)?;
        output.decode(APPEND_LOG_RECORD)
    }

    /// Appends `record` to `log`, as [`AppLog::append`] does (which retries by the
    /// client's [`RetryPolicy`] too).
    #[deprecated(note = "`append` retries by the client's retry policy; call it")]
    pub fn append_with_retry(&self, log: &str, record: Value) -> Result<LogEntry> {
        self.append(log, record)
    }

    /// Reads one page of `log`, loading the token's chunk.
    pub fn page(&self, log: &str, page_token: &str) -> Result<LogPage> {
        self.read_page(log, page_token, None, Runtime::invoke_rpc_output)
    }

    /// Reads one page as [`AppLog::page`] does, whatever the flow's run state, a stopped
    /// flow included, through [`Runtime::inspect_rpc_output`]: for tools that read a log
    /// its RPCs no longer serve. Given `run_id`, the page is read only from that run
    /// ([`Error::RunNotCurrent`] once the flow was started again), so a walk pinned to its
    /// first page's run never mixes two runs' pages.
    pub fn inspect_page(
        &self,
        log: &str,
        page_token: &str,
        run_id: Option<&str>,
    ) -> Result<LogPage> {
        self.read_page(log, page_token, run_id, Runtime::inspect_rpc_output)
    }

    fn read_page(
        &self,
        log: &str,
        page_token: &str,
        run_id: Option<&str>,
        read: ReadRpc,
    ) -> Result<LogPage> {
        let options = RpcInvokeOptions {
            run_id: run_id.map(str::to_owned),
            ..RpcInvokeOptions::new()
        };
        let input = GetLogPageInput {
            log: log.to_owned(),
            page_token: page_token.to_owned(),
        };
        let input = encode("input", &input)?;
        let output = self.retry.run(|| {
            read(
                self.runtime,
                FLOW_TYPE,
                self.flow_id,
                GET_LOG_PAGE,
                input.clone(),
                &options,
            )
        })?;
        output.decode(GET_LOG_PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_checked() {
        assert!(validate_log_name("audit").is_ok());
        assert!(validate_log_name("chat.42").is_ok());
        for bad in ["", " ", "a/b", "a\nb"] {
            assert!(
                matches!(validate_log_name(bad), Err(Error::InvalidInput(_))),
                "{bad:?}"
            );
        }
        let long = "l".repeat(MAX_LOG_NAME_BYTES + 1);
        assert!(validate_log_name(&long).is_err());
    }

    #[test]
    fn chunk_keys_put_the_token_after_the_log() {
        assert_eq!(chunk_key("audit", PageToken::Current), "audit.current");
        assert_eq!(
            chunk_key("audit", PageToken::Archive(101)),
            "audit.00000000000000000101"
        );
    }

    #[test]
    fn page_options_reject_bad_tokens_before_any_call() {
        assert_eq!(
            page_options("audit", "7").unwrap_err(),
            Error::InvalidPageToken { token: "7".into() }
        );
    }
}
