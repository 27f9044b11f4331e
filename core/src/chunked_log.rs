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

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::RpcContext;
use crate::definition::{FlowDefinitionBuilder, RpcDefinition};
use crate::error::{Error, Result};
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
}

impl Default for LogState {
    fn default() -> Self {
        LogState {
            next_sequence: 1,
            latest_archived_chunk_token: String::new(),
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
}

impl ChunkedLog {
    /// A log whose state lives in `state_attribute`, whose chunks live in `chunk_map` as
    /// `{"<records_field>": [...]}`, with at most `chunk_size` records a chunk.
    /// `page_noun` names pages in errors (`subscriber` gives `subscriber page "…" not
    /// found`).
    ///
    /// # Panics
    /// When `chunk_size` is 0: a layout constant, not user input.
    pub const fn new(
        state_attribute: &'static str,
        chunk_map: &'static str,
        records_field: &'static str,
        chunk_size: u64,
        page_noun: &'static str,
    ) -> Self {
        assert!(chunk_size > 0, "chunk size must be positive");
        ChunkedLog {
            state_attribute,
            chunk_map,
            records_field,
            chunk_size,
            page_noun,
        }
    }

    /// The largest number of records a chunk holds.
    pub fn chunk_size(&self) -> u64 {
        self.chunk_size
    }

    /// The state Attribute's name.
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

    /// Checks a page token: `""` and `current` name the open chunk; anything else must be
    /// exactly 20 ASCII digits naming a chunk boundary (1, 1 + size, 1 + 2·size, …).
    pub fn parse_token(&self, token: &str) -> Result<PageToken> {
        if token.is_empty() || token == CURRENT_CHUNK {
            return Ok(PageToken::Current);
        }
        let invalid = || Error::InvalidPageToken {
            token: token.to_owned(),
        };
        if token.len() != ARCHIVE_TOKEN_DIGITS || !token.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let first: u64 = token.parse().map_err(|_| invalid())?;
        if first == 0 || (first - 1) % self.chunk_size != 0 {
            return Err(invalid());
        }
        Ok(PageToken::Archive(first))
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
        let mut state = self.state(ctx)?;
        let mut current = self.records(ctx, CURRENT_CHUNK)?.ok_or_else(|| {
            Error::storage(format!(
                "flow {:?} has no {}/{CURRENT_CHUNK} chunk",
                ctx.flow_id(),
                self.chunk_map
            ))
        })?;
        let sequence = state.next_sequence;
        let record = make(sequence)?;
        let encoded = encode("record", &record)?;
        crate::limits::check_record(&encoded)?;
        if current.len() as u64 >= self.chunk_size {
            let first = sequence - current.len() as u64;
            let token = archive_token(first);
            let full = std::mem::take(&mut current);
            ctx.set_map_instance(self.chunk_map, &token, self.chunk_value(full))?;
            state.latest_archived_chunk_token = token;
        }
        current.push(encoded);
        state.next_sequence = sequence.checked_add(1).ok_or_else(|| {
            Error::storage(format!(
                "log of flow {:?} ran out of sequences",
                ctx.flow_id()
            ))
        })?;
        ctx.set_map_instance(self.chunk_map, CURRENT_CHUNK, self.chunk_value(current))?;
        ctx.set_attribute(self.state_attribute, encode("log state", &state)?)?;
        Ok(record)
    }

    /// Reads the page `token` names, newest record first. The chunk must be loaded: the
    /// caller loads `token`'s instance (`current` for `""`) through RPC invoke options.
    pub fn page<R: DeserializeOwned>(&self, ctx: &RpcContext<'_>, token: &str) -> Result<Page<R>> {
        let parsed = self.parse_token(token)?;
        let key = parsed.instance_key();
        let records = match (parsed, self.records(ctx, &key)?) {
            (_, Some(records)) => records,
            (PageToken::Current, None) => Vec::new(),
            (PageToken::Archive(_), None) => {
                return Err(Error::PageNotFound(format!(
                    "{} page {token:?} not found",
                    self.page_noun
                )))
            }
        };
        let next_page_token = match parsed {
            _ if records.is_empty() => String::new(),
            PageToken::Current => self.state(ctx)?.latest_archived_chunk_token,
            PageToken::Archive(first) if first > self.chunk_size => {
                archive_token(first - self.chunk_size)
            }
            PageToken::Archive(_) => String::new(),
        };
        let physical = format!("{}/{key}", self.chunk_map);
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

    fn state(&self, ctx: &RpcContext<'_>) -> Result<LogState> {
        let value = ctx.attribute(self.state_attribute)?.ok_or_else(|| {
            Error::storage(format!(
                "flow {:?} has no {} Attribute",
                ctx.flow_id(),
                self.state_attribute
            ))
        })?;
        decode_stored(self.state_attribute, value)
    }

    /// The raw records of a chunk; the records stay JSON so an append never decodes the
    /// whole chunk into typed values.
    fn records(&self, ctx: &RpcContext<'_>, key: &str) -> Result<Option<Vec<Value>>> {
        let Some(chunk) = ctx.map_instance(self.chunk_map, key)? else {
            return Ok(None);
        };
        let physical = format!("{}/{key}", self.chunk_map);
        match chunk.get(self.records_field) {
            Some(Value::Array(records)) => Ok(Some(records.clone())),
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
