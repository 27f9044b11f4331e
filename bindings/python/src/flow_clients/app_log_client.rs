//! The app log's native client (`attrflow._native.AppLog`): exactly the operations of the
//! core's [`CoreAppLog`], per named log, each retried by the client's policy in the core.

use attrflow::chunked_log::token::out_of_range;
use attrflow::flows::app_log::AppLog as CoreAppLog;
use pyo3::prelude::*;
use serde_json::Value;

use super::follow_cursor::{Followed, NativeFollowCursor};
use super::verifiable::{
    consistency_json, inclusion_json, signer, size_out_of_range, tree_head_json,
};
use super::{
    detached_json, keep_newest, native_client, read_range, run_or_submit, tail_arguments, to_json,
    trim_rule, PyRetryPolicy, Target,
};
use crate::errors::IntoPyResult;
use crate::executor;
use crate::integers::{optional_unsigned, unsigned};
use crate::runtime::NativeRuntime;
use crate::text::{JsonText, Text};

/// The record `record_json` of `log`, parsed by the core's JSON rules.
fn record(log: &str, record_json: &str) -> attrflow::Result<Value> {
    attrflow::json::parse(record_json, || format!("record of log {log:?}"))
}

native_client!(
    /// The app log (`ChunkedLogFlow`) `flow_id` of a store, as the core's typed client.
    NativeAppLog, "AppLog", CoreAppLog, {
    /// Appends the JSON record `record_json` to `log`; returns the entry as JSON.
    fn append(&self, py: Python<'_>, log: Text, record_json: JsonText) -> PyResult<String> {
        detached_json(py, || self.core().append(&log, record(&log, &record_json)?))
    }

    /// Appends the JSON array `records_json` to `log` in one transaction (optionally under
    /// `idempotency_key`); returns the entries as a JSON array.
    #[pyo3(signature = (log, records_json, idempotency_key = None))]
    fn append_batch(
        &self,
        py: Python<'_>,
        log: Text,
        records_json: JsonText,
        idempotency_key: Option<Text>,
    ) -> PyResult<String> {
        detached_json(py, || {
            let records = match record(&log, &records_json)? {
                Value::Array(records) => records,
                _ => {
                    return Err(attrflow::Error::invalid_input(format!(
                        "records of log {:?} must be a JSON array",
                        &*log
                    )))
                }
            };
            self.core().append_batch(&log, records, idempotency_key.as_deref())
        })
    }

    /// Appends the JSON record `record_json` to `log` under `idempotency_key`; a retry
    /// returns the first call's entry. Returns the entry as JSON.
    fn append_once(
        &self,
        py: Python<'_>,
        log: Text,
        idempotency_key: Text,
        record_json: JsonText,
    ) -> PyResult<String> {
        detached_json(py, || {
            self.core().append_once(&log, &idempotency_key, record(&log, &record_json)?)
        })
    }

    /// Reads one page of `log`; returns it as JSON.
    fn page(&self, py: Python<'_>, log: Text, page_token: Text) -> PyResult<String> {
        detached_json(py, || self.core().page(&log, &page_token))
    }

    /// Drops whole archived chunks of `log`, oldest first (exactly one of `keep_newest` and
    /// `drop_before`); returns what it did as JSON.
    #[pyo3(signature = (log, keep_newest = None, drop_before = None))]
    fn trim(
        &self,
        py: Python<'_>,
        log: Text,
        keep_newest: Option<&Bound<'_, PyAny>>,
        drop_before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let trim = trim_rule(keep_newest, drop_before)?;
        detached_json(py, || self.core().trim(&log, trim?))
    }

    /// Sets (or with `None` clears) the retention of `log`; returns the change as JSON.
    #[pyo3(signature = (log, keep_newest))]
    fn set_retention(
        &self,
        py: Python<'_>,
        log: Text,
        keep_newest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let keep = self::keep_newest(keep_newest)?;
        detached_json(py, || self.core().set_retention(&log, keep))
    }

    /// Waits up to `timeout` seconds for entries of `log` after `after` (in the run
    /// `run_id`, when given); returns up to `limit` of them, oldest first, with the next
    /// sequence and the run read, as JSON (none on timeout). With `done`, waits on a
    /// worker thread instead (see `run_or_submit`).
    #[pyo3(signature = (log, after, limit, timeout, *, run_id = None, done = None))]
    #[allow(clippy::too_many_arguments)]
    fn tail<'py>(
        &self,
        py: Python<'py>,
        log: Text,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        timeout: f64,
        run_id: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (after, limit, timeout) = tail_arguments(py, after, limit, timeout)?;
        let target = self.0.clone();
        run_or_submit(py, done, move || {
            to_json(target.app_log().tail(&log, after, limit, timeout, run_id.as_deref()))
        })
    }

    /// Up to `limit` entries of `log` from `sequence` on (in the run `run_id`, when given),
    /// oldest first, with the next sequence and the run read, as JSON.
    #[pyo3(signature = (log, sequence, limit, *, run_id = None))]
    fn read_from(
        &self,
        py: Python<'_>,
        log: Text,
        sequence: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<String> {
        let (sequence, limit) = read_range(sequence, limit)?;
        detached_json(py, || self.core().read_from(&log, sequence, limit, run_id.as_deref()))
    }

    /// A follow cursor of `log` after `after` (0: from its oldest retained entry), up to
    /// `limit` entries a step, pinned to `run_id` or to the run its first step reads.
    #[pyo3(signature = (log, after, limit, *, run_id = None))]
    fn follow(
        &self,
        py: Python<'_>,
        log: Text,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<NativeFollowCursor> {
        let followed = Followed::Log(log.into());
        NativeFollowCursor::open(py, self.0.clone(), followed, (after, limit), run_id)
    }

    /// Makes `log` verifiable (idempotent); returns its tree head as JSON.
    fn make_verifiable(&self, py: Python<'_>, log: Text) -> PyResult<String> {
        py.detach(|| tree_head_json(self.core().make_verifiable(&log)))
            .into_py_result(py)
    }

    /// The tree head of `log` as JSON: `{"treeSize", "rootHash"}`.
    fn tree_head(&self, py: Python<'_>, log: Text) -> PyResult<String> {
        py.detach(|| tree_head_json(self.core().tree_head(&log)))
            .into_py_result(py)
    }

    /// The newest tree head of `log` as a signed C2SP checkpoint, signed with the signer
    /// key `key` (text or bytes; not kept); `origin` defaults to `attrflow/<flow>/<log>`.
    #[pyo3(signature = (log, key, origin = None))]
    fn checkpoint(
        &self,
        py: Python<'_>,
        log: Text,
        key: &Bound<'_, PyAny>,
        origin: Option<Text>,
    ) -> PyResult<String> {
        let signer = signer(py, key)?;
        py.detach(|| self.core().checkpoint(&log, &signer, origin.as_deref()))
            .into_py_result(py)
    }

    /// The inclusion proof of entry `sequence` of `log` in the tree of `tree_size` entries
    /// (the newest when `None`), as JSON.
    #[pyo3(signature = (log, sequence, tree_size = None))]
    fn inclusion_proof(
        &self,
        py: Python<'_>,
        log: Text,
        sequence: &Bound<'_, PyAny>,
        tree_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let sequence = unsigned(sequence, |shown| out_of_range("sequence", shown))?;
        let tree_size = optional_unsigned(tree_size, |shown| size_out_of_range("treeSize", shown))?;
        py.detach(|| inclusion_json(self.core().inclusion_proof(&log, sequence, tree_size)))
            .into_py_result(py)
    }

    /// The consistency proof of `log` between tree sizes `from_` and `to`, as JSON.
    #[pyo3(signature = (log, from_, to))]
    fn consistency_proof(
        &self,
        py: Python<'_>,
        log: Text,
        from_: &Bound<'_, PyAny>,
        to: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let from = unsigned(from_, |shown| size_out_of_range("from", shown))?;
        let to = unsigned(to, |shown| size_out_of_range("to", shown))?;
        py.detach(|| consistency_json(self.core().consistency_proof(&log, from, to)))
            .into_py_result(py)
    }
});
