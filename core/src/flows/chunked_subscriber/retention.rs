//! Trimming the archive and reading it forward: `TrimSubscribers` and
//! `ReadSubscribersFrom`, with the rules of every chunked log
//! ([`crate::chunked_log::retention`], [`crate::chunked_log::read_from`]).
//!
//! `TrimSubscribers` drops whole archived chunks, oldest first (`{"keepNewest": n}` or
//! `{"dropBefore": sequence}`), under the locks of a registration; the chunks that remain,
//! and their tokens, are unchanged, and a dropped chunk's token is `PageTrimmed`.
//! `ReadSubscribersFrom` returns up to `limit` subscribers from `sequence` on, oldest
//! first, with the next sequence to read from. `SetSubscriberRetention`
//! (`{"keepNewest": n}`, or `{}` to keep everything) makes every registration apply
//! `keepNewest`, and applies it at once.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Subscriber, SubscriberArchive, FLOW_TYPE, LOG, READ_SUBSCRIBERS_FROM, SET_SUBSCRIBER_RETENTION,
    TRIM_SUBSCRIBERS,
};
use crate::chunked_log::{
    tail_start, wait_for_records, ReadFromInput, Retention, RetentionChange, RetentionInput, Trim,
    TrimInput, TrimOutcome,
};
use crate::context::RpcContext;
use crate::definition::RpcDefinition;
use crate::error::Result;
use crate::flows::follow::{FollowCursor, ForwardRead};
use crate::output::RpcOutput;
use crate::runtime::{ReadRpc, Runtime};
use crate::typed::{decode_input, encode};

/// Output of `ReadSubscribersFrom`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribersFrom {
    /// The subscribers from the start on, oldest first.
    pub subscribers: Vec<Subscriber>,
    /// The sequence to read from next.
    pub next_sequence: u64,
    /// Chunks the call must load to read anything (the client calls again with them);
    /// empty, and not sent, when the read is complete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks_to_load: Vec<String>,
    /// The archive's run this read read: its sequences count in that run. Pass it to the
    /// next read or tail to resume only in that run.
    pub run_id: String,
}

pub(super) fn trim_subscribers_rpc() -> RpcDefinition {
    LOG.appending(RpcDefinition::new_with_output(
        TRIM_SUBSCRIBERS,
        trim_subscribers,
    ))
}

pub(super) fn read_subscribers_from_rpc() -> RpcDefinition {
    RpcDefinition::new_with_output(READ_SUBSCRIBERS_FROM, read_subscribers_from).read_only()
}

pub(super) fn set_subscriber_retention_rpc() -> RpcDefinition {
    LOG.appending(RpcDefinition::new_with_output(
        SET_SUBSCRIBER_RETENTION,
        set_subscriber_retention,
    ))
}

fn set_subscriber_retention(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: RetentionInput = decode_input(SET_SUBSCRIBER_RETENTION, input)?;
    let retention = input
        .keep_newest
        .map(|keep_newest| Retention { keep_newest });
    let change = LOG.set_retention(ctx, retention)?;
    RpcOutput::encode("retention change", &change)
}

fn trim_subscribers(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: TrimInput = decode_input(TRIM_SUBSCRIBERS, input)?;
    let outcome = LOG.trim(ctx, input.trim()?)?;
    RpcOutput::encode("trim outcome", &outcome)
}

fn read_subscribers_from(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: ReadFromInput = decode_input(READ_SUBSCRIBERS_FROM, input)?;
    let read = LOG.read_from::<Subscriber>(ctx, input.sequence, input.limit)?;
    RpcOutput::encode(
        "subscribers",
        &SubscribersFrom {
            subscribers: read.records,
            next_sequence: read.next_sequence,
            chunks_to_load: read.chunks_to_load,
            run_id: read.run_id,
        },
    )
}

