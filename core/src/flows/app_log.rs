//! `ChunkedLogFlow`: many named, append-only logs of JSON records in one flow, each kept
//! by the rules of the sequentially chunked AttributeMap ([`crate::chunked_log`]).
//!
//! An app that keeps agent messages, an audit trail or any other insertion-ordered history
//! needs no flow type of its own: it starts one `ChunkedLogFlow` and appends records to
//! logs it names at will (`"audit"`, `"chat-42"`, …).
//!
//! Layout, for a log named `L`:
//! - `log_states/L` holds its [`LogState`] (absent until the first append);
//! - `log_chunks/L.current` holds its open chunk of at most [`LOG_CHUNK_SIZE`] entries;
//! - a full chunk moves, on the next append, to `log_chunks/L.<first sequence as 20
//!   digits>` and is never written again.
//!
//! Page tokens follow the same rules as every chunked log: `""` or `current`, else the
//! 20-digit first sequence of an archived chunk.
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
//! log.append_with_retry("audit", json!({"event": "login", "user": "ada"}), 10)?;
//! let entry = log.append_with_retry("audit", json!({"event": "logout", "user": "ada"}), 10)?;
//! assert_eq!(entry.sequence, 2);
//! let page = log.page("audit", "current")?;
//! assert_eq!(page.entries[0].record["event"], "logout");
//! assert_eq!(page.next_page_token, "");
//! # Ok::<(), attrflow::Error>(())
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chunked_log::{archive_token, ChunkedLog, LogState, PageToken};
use crate::context::RpcContext;
use crate::definition::{FlowDefinition, RpcDefinition};
use crate::error::{Error, Result};
use crate::options::{RpcInvokeOptions, StartFlowOptions};
use crate::runtime::Runtime;
use crate::typed::{decode_input, decode_stored, encode};

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
/// The longest log name, in bytes, so that every chunk key stays a valid instance key.
pub const MAX_LOG_NAME_BYTES: usize = 200;

/// The field of a stored chunk that lists its entries.
const ENTRIES_FIELD: &str = "entries";

/// The page-token rules, shared with every chunked log.
const TOKENS: ChunkedLog = ChunkedLog::new(
    LOG_STATES_MAP,
    LOG_CHUNKS_MAP,
    ENTRIES_FIELD,
    LOG_CHUNK_SIZE,
    "log",
);

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
    format!("{log}.{}", token.instance_key())
}

/// The flow type's definition.
pub fn definition() -> FlowDefinition {
    FlowDefinition::builder(FLOW_TYPE)
        .map(LOG_STATES_MAP)
        .map(LOG_CHUNKS_MAP)
        .rpc(RpcDefinition::new(APPEND_LOG_RECORD, append_log_record))
        .rpc(RpcDefinition::new(GET_LOG_PAGE, get_log_page))
        .build()
        .unwrap_or_else(|e| unreachable!("the built-in definition is valid: {e}"))
}

/// The per-call locks and loads an append to `log` needs: its state and open chunk.
pub fn append_options(log: &str) -> RpcInvokeOptions {
    let current = chunk_key(log, PageToken::Current);
    RpcInvokeOptions::new()
        .lock_attribute_map_instance(LOG_STATES_MAP, log)
        .lock_attribute_map_instance(LOG_CHUNKS_MAP, current.clone())
        .load_attribute_map_instance(LOG_STATES_MAP, log)
        .load_attribute_map_instance(LOG_CHUNKS_MAP, current)
}

/// The chunk instance key that holds `log`'s page `page_token`, after checking both.
///
/// ```
/// use attrflow::flows::app_log::page_chunk_key;
/// assert_eq!(page_chunk_key("audit", "").unwrap(), "audit.current");
/// assert!(page_chunk_key("audit", "7").is_err());
/// ```
pub fn page_chunk_key(log: &str, page_token: &str) -> Result<String> {
    validate_log_name(log)?;
    Ok(chunk_key(log, TOKENS.parse_token(page_token)?))
}

/// The per-call loads a read of `log`'s page `page_token` needs; checks both first.
pub fn page_options(log: &str, page_token: &str) -> Result<RpcInvokeOptions> {
    let key = page_chunk_key(log, page_token)?;
    Ok(RpcInvokeOptions::new()
        .load_attribute_map_instance(LOG_STATES_MAP, log)
        .load_attribute_map_instance(LOG_CHUNKS_MAP, key))
}

fn append_log_record(ctx: &mut RpcContext<'_>, input: Value) -> Result<Value> {
    let input: AppendLogRecordInput = decode_input(APPEND_LOG_RECORD, input)?;
    validate_log_name(&input.log)?;
    if input.record.is_null() {
        return Err(Error::invalid_input("record is required"));
    }
    let log = input.log.as_str();
    let mut state = log_state(ctx, log)?;
    let current_key = chunk_key(log, PageToken::Current);
    let mut current = entries(ctx, &current_key)?.unwrap_or_default();
    let sequence = state.next_sequence;
    if current.len() as u64 >= LOG_CHUNK_SIZE {
        let token = archive_token(sequence - current.len() as u64);
        let archived = chunk_value(std::mem::take(&mut current));
        ctx.set_map_instance(LOG_CHUNKS_MAP, &format!("{log}.{token}"), archived)?;
        state.latest_archived_chunk_token = token;
    }
    let entry = LogEntry {
        sequence,
        record: input.record,
    };
    current.push(encode("log entry", &entry)?);
    state.next_sequence = sequence
        .checked_add(1)
        .ok_or_else(|| Error::storage(format!("log {log:?} ran out of sequences")))?;
    ctx.set_map_instance(LOG_CHUNKS_MAP, &current_key, chunk_value(current))?;
    ctx.set_map_instance(LOG_STATES_MAP, log, encode("log state", &state)?)?;
    encode("log entry", &entry)
}

