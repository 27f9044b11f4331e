//! Reading a chunked log: one page is one whole chunk, newest record first, naming the
//! token of the next older page; tokens are checked by [`super::token`]. The walk ends at
//! the oldest chunk a trim ([`super::retention`]) left; the token of a dropped chunk is
//! [`Error::PageTrimmed`].

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::layout::LayoutHistory;
use super::state::LogState;
use super::token::PageToken;
use super::ChunkedLog;
use crate::context::RpcContext;
use crate::error::{Error, Result};
use crate::options::RpcInvokeOptions;
use crate::output::RpcOutput;

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

impl ChunkedLog {
    /// The per-call loads a read of a named log's page `token` needs, after checking the
    /// token's form.
    pub fn page_options(&self, token: &str) -> Result<RpcInvokeOptions> {
        let key = self.chunk_key(&PageToken::parse(token)?.instance_key());
        Ok(RpcInvokeOptions::new()
            .load_attribute_map_instance(self.state_attribute, self.name.clone())
            .load_attribute_map_instance(self.chunk_map, key))
    }
    /// Reads the page `token` names, newest record first. The chunk must be loaded: the
    /// caller loads `token`'s instance (`current` for `""`) through RPC invoke options.
    /// The token of a chunk a trim dropped is [`Error::PageTrimmed`], naming the oldest
    /// retained page.
    pub fn page<R: DeserializeOwned>(&self, ctx: &RpcContext<'_>, token: &str) -> Result<Page<R>> {
        let place = self.locate(ctx, token)?;
        let records = self.records_as(ctx, &place.key)?;
        self.finish(place, token, records)
    }

    /// Reads the page `token` names as [`ChunkedLog::page`] does, each record as the JSON
    /// text it is stored as, and returns what `encode` makes of it (an RPC's output): the
    /// records are neither decoded nor encoded again, so a page costs a scan of its chunk
    /// and a copy.
    pub fn page_output(
        &self,
        ctx: &RpcContext<'_>,
        token: &str,
        encode: impl FnOnce(Page<&RawValue>) -> Result<RpcOutput>,
    ) -> Result<RpcOutput> {
        let place = self.locate(ctx, token)?;
        let key = self.chunk_key(&place.key);
        let json = ctx.map_instance_json(self.chunk_map, &key)?;
        let physical = format!("{}/{key}", self.chunk_map);
        let records = match &json {
            Some(json) => Some(self.raw_records(json, &physical)?),
            None => None,
        };
        encode(self.finish(place, token, records)?)
    }

    /// Where the page `token` is: its chunk and the log's state, or [`Error::PageTrimmed`].
    fn locate(&self, ctx: &RpcContext<'_>, token: &str) -> Result<PagePlace> {
        let state = self.state(ctx)?;
        let history = self.layout_history_of(&state)?;
        let parsed = PageToken::parse_in(&history, token)?;
        let key = parsed.instance_key();
        if matches!(parsed, PageToken::Archive(first) if first < state.oldest_sequence) {
            return Err(state.trimmed(key));
        }
        Ok(PagePlace {
            parsed,
            key,
            state,
            history,
        })
    }

    /// The page at `place` of the chunk's `records` in stored order (`None`: the chunk is
    /// not stored), newest first, with the next older page's token.
    fn finish<R>(&self, place: PagePlace, token: &str, records: Option<Vec<R>>) -> Result<Page<R>> {
        let PagePlace {
            parsed,
            key,
            state,
            history,
        } = place;
        let mut records = match (parsed, records) {
            (_, Some(records)) => records,
            (PageToken::Current, None) => Vec::new(),
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
            // The walk ends at the oldest chunk a trim left.
            PageToken::Archive(first) => history
                .previous_boundary(first)
                .filter(|previous| *previous >= state.oldest_sequence)
                .map(|previous| PageToken::Archive(previous).to_string())
                .unwrap_or_default(),
        };
        records.reverse();
        Ok(Page {
            page_token: key,
            records,
            next_page_token,
        })
    }
}

/// A page's chunk, found: its parsed token and unscoped key, and the log's state.
struct PagePlace {
    parsed: PageToken,
    key: String,
    state: LogState,
    history: LayoutHistory,
}
