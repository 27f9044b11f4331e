//! The sequentially chunked AttributeMap: an append-only, insertion-ordered log kept as one
//! mutable `current` chunk plus immutable archived chunks.
//!
//! Layout, for a log with state Attribute `S`, chunk map `M` and chunk size `N`:
//! - `S` holds [`LogState`]: the next sequence (starting at 1) and the token of the newest
//!   archived chunk (`""` before the first archive);
//! - `M/current` holds the open chunk, at most `N` records, as `{"<field>": [records…]}`;
//! - a full chunk moves, on the next append, to `M/<first sequence as 20 digits>` and is
//!   never written again.
//!
//! An append rewrites only `current` and `S` (plus, once every `N` appends, the new
//! archive), so its cost does not grow with the history. Pages are whole chunks, newest
//! record first, each naming the token of the next older page.
//!
//! Beyond that seed layout:
//! - **Chunk-size migration** ([`layout`]): `S` may store a layout history (from which
//!   sequence which chunk size applies). [`ChunkedLog::change_chunk_size`] adds a layout
//!   from the next chunk boundary (at once on an empty log); every archive token stays
//!   valid and names the same chunk, next-page tokens walk across layouts without gaps or
//!   overlaps, and token validation accepts exactly the boundaries of every layout. A state
//!   with no stored history (any store written before) reads as the single layout of
//!   `N` = the [`ChunkedLog`]'s chunk size, so that constant must never change for an
//!   existing log: change the size through the history instead.
//! - **Batch append** ([`ChunkedLog::append_batch`]): up to [`MAX_BATCH_SIZE`] records in
//!   one transaction, filling and archiving as many chunks as they need.
//! - **Idempotent append** ([`idempotency`], [`ChunkedLog::append_once`]): a key per append,
//!   remembered in the same transaction within a bounded [`IdempotencyWindow`].
//! - **Named logs** ([`ChunkedLog::named`]): many logs in one flow, each with its state in
//!   an instance of a state map (`<state map>/<name>`, absent until the first append) and
//!   its chunks under `<chunk map>/<name>.<instance>` (`<name>.current`, `<name>.<token>`,
//!   `<name>.idempotency-keys`). Their locks and loads are per call, not per RPC
//!   ([`ChunkedLog::append_options`]).

mod append;
pub mod idempotency;
pub mod layout;

pub use append::{validate_batch_size, MAX_BATCH_SIZE};
pub use idempotency::{
    validate_idempotency_key, IdempotencyWindow, IDEMPOTENCY_INSTANCE, MAX_IDEMPOTENCY_KEY_LEN,
    MAX_REMEMBERED_RECORDS, MAX_WINDOW_KEYS,
};
pub use layout::{
    validate_chunk_size, ChunkLayout, LayoutHistory, LEGACY_MAX_CHUNK_SIZE, MAX_CHUNK_SIZE,
    MAX_LAYOUTS,
};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::RpcContext;
use crate::definition::{FlowDefinitionBuilder, RpcDefinition};
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::typed::{decode_stored, encode};

/// The instance key of the open chunk.
pub const CURRENT_CHUNK: &str = "current";

/// Number of digits in an archive token.
pub const ARCHIVE_TOKEN_DIGITS: usize = 20;

/// The log's bookkeeping, stored in its state Attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogState {
    /// The sequence the next appended record gets.
    pub next_sequence: u64,
    /// The token of the newest archived chunk, `""` before the first archive.
    #[serde(default)]
    pub latest_archived_chunk_token: String,
    /// The layout history, oldest first; empty (and not stored) while the log keeps its
    /// default chunk size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layouts: Vec<ChunkLayout>,
    /// The idempotency window, absent (and not stored) while it is the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_window: Option<IdempotencyWindow>,
}

impl Default for LogState {
    fn default() -> Self {
        LogState {
            next_sequence: 1,
            latest_archived_chunk_token: String::new(),
            layouts: Vec::new(),
            idempotency_window: None,
        }
    }
}

/// A validated page token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageToken {
    /// The open chunk (`""` or `current`).
    Current,
    /// The archived chunk whose first record has this sequence.
    Archive(u64),
}

impl PageToken {
    /// Checks a token's form only: `""` and `current` name the open chunk; anything else
    /// must be exactly 20 ASCII digits, not all zero. Whether it names a chunk boundary
    /// depends on the log's layout history; see [`ChunkedLog::parse_token_in`]. This is
    /// what a caller checks before it loads the token's instance.
    pub fn parse(token: &str) -> Result<PageToken> {
        if token.is_empty() || token == CURRENT_CHUNK {
            return Ok(PageToken::Current);
        }
        let invalid = || Error::InvalidPageToken {
            token: token.to_owned(),
        };
        if token.len() != ARCHIVE_TOKEN_DIGITS || !token.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        match token.parse::<u64>() {
            Ok(first) if first > 0 => Ok(PageToken::Archive(first)),
            _ => Err(invalid()),
        }
    }

