//! Trimming a log and reading it forward: `TrimLog` and `ReadLogFrom`, with the rules of
//! every chunked log ([`crate::chunked_log::retention`], [`crate::chunked_log::read_from`]).
//!
//! `TrimLog` drops whole archived chunks of one log, oldest first (`keepNewest` or
//! `dropBefore`), under the locks of an append to it; `ReadLogFrom` returns up to `limit`
//! entries from `sequence` on, oldest first, with the next sequence to read from.
//! `SetLogRetention` makes every append to one log apply `keepNewest` (and applies it at
//! once); `{"log": …}` alone keeps every entry again.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    named_log, validate_log_name, AppLog, LogEntry, FLOW_TYPE, READ_LOG_FROM, SET_LOG_RETENTION,
    TRIM_LOG,
};
use crate::chunked_log::{
    tail_start, validate_read_limit, validate_read_start, wait_for_records, ReadFromInput,
    Retention, RetentionChange, RetentionInput, Trim, TrimInput, TrimOutcome,
};
use crate::context::RpcContext;
use crate::error::Result;
use crate::flows::follow::{FollowCursor, ForwardRead};
use crate::output::RpcOutput;
use crate::runtime::{ReadRpc, Runtime};
use crate::typed::{decode_input, encode};

/// Input of `TrimLog`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrimLogInput {
    /// The log's name; required.
    pub log: String,
    /// The rule: exactly one of `keepNewest` and `dropBefore`.
    #[serde(flatten)]
    pub trim: TrimInput,
}

/// Input of `SetLogRetention`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetLogRetentionInput {
    /// The log's name; required.
    pub log: String,
    /// The retention: `keepNewest`, or nothing to keep every entry.
    #[serde(flatten)]
    pub retention: RetentionInput,
}

/// Input of `ReadLogFrom`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReadLogFromInput {
    /// The log's name; required.
    pub log: String,
    /// Where to start and how many entries at most.
    #[serde(flatten)]
    pub read: ReadFromInput,
}

/// Output of `ReadLogFrom`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntriesFrom {
    /// The log read.
    pub log: String,
    /// The entries from the start on, oldest first.
    pub entries: Vec<LogEntry>,
    /// The sequence to read from next.
    pub next_sequence: u64,
    /// Chunks the call must load to read anything (the client calls again with them);
    /// empty, and not sent, when the read is complete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks_to_load: Vec<String>,
    /// The logs flow's run this read read: its sequences count in that run. Pass it to the
    /// next read or tail to resume only in that run.
    pub run_id: String,
}

pub(super) fn trim_log(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: TrimLogInput = decode_input(TRIM_LOG, input)?;
    validate_log_name(&input.log)?;
    let outcome = named_log(&input.log).trim(ctx, input.trim.trim()?)?;
    RpcOutput::encode("trim outcome", &outcome)
}

pub(super) fn set_log_retention(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: SetLogRetentionInput = decode_input(SET_LOG_RETENTION, input)?;
    validate_log_name(&input.log)?;
    let retention = input
        .retention
        .keep_newest
        .map(|keep_newest| Retention { keep_newest });
    let change = named_log(&input.log).set_retention(ctx, retention)?;
    RpcOutput::encode("retention change", &change)
}

pub(super) fn read_log_from(ctx: &mut RpcContext<'_>, input: Value) -> Result<RpcOutput> {
    let input: ReadLogFromInput = decode_input(READ_LOG_FROM, input)?;
    validate_log_name(&input.log)?;
    let read =
        named_log(&input.log).read_from::<LogEntry>(ctx, input.read.sequence, input.read.limit)?;
    RpcOutput::encode(
        "log entries",
        &LogEntriesFrom {
            log: input.log,
            entries: read.records,
            next_sequence: read.next_sequence,
            chunks_to_load: read.chunks_to_load,
            run_id: read.run_id,
        },
    )
}