impl SubscriberArchive<'_> {
    /// Drops whole archived chunks, oldest first, as `trim` says; see the
    /// [module docs](self). A lock conflict is retried by the client's policy.
    pub fn trim(&self, trim: Trim) -> Result<TrimOutcome> {
        trim.validate()?;
        self.call(TRIM_SUBSCRIBERS, &TrimInput::from(trim))
    }

    /// Makes every registration keep at least the newest `keep_newest` subscribers
    /// (dropping whole archived chunks), or with `None` keep every one again, and applies
    /// it at once; see the [module docs](self).
    pub fn set_retention(&self, keep_newest: Option<u64>) -> Result<RetentionChange> {
        self.call(SET_SUBSCRIBER_RETENTION, &RetentionInput { keep_newest })
    }

    /// Waits up to `timeout` for subscribers with sequences after `after` (0: from the
    /// start) and returns up to `limit` of them, oldest first, as soon as there are any;
    /// none once `timeout` passes. Resume with the last sequence received and the run the
    /// read reports ([`SubscribersFrom::run_id`]): pinned to `run_id`, a tail of an
    /// archive started again since is [`crate::Error::RunNotCurrent`]. See
    /// [`crate::chunked_log::tail`].
    pub fn tail(
        &self,
        after: u64,
        limit: u64,
        timeout: Duration,
        run_id: Option<&str>,
    ) -> Result<SubscribersFrom> {
        let sequence = tail_start(after)?;
        crate::chunked_log::validate_read_limit(limit)?;
        wait_for_records(
            self.runtime.commits(),
            timeout,
            || self.runtime.store().watch_changes(),
            || {
                let read = self.read_from(sequence, limit, run_id)?;
                let found = !read.subscribers.is_empty();
                Ok((read, found))
            },
        )
    }

    /// The next subscribers after `cursor`'s position, waiting up to `timeout` for any
    /// (none once it passes), and moves `cursor` after them; see [`crate::flows::follow`]
    /// for how it resumes, and what it does after a trim.
    pub fn follow_next(
        &self,
        cursor: &mut FollowCursor,
        timeout: Duration,
    ) -> Result<Vec<Subscriber>> {
        cursor.step(|after, limit, run_id| {
            let read = self.tail(after, limit, timeout, run_id)?;
            Ok(ForwardRead {
                records: read.subscribers,
                next_sequence: read.next_sequence,
                run_id: read.run_id,
            })
        })
    }

    /// Up to `limit` subscribers from `sequence` on, oldest first, with the sequence to read
    /// from next and the run read. A trimmed `sequence` is [`crate::Error::PageTrimmed`];
    /// with `run_id`, an archive in another run is [`crate::Error::RunNotCurrent`].
    pub fn read_from(
        &self,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
    ) -> Result<SubscribersFrom> {
        self.read_forward(sequence, limit, run_id, Runtime::invoke_rpc_output)
    }

    /// Reads forward as [`SubscriberArchive::read_from`] does, whatever the archive's run
    /// state, a stopped archive included, through [`Runtime::inspect_rpc_output`]: for
    /// tools that read an archive its RPCs no longer serve (`attrflow export`).
    pub fn inspect_read_from(
        &self,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
    ) -> Result<SubscribersFrom> {
        self.read_forward(sequence, limit, run_id, Runtime::inspect_rpc_output)
    }

    fn read_forward(
        &self,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
        read: ReadRpc,
    ) -> Result<SubscribersFrom> {
        crate::chunked_log::validate_read_start(sequence)?;
        crate::chunked_log::validate_read_limit(limit)?;
        let input = encode("input", &ReadFromInput { sequence, limit })?;
        LOG.read_forward(run_id, |options| {
            let output = self.retry.run(|| {
                read(
                    self.runtime,
                    FLOW_TYPE,
                    self.flow_id,
                    READ_SUBSCRIBERS_FROM,
                    input.clone(),
                    &options,
                )
            })?;
            let mut read: SubscribersFrom = output.decode(READ_SUBSCRIBERS_FROM)?;
            let to_load = std::mem::take(&mut read.chunks_to_load);
            let run = read.run_id.clone();
            Ok((read, to_load, run))
        })
    }
}