    /// The map instance key holding this page.
    pub fn instance_key(self) -> String {
        match self {
            PageToken::Current => CURRENT_CHUNK.to_owned(),
            PageToken::Archive(first) => archive_token(first),
        }
    }
}

/// The token (and instance key) of the archived chunk starting at `first_sequence`: the
/// sequence zero-padded to 20 digits.
///
/// ```
/// assert_eq!(attrflow::chunked_log::archive_token(101), "00000000000000000101");
/// ```
pub fn archive_token(first_sequence: u64) -> String {
    format!("{first_sequence:0width$}", width = ARCHIVE_TOKEN_DIGITS)
}

/// One page: a chunk's records, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<R> {
    /// The token this page was read with (`current` for `""`).
    pub page_token: String,
    /// The chunk's records, newest first.
    pub records: Vec<R>,
    /// The token of the next older page, `""` when there is none.
    pub next_page_token: String,
}

/// A chunked log's layout: where it lives in a flow and how large its chunks are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedLog {
    state_attribute: &'static str,
    chunk_map: &'static str,
    records_field: &'static str,
    chunk_size: u64,
    page_noun: &'static str,
    /// `""` for a flow's one log (state in the Attribute `state_attribute`, chunks at
    /// their bare keys); else the name of a log whose state is the instance `name` of the
    /// map `state_attribute` and whose chunks are at `<name>.<key>`.
    name: String,
}

impl ChunkedLog {
    /// A log whose state lives in `state_attribute`, whose chunks live in `chunk_map` as
    /// `{"<records_field>": [...]}`, with at most `chunk_size` records a chunk.
    /// `page_noun` names pages in errors (`subscriber` gives `subscriber page "…" not
    /// found`).
    ///
    /// # Panics
    /// When `chunk_size` is 0 or over [`MAX_CHUNK_SIZE`]: a layout constant, not user
    /// input (in a `const` the check runs when the crate compiles).
    pub const fn new(
        state_attribute: &'static str,
        chunk_map: &'static str,
        records_field: &'static str,
        chunk_size: u64,
        page_noun: &'static str,
    ) -> Self {
        assert!(chunk_size > 0, "chunk size must be positive");
        assert!(
            chunk_size <= MAX_CHUNK_SIZE && crate::limits::chunk_fits(chunk_size),
            "a full chunk of the largest records must fit in one stored value"
        );
        ChunkedLog {
            state_attribute,
            chunk_map,
            records_field,
            chunk_size,
            page_noun,
            name: String::new(),
        }
    }

    /// The log `name` of a flow holding many: its state in the instance `name` of the map
    /// `state_map` (read as a fresh log until the first append), its chunks in `chunk_map`
    /// at `<name>.current`, `<name>.<token>` and `<name>.idempotency-keys`. Page-not-found
    /// errors read `<page_noun> "<name>" page "…" not found`. The caller checks `name`
    /// (an instance key) and passes [`ChunkedLog::append_options`] and
    /// [`ChunkedLog::page_options`] with each call.
    ///
    /// # Panics
    /// When `chunk_size` is 0 or over [`MAX_CHUNK_SIZE`]: a layout constant, not user input.
    pub fn named(
        state_map: &'static str,
        chunk_map: &'static str,
        records_field: &'static str,
        chunk_size: u64,
        page_noun: &'static str,
        name: impl Into<String>,
    ) -> Self {
        ChunkedLog {
            name: name.into(),
            ..ChunkedLog::new(state_map, chunk_map, records_field, chunk_size, page_noun)
        }
    }