fn get_log_page(ctx: &mut RpcContext<'_>, input: Value) -> Result<Value> {
    let input: GetLogPageInput = decode_input(GET_LOG_PAGE, input)?;
    validate_log_name(&input.log)?;
    let log = input.log;
    let token = TOKENS.parse_token(&input.page_token)?;
    let key = chunk_key(&log, token);
    let stored = match (token, entries(ctx, &key)?) {
        (_, Some(stored)) => stored,
        (PageToken::Current, None) => Vec::new(),
        (PageToken::Archive(_), None) => {
            return Err(Error::PageNotFound(format!(
                "log {log:?} page {:?} not found",
                input.page_token
            )))
        }
    };
    let next_page_token = match token {
        _ if stored.is_empty() => String::new(),
        PageToken::Current => log_state(ctx, &log)?.latest_archived_chunk_token,
        PageToken::Archive(first) if first > LOG_CHUNK_SIZE => {
            archive_token(first - LOG_CHUNK_SIZE)
        }
        PageToken::Archive(_) => String::new(),
    };
    let physical = format!("{LOG_CHUNKS_MAP}/{key}");
    let entries = stored
        .iter()
        .rev()
        .map(|entry| decode_stored(&physical, entry))
        .collect::<Result<Vec<LogEntry>>>()?;
    encode(
        "log page",
        &LogPage {
            log,
            page_token: token.instance_key(),
            entries,
            next_page_token,
        },
    )
}

fn log_state(ctx: &RpcContext<'_>, log: &str) -> Result<LogState> {
    match ctx.map_instance(LOG_STATES_MAP, log)? {
        Some(value) => decode_stored(&format!("{LOG_STATES_MAP}/{log}"), value),
        None => Ok(LogState::default()),
    }
}

fn entries(ctx: &RpcContext<'_>, key: &str) -> Result<Option<Vec<Value>>> {
    let Some(chunk) = ctx.map_instance(LOG_CHUNKS_MAP, key)? else {
        return Ok(None);
    };
    match chunk.get(ENTRIES_FIELD) {
        Some(Value::Array(entries)) => Ok(Some(entries.clone())),
        _ => Err(Error::storage(format!(
            "stored chunk \"{LOG_CHUNKS_MAP}/{key}\" has no {ENTRIES_FIELD:?} list"
        ))),
    }
}

fn chunk_value(entries: Vec<Value>) -> Value {
    let mut chunk = Map::with_capacity(1);
    chunk.insert(ENTRIES_FIELD.to_owned(), Value::Array(entries));
    Value::Object(chunk)
}

/// Typed access to the logs of one `ChunkedLogFlow` for Rust callers.
#[derive(Debug, Clone, Copy)]
pub struct AppLog<'r> {
    runtime: &'r Runtime,
    flow_id: &'r str,
}

impl<'r> AppLog<'r> {
    /// The logs of the flow `flow_id`.
    pub fn new(runtime: &'r Runtime, flow_id: &'r str) -> Self {
        AppLog { runtime, flow_id }
    }

    /// Starts the flow, or returns the running one's run ID (idempotent).
    pub fn start(&self) -> Result<String> {
        self.runtime.start_flow(
            FLOW_TYPE,
            self.flow_id,
            &StartFlowOptions::new().ignore_already_started(true),
        )
    }

    /// Appends `record` to `log` once. A concurrent append to the same log gives a
    /// retryable [`Error::LockConflict`]; see [`AppLog::append_with_retry`]. Appends to
    /// different logs do not conflict.
    pub fn append(&self, log: &str, record: Value) -> Result<LogEntry> {
        validate_log_name(log)?;
        let input = AppendLogRecordInput {
            log: log.to_owned(),
            record,
        };
        let output = self.runtime.invoke_rpc(
            FLOW_TYPE,
            self.flow_id,
            APPEND_LOG_RECORD,
            encode("input", &input)?,
            &append_options(log),
        )?;
        decode_stored("AppendLogRecord output", &output)
    }

    /// Appends `record` to `log`, retrying lock conflicts up to `attempts` times with a
    /// short, growing, jittered pause.
    pub fn append_with_retry(&self, log: &str, record: Value, attempts: u32) -> Result<LogEntry> {
        crate::retry::retry_on_conflict(attempts, || self.append(log, record.clone()))
    }

    /// Reads one page of `log`, loading the token's chunk.
    pub fn page(&self, log: &str, page_token: &str) -> Result<LogPage> {
        let options = page_options(log, page_token)?;
        let input = GetLogPageInput {
            log: log.to_owned(),
            page_token: page_token.to_owned(),
        };
        let output = self.runtime.invoke_rpc(
            FLOW_TYPE,
            self.flow_id,
            GET_LOG_PAGE,
            encode("input", &input)?,
            &options,
        )?;
        decode_stored("GetLogPage output", &output)
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