impl AppLog<'_> {
    /// Drops whole archived chunks of `log`, oldest first, as `trim` says; see the
    /// [module docs](crate::flows::app_log). A concurrent append to the log gives a lock conflict, retried by the client's policy.
    pub fn trim(&self, log: &str, trim: Trim) -> Result<TrimOutcome> {
        validate_log_name(log)?;
        trim.validate()?;
        let input = TrimLogInput {
            log: log.to_owned(),
            trim: trim.into(),
        };
        let output = self.invoke(TRIM_LOG, encode("input", &input)?)?;
        output.decode(TRIM_LOG)
    }

    /// Makes every append to `log` keep at least its newest `keep_newest` entries (dropping
    /// whole archived chunks), or with `None` keep every one again, and applies it at once.
    pub fn set_retention(&self, log: &str, keep_newest: Option<u64>) -> Result<RetentionChange> {
        validate_log_name(log)?;
        let input = SetLogRetentionInput {
            log: log.to_owned(),
            retention: RetentionInput { keep_newest },
        };
        let output = self.invoke(SET_LOG_RETENTION, encode("input", &input)?)?;
        output.decode(SET_LOG_RETENTION)
    }

    /// Waits up to `timeout` for entries of `log` after `after` (0: from the start) and
    /// returns up to `limit` of them, oldest first, as soon as there are any; none once
    /// `timeout` passes. Pinned to `run_id` (the run a read reports), a tail of logs
    /// started again since is [`crate::Error::RunNotCurrent`]. See
    /// [`crate::chunked_log::tail`].
    pub fn tail(
        &self,
        log: &str,
        after: u64,
        limit: u64,
        timeout: Duration,
        run_id: Option<&str>,
    ) -> Result<LogEntriesFrom> {
        let sequence = tail_start(after)?;
        validate_log_name(log)?;
        validate_read_limit(limit)?;
        wait_for_records(
            self.runtime.commits(),
            timeout,
            || self.runtime.store().watch_changes(),
            || {
                let read = self.read_from(log, sequence, limit, run_id)?;
                let found = !read.entries.is_empty();
                Ok((read, found))
            },
        )
    }

    /// The next entries of `log` after `cursor`'s position, waiting up to `timeout` for any
    /// (none once it passes), and moves `cursor` after them; see [`crate::flows::follow`]
    /// for how it resumes, and what it does after a trim. A cursor follows one log.
    pub fn follow_next(
        &self,
        log: &str,
        cursor: &mut FollowCursor,
        timeout: Duration,
    ) -> Result<Vec<LogEntry>> {
        cursor.step(|after, limit, run_id| {
            let read = self.tail(log, after, limit, timeout, run_id)?;
            Ok(ForwardRead {
                records: read.entries,
                next_sequence: read.next_sequence,
                run_id: read.run_id,
            })
        })
    }

    /// Up to `limit` entries of `log` from `sequence` on, oldest first, with the sequence to
    /// read from next and the run read. A trimmed `sequence` is
    /// [`crate::Error::PageTrimmed`]; with `run_id`, logs in another run are
    /// [`crate::Error::RunNotCurrent`].
    pub fn read_from(
        &self,
        log: &str,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
    ) -> Result<LogEntriesFrom> {
        self.read_forward(log, sequence, limit, run_id, Runtime::invoke_rpc_output)
    }

    /// Reads forward as [`AppLog::read_from`] does, whatever the flow's run state, a
    /// stopped flow included, through [`Runtime::inspect_rpc_output`]: for tools that read
    /// a log its RPCs no longer serve (`attrflow export`).
    pub fn inspect_read_from(
        &self,
        log: &str,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
    ) -> Result<LogEntriesFrom> {
        self.read_forward(log, sequence, limit, run_id, Runtime::inspect_rpc_output)
    }

    fn read_forward(
        &self,
        log: &str,
        sequence: u64,
        limit: u64,
        run_id: Option<&str>,
        read: ReadRpc,
    ) -> Result<LogEntriesFrom> {
        validate_log_name(log)?;
        validate_read_start(sequence)?;
        validate_read_limit(limit)?;
        let input = encode(
            "input",
            &ReadLogFromInput {
                log: log.to_owned(),
                read: ReadFromInput { sequence, limit },
            },
        )?;
        named_log(log).read_forward(run_id, |options| {
            let output = self.retry.run(|| {
                read(
                    self.runtime,
                    FLOW_TYPE,
                    self.flow_id,
                    READ_LOG_FROM,
                    input.clone(),
                    &options,
                )
            })?;
            let mut read: LogEntriesFrom = output.decode(READ_LOG_FROM)?;
            let to_load = std::mem::take(&mut read.chunks_to_load);
            let run = read.run_id.clone();
            Ok((read, to_load, run))
        })
    }
}