    /// The chunk-map instance key of the chunk (or other instance) `key` of this log:
    /// `key` itself for a flow's one log, `<name>.<key>` for a named log.
    pub fn chunk_key(&self, key: &str) -> String {
        if self.name.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.name)
        }
    }

    /// The per-call locks and loads an append to a named log needs: its state and open
    /// chunk, and with `idempotent` its remembered keys too.
    pub fn append_options(&self, idempotent: bool) -> RpcInvokeOptions {
        let current = self.chunk_key(CURRENT_CHUNK);
        let mut options = RpcInvokeOptions::new()
            .lock_attribute_map_instance(self.state_attribute, self.name.clone())
            .lock_attribute_map_instance(self.chunk_map, current.clone())
            .load_attribute_map_instance(self.state_attribute, self.name.clone())
            .load_attribute_map_instance(self.chunk_map, current);
        if idempotent {
            let keys = self.chunk_key(IDEMPOTENCY_INSTANCE);
            options = options
                .lock_attribute_map_instance(self.chunk_map, keys.clone())
                .load_attribute_map_instance(self.chunk_map, keys);
        }
        options
    }

    /// The per-call loads a read of a named log's page `token` needs, after checking the
    /// token's form.
    pub fn page_options(&self, token: &str) -> Result<RpcInvokeOptions> {
        let key = self.chunk_key(&PageToken::parse(token)?.instance_key());
        Ok(RpcInvokeOptions::new()
            .load_attribute_map_instance(self.state_attribute, self.name.clone())
            .load_attribute_map_instance(self.chunk_map, key))
    }

    /// The largest number of records a chunk holds.
    pub fn chunk_size(&self) -> u64 {
        self.chunk_size
    }

    /// The state Attribute's name (for a [named](ChunkedLog::named) log, the state map's).
    pub fn state_attribute(&self) -> &'static str {
        self.state_attribute
    }

    /// The chunk map's name.
    pub fn chunk_map(&self) -> &'static str {
        self.chunk_map
    }

    /// Declares the log's Attribute and map on a flow definition, with the initial state
    /// and an empty `current` chunk as defaults, so a freshly started flow can be paged at
    /// once.
    pub fn declare(&self, builder: FlowDefinitionBuilder) -> FlowDefinitionBuilder {
        let state = serde_json::to_value(LogState::default()).unwrap_or(Value::Null);
        builder
            .attribute(self.state_attribute)
            .map(self.chunk_map)
            .default_value(self.state_attribute, state)
            .default_value(
                format!("{}/{CURRENT_CHUNK}", self.chunk_map),
                self.chunk_value(Vec::new()),
            )
    }

    /// The locks and load an appending RPC needs: the state and `current`, both locked,
    /// `current` loaded.
    pub fn appending(&self, rpc: RpcDefinition) -> RpcDefinition {
        rpc.lock_attribute(self.state_attribute)
            .lock_map_instance(self.chunk_map, CURRENT_CHUNK)
            .load_map_instance(self.chunk_map, CURRENT_CHUNK)
    }

    /// Checks a page token against the default layout (a log that never changed its chunk
    /// size): `""` and `current` name the open chunk; anything else must be exactly 20 ASCII
    /// digits naming a chunk boundary (1, 1 + size, 1 + 2·size, …).
    pub fn parse_token(&self, token: &str) -> Result<PageToken> {
        self.parse_token_in(&LayoutHistory::single(self.chunk_size), token)
    }

    /// Checks a page token against a layout history: like [`ChunkedLog::parse_token`], but
    /// an archive token must name a boundary of the layout its sequence falls in.
    pub fn parse_token_in(&self, history: &LayoutHistory, token: &str) -> Result<PageToken> {
        let parsed = PageToken::parse(token)?;
        match parsed {
            PageToken::Archive(first) if !history.is_boundary(first) => {
                Err(Error::InvalidPageToken {
                    token: token.to_owned(),
                })
            }
            _ => Ok(parsed),
        }
    }

    /// The log's layout history, read from its state.
    pub fn layout_history(&self, ctx: &RpcContext<'_>) -> Result<LayoutHistory> {
        self.layout_history_of(&self.state(ctx)?)
    }

    /// Moves the log to `chunk_size` records per chunk and returns the sequence it applies
    /// from: the next chunk boundary (the open chunk keeps the size it was opened with), or
    /// at once while the log is empty. A change whose boundary is not reached yet is
    /// replaced by a later one. Sizes outside 1 to [`MAX_CHUNK_SIZE`], and a change beyond
    /// [`MAX_LAYOUTS`] layouts, are [`Error::InvalidInput`]. The RPC needs
    /// [`ChunkedLog::appending`]'s locks and load.
    pub fn change_chunk_size(&self, ctx: &mut RpcContext<'_>, chunk_size: u64) -> Result<u64> {
        let mut open = self.open_chunk(ctx)?;
        let first = open.first_sequence();
        let from = open
            .history
            .change_chunk_size(first, open.current.len() as u64, chunk_size)?;
        open.state.layouts = open.history.to_stored(self.chunk_size);
        self.write_state(ctx, &open.state)?;
        Ok(from)
    }

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

    /// Reads the page `token` names, newest record first. The chunk must be loaded: the
    /// caller loads `token`'s instance (`current` for `""`) through RPC invoke options.
    pub fn page<R: DeserializeOwned>(&self, ctx: &RpcContext<'_>, token: &str) -> Result<Page<R>> {
        let state = self.state(ctx)?;
        let history = self.layout_history_of(&state)?;
        let parsed = self.parse_token_in(&history, token)?;
        let key = parsed.instance_key();
        let records = match (parsed, self.records(ctx, &key)?) {
            (_, Some(records)) => records,
            (PageToken::Current, None) => &[],
            (PageToken::Archive(_), None) if self.name.is_empty() => {
                return Err(Error::PageNotFound(format!(
                    "{} page {token:?} not found",
                    self.page_noun
                )))
            }
            (PageToken::Archive(_), None) => {
                return Err(Error::PageNotFound(format!(
                    "{} {:?} page {token:?} not found",
                    self.page_noun, self.name
                )))
            }
        };
        let next_page_token = match parsed {
            _ if records.is_empty() => String::new(),
            PageToken::Current => state.latest_archived_chunk_token,
            PageToken::Archive(first) => history
                .previous_boundary(first)
                .map(archive_token)
                .unwrap_or_default(),
        };
        let physical = format!("{}/{}", self.chunk_map, self.chunk_key(&key));
        let records = records
            .iter()
            .rev()
            .map(|record| decode_stored(&physical, record))
            .collect::<Result<Vec<R>>>()?;
        Ok(Page {
            page_token: key,
            records,
            next_page_token,
        })
    }

    fn layout_history_of(&self, state: &LogState) -> Result<LayoutHistory> {
        LayoutHistory::from_stored(&state.layouts, self.chunk_size)
    }

    fn state(&self, ctx: &RpcContext<'_>) -> Result<LogState> {
        if !self.name.is_empty() {
            return match ctx.map_instance(self.state_attribute, &self.name)? {
                Some(value) => {
                    decode_stored(&format!("{}/{}", self.state_attribute, self.name), value)
                }
                None => Ok(LogState::default()),
            };
        }
        let value = ctx.attribute(self.state_attribute)?.ok_or_else(|| {
            Error::storage(format!(
                "flow {:?} has no {} Attribute",
                ctx.flow_id(),
                self.state_attribute
            ))
        })?;
        decode_stored(self.state_attribute, value)
    }

    /// Stages the log's state.
    fn write_state(&self, ctx: &mut RpcContext<'_>, state: &LogState) -> Result<()> {
        let value = encode("log state", state)?;
        if self.name.is_empty() {
            ctx.set_attribute(self.state_attribute, value)
        } else {
            ctx.set_map_instance(self.state_attribute, &self.name, value)
        }
    }

    /// The raw records of the chunk `key` (unscoped: `current` or a token), borrowed; the
    /// records stay JSON so an append never decodes the whole chunk into typed values.
    fn records<'c>(&self, ctx: &'c RpcContext<'_>, key: &str) -> Result<Option<&'c [Value]>> {
        let key = self.chunk_key(key);
        let Some(chunk) = ctx.map_instance(self.chunk_map, &key)? else {
            return Ok(None);
        };
        let physical = format!("{}/{key}", self.chunk_map);
        match chunk.get(self.records_field) {
            Some(Value::Array(records)) => Ok(Some(records)),
            _ => Err(Error::storage(format!(
                "stored chunk {physical:?} has no {:?} list",
                self.records_field
            ))),
        }
    }

    fn chunk_value(&self, records: Vec<Value>) -> Value {
        let mut chunk = Map::with_capacity(1);
        chunk.insert(self.records_field.to_owned(), Value::Array(records));
        Value::Object(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: ChunkedLog = ChunkedLog::new("state", "chunks", "records", 100, "record");

    #[test]
    fn valid_tokens() {
        assert_eq!(LOG.parse_token("").unwrap(), PageToken::Current);
        assert_eq!(LOG.parse_token("current").unwrap(), PageToken::Current);
        assert_eq!(
            LOG.parse_token("00000000000000000001").unwrap(),
            PageToken::Archive(1)
        );
        assert_eq!(
            LOG.parse_token("00000000000000000101").unwrap(),
            PageToken::Archive(101)
        );
        assert_eq!(
            LOG.parse_token("18446744073709551601").unwrap(),
            PageToken::Archive(18_446_744_073_709_551_601)
        );
    }

    #[test]
    fn invalid_tokens_name_the_token() {
        for bad in [
            "1",
            "archive",
            "00000000000000000002",
            "00000000000000000000",
            "000000000000000000101",
            "0000000000000000010",
            "99999999999999999901",
            "0000000000000000010١",
            "+0000000000000000101",
            " 0000000000000000101",
            "Current",
        ] {
            assert_eq!(
                LOG.parse_token(bad).unwrap_err(),
                Error::InvalidPageToken { token: bad.into() },
                "{bad:?}"
            );
        }
        assert_eq!(
            LOG.parse_token("1").unwrap_err().to_string(),
            r#"invalid page token "1""#
        );
    }

    #[test]
    fn boundaries_follow_the_chunk_size() {
        let small = ChunkedLog::new("s", "m", "r", 3, "r");
        assert!(small.parse_token("00000000000000000004").is_ok());
        assert!(small.parse_token("00000000000000000003").is_err());
    }

    #[test]
    fn archive_tokens_are_twenty_digits() {
        assert_eq!(archive_token(1), "00000000000000000001");
        assert_eq!(archive_token(u64::MAX), "18446744073709551615");
    }
}
