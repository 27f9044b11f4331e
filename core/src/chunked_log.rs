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
//! record first, each naming the token of the next older page; an RPC can pass a page's
//! stored records on as their text ([`ChunkedLog::page_output`]), as the built-in flows do.
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
//! - **Retention** ([`retention`], [`ChunkedLog::trim`]): drops whole archived chunks,
//!   oldest first, leaving the rest byte for byte; a dropped chunk's token is
//!   [`Error::PageTrimmed`]. A log's [`Retention`] applies the same rule on every append.
//! - **Reading forward** ([`read_from`], [`ChunkedLog::read_from`]): records oldest first
//!   from a sequence, across chunks and layouts; a [tail] waits for records after a
//!   sequence, waking on its runtime's commits.
//! - **Named logs** ([`ChunkedLog::named`]): many logs in one flow, each with its state in
//!   an instance of a state map (`<state map>/<name>`, absent until the first append) and
//!   its chunks under `<chunk map>/<name>.<instance>` (`<name>.current`, `<name>.<token>`,
//!   `<name>.idempotency-keys`). Their locks and loads are per call, not per RPC
//!   ([`ChunkedLog::append_options`]).

mod append;
mod chunk_text;
pub mod idempotency;
pub mod layout;
mod paging;
pub mod read_from;
pub mod retention;
mod retention_setting;
mod state;
pub mod tail;
pub mod token;
pub mod tree;
pub mod verify;
pub mod verify_tree;

pub use append::{validate_batch_size, MAX_BATCH_SIZE};
pub use idempotency::{
    validate_idempotency_key, IdempotencyWindow, IDEMPOTENCY_INSTANCE, MAX_IDEMPOTENCY_KEY_LEN,
    MAX_REMEMBERED_RECORDS, MAX_WINDOW_KEYS,
};
pub use layout::{
    validate_chunk_size, ChunkLayout, LayoutHistory, LEGACY_MAX_CHUNK_SIZE, MAX_CHUNK_SIZE,
    MAX_LAYOUTS,
};

pub use paging::Page;
pub use read_from::{
    limit_out_of_range, validate_read_limit, validate_read_start, ForwardPage, ReadFromInput,
    MAX_READ_RECORDS,
};
pub use retention::{Retention, RetentionChange, RetentionInput, Trim, TrimInput, TrimOutcome};
pub use state::LogState;
pub use tail::{
    after_out_of_range, tail_start, timeout_out_of_range, validate_tail_timeout, wait_for_records,
    MAX_TAIL_TIMEOUT,
};
pub use token::{
    archive_token, normalize_page_token, PageToken, ARCHIVE_TOKEN_DIGITS, CURRENT_CHUNK,
};
pub use tree::{SwitchOnInput, SwitchOnOutcome};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::context::RpcContext;
use crate::definition::{FlowDefinitionBuilder, RpcDefinition};
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;

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

    /// The records of the chunk `key` (unscoped: `current` or a token), decoded as `R`
    /// straight from the stored text, in stored order; `None` when the chunk is absent.
    fn records_as<R: DeserializeOwned>(
        &self,
        ctx: &RpcContext<'_>,
        key: &str,
    ) -> Result<Option<Vec<R>>> {
        let key = self.chunk_key(key);
        let Some(json) = ctx.map_instance_json(self.chunk_map, &key)? else {
            return Ok(None);
        };
        let physical = format!("{}/{key}", self.chunk_map);
        match chunk_text::records_in::<R>(&json, self.records_field) {
            Ok(Some(records)) => Ok(Some(records)),
            Ok(None) => Err(Error::storage(format!(
                "stored chunk {physical:?} has no {:?} list",
                self.records_field
            ))),
            Err(e) => Err(Error::storage(format!(
                "stored chunk {physical:?} does not decode as a {:?} list of {}: {e}",
                self.records_field,
                std::any::type_name::<R>()
            ))),
        }
    }

    /// The records of the stored chunk `json` (the chunk `physical`), each borrowed as its
    /// JSON text.
    fn raw_records<'j>(&self, json: &'j str, physical: &str) -> Result<Vec<&'j RawValue>> {
        chunk_text::records_in(json, self.records_field)
            .map_err(|e| e.to_string())
            .and_then(|records| records.ok_or_else(|| "no such field".to_owned()))
            .map_err(|detail| {
                Error::storage(format!(
                    "stored chunk {physical:?} has no {:?} list: {detail}",
                    self.records_field
                ))
            })
    }

    fn chunk_value(&self, records: Vec<Value>) -> Value {
        let mut chunk = Map::with_capacity(1);
        chunk.insert(self.records_field.to_owned(), Value::Array(records));
        Value::Object(chunk)
    }
}
