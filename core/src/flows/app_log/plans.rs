//! How each of the app log's RPCs plans a call from its input ([`RpcPlanner`]): every
//! call names its log, and locks and loads that log's state and open chunk (a keyed append
//! its remembered idempotency keys too), or for a read, loads the chunks it reads. This is
//! the one place those instances are named; the typed client, the bindings and the HTTP
//! service call without options.
//!
//! A planner reads only the fields it needs. An input it cannot read (not an object, a
//! field of the wrong type) gets no plan: the handler then refuses it with its own error,
//! before it reads or writes anything. A bad log name or page token fails the plan with
//! the error the handler would give.

use serde::Deserialize;
use serde_json::Value;

use super::{idempotent_append_options, named_log, page_options, validate_log_name};
use crate::definition::{RpcPlan, RpcPlanner};
use crate::error::Result;

/// The fields of an app-log RPC's input its plan depends on.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct PlannedFields<'a> {
    #[serde(borrow)]
    log: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    idempotency_key: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    page_token: std::borrow::Cow<'a, str>,
}

/// The fields of `input`, or `None` when it does not decode (the handler says why).
fn fields(input: &Value) -> Option<PlannedFields<'_>> {
    PlannedFields::deserialize(input).ok()
}

/// `AppendLogRecord`, `TrimLog`, `SetLogRetention`, `ChangeLogChunkSize`: the log's state
/// and open chunk.
pub(super) const APPEND: RpcPlanner = RpcPlanner::locking(append);
/// `AppendLogRecords`: as [`APPEND`], and with an idempotency key the log's remembered keys.
pub(super) const APPEND_BATCH: RpcPlanner = RpcPlanner::locking(append_batch);
/// `AppendLogRecordOnce`: as [`APPEND`] plus the log's remembered keys.
pub(super) const APPEND_ONCE: RpcPlanner = RpcPlanner::locking(append_once);
/// `GetLogPage`: loads the log's state and the token's chunk.
pub(super) const PAGE: RpcPlanner = RpcPlanner::loading(page);
/// `ReadLogFrom`: loads the log's state; the read names the chunks it needs next.
pub(super) const READ_FROM: RpcPlanner = RpcPlanner::loading(read_from);

fn append(input: &Value) -> Result<RpcPlan> {
    keyed_append(input, false)
}

fn append_batch(input: &Value) -> Result<RpcPlan> {
    let keyed = fields(input).is_some_and(|f| !f.idempotency_key.is_empty());
    keyed_append(input, keyed)
}

fn append_once(input: &Value) -> Result<RpcPlan> {
    keyed_append(input, true)
}

fn keyed_append(input: &Value, idempotent: bool) -> Result<RpcPlan> {
    let Some(fields) = fields(input) else {
        return Ok(RpcPlan::default());
    };
    validate_log_name(&fields.log)?;
    Ok(if idempotent {
        idempotent_append_options(&fields.log)
    } else {
        named_log(&fields.log).append_options(false)
    }
    .into())
}

fn page(input: &Value) -> Result<RpcPlan> {
    match fields(input) {
        Some(fields) => Ok(page_options(&fields.log, &fields.page_token)?.into()),
        None => Ok(RpcPlan::default()),
    }
}

fn read_from(input: &Value) -> Result<RpcPlan> {
    let Some(fields) = fields(input) else {
        return Ok(RpcPlan::default());
    };
    validate_log_name(&fields.log)?;
    Ok(named_log(&fields.log).read_options(&[]).into())
}
