//! The subscriber archive's native client (`attrflow._native.SubscriberArchive`): exactly
//! the operations of the core's [`CoreArchive`], each retried by the client's policy in the
//! core.

use attrflow::chunked_log::token::out_of_range;
use attrflow::chunked_log::IdempotencyWindow;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::SubscriberArchive as CoreArchive;
use pyo3::prelude::*;

use super::follow_cursor::{Followed, NativeFollowCursor};
use super::verifiable::{
    consistency_json, inclusion_json, signer, size_out_of_range, tree_head_json,
};
use super::{
    detached_json, keep_newest, native_client, parse_error, read_range, run_or_submit,
    tail_arguments, to_json, trim_rule, PyRetryPolicy, Target,
};
use crate::errors::IntoPyResult;
use crate::executor;
use crate::integers::{optional_unsigned, unsigned};
use crate::runtime::NativeRuntime;
use crate::text::{JsonText, Text};

native_client!(
    /// The subscriber archive (`ChunkedSubscriberFlow`) `flow_id` of a store, as the core's
    /// typed client.
    NativeSubscriberArchive, "SubscriberArchive", CoreArchive, {
    /// Appends a subscriber; returns it with its sequence as JSON.
    fn register(
        &self,
        py: Python<'_>,
        subscriber_id: Text,
        delivery_address: Text,
    ) -> PyResult<String> {
        detached_json(py, || self.core().register(&subscriber_id, &delivery_address))
    }

    /// Appends the subscribers of the JSON array `subscribers_json` (`subscriberId`,
    /// `deliveryAddress` each) in one transaction, optionally under `idempotency_key`;
    /// returns them with their sequences as a JSON array.
    #[pyo3(signature = (subscribers_json, idempotency_key = None))]
    fn register_batch(
        &self,
        py: Python<'_>,
        subscribers_json: JsonText,
        idempotency_key: Option<Text>,
    ) -> PyResult<String> {
        detached_json(py, || {
            let subscribers: Vec<NewSubscriber> = serde_json::from_str(&subscribers_json)
                .map_err(|e| parse_error("subscribers", e))?;
            self.core().register_batch(&subscribers, idempotency_key.as_deref())
        })
    }

    /// Appends a subscriber under `idempotency_key`; a retry returns the first call's
    /// subscriber. Returns it as JSON.
    fn register_once(
        &self,
        py: Python<'_>,
        idempotency_key: Text,
        subscriber_id: Text,
        delivery_address: Text,
    ) -> PyResult<String> {
        detached_json(py, || {
            self.core().register_once(&idempotency_key, &subscriber_id, &delivery_address)
        })
    }

    /// Moves new chunks to `chunk_size` subscribers from the next chunk boundary; returns
    /// the change as JSON.
    fn change_chunk_size(&self, py: Python<'_>, chunk_size: &Bound<'_, PyAny>) -> PyResult<String> {
        let chunk_size = unsigned(chunk_size, |shown| out_of_range("chunkSize", shown))?;
        detached_json(py, || self.core().change_chunk_size(chunk_size))
    }

    /// Sets the idempotency window `window_json` (`maxKeys`, `maxAgeMs`); returns it as
    /// JSON.
    fn set_idempotency_window(&self, py: Python<'_>, window_json: JsonText) -> PyResult<String> {
        detached_json(py, || {
            let window: IdempotencyWindow = serde_json::from_str(&window_json)
                .map_err(|e| parse_error("idempotency window", e))?;
            self.core().set_idempotency_window(window)
        })
    }

    /// Reads one page; returns it as JSON.
    fn page(&self, py: Python<'_>, page_token: Text) -> PyResult<String> {
        detached_json(py, || self.core().page(&page_token))
    }

    /// Drops whole archived chunks, oldest first (exactly one of `keep_newest` and
    /// `drop_before`); returns what it did as JSON.
    #[pyo3(signature = (keep_newest = None, drop_before = None))]
    fn trim(
        &self,
        py: Python<'_>,
        keep_newest: Option<&Bound<'_, PyAny>>,
        drop_before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let trim = trim_rule(keep_newest, drop_before)?;
        detached_json(py, || self.core().trim(trim?))
    }

    /// Sets (or with `None` clears) the archive's retention; returns the change as JSON.
    #[pyo3(signature = (keep_newest))]
    fn set_retention(
        &self,
        py: Python<'_>,
        keep_newest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let keep = self::keep_newest(keep_newest)?;
        detached_json(py, || self.core().set_retention(keep))
    }

    /// Waits up to `timeout` seconds for subscribers after `after` (in the run `run_id`,
    /// when given); returns up to `limit` of them, oldest first, with the next sequence
    /// and the run read, as JSON (none on timeout). With `done`, waits on a worker thread
    /// instead (see `run_or_submit`).
    #[pyo3(signature = (after, limit, timeout, *, run_id = None, done = None))]
    fn tail<'py>(
        &self,
        py: Python<'py>,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        timeout: f64,
        run_id: Option<Text>,
        done: Option<executor::Done>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (after, limit, timeout) = tail_arguments(py, after, limit, timeout)?;
        let target = self.0.clone();
        run_or_submit(py, done, move || {
            to_json(target.archive().tail(after, limit, timeout, run_id.as_deref()))
        })
    }

    /// Up to `limit` subscribers from `sequence` on (in the run `run_id`, when given),
    /// oldest first, with the next sequence and the run read, as JSON.
    #[pyo3(signature = (sequence, limit, *, run_id = None))]
    fn read_from(
        &self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<String> {
        let (sequence, limit) = read_range(sequence, limit)?;
        detached_json(py, || self.core().read_from(sequence, limit, run_id.as_deref()))
    }

    /// A follow cursor after `after` (0: from the oldest retained subscriber), up to
    /// `limit` subscribers a step, pinned to `run_id` or to the run its first step reads.
    #[pyo3(signature = (after, limit, *, run_id = None))]
    fn follow(
        &self,
        py: Python<'_>,
        after: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        run_id: Option<Text>,
    ) -> PyResult<NativeFollowCursor> {
        NativeFollowCursor::open(py, self.0.clone(), Followed::Archive, (after, limit), run_id)
    }

    /// Makes the archive's log verifiable (idempotent); returns its tree head as JSON.
    fn make_verifiable(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| tree_head_json(self.core().make_verifiable()))
            .into_py_result(py)
    }

    /// The tree head as JSON: `{"treeSize", "rootHash"}`.
    fn tree_head(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| tree_head_json(self.core().tree_head()))
            .into_py_result(py)
    }

    /// The newest tree head as a signed C2SP checkpoint, signed with the signer key `key`
    /// (text or bytes; not kept); `origin` defaults to `attrflow/<flow>/subscribers`.
    #[pyo3(signature = (key, origin = None))]
    fn checkpoint(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        origin: Option<Text>,
    ) -> PyResult<String> {
        let signer = signer(py, key)?;
        py.detach(|| self.core().checkpoint(&signer, origin.as_deref()))
            .into_py_result(py)
    }

    /// The inclusion proof of subscriber `sequence` in the tree of `tree_size` records (the
    /// newest when `None`), as JSON.
    #[pyo3(signature = (sequence, tree_size = None))]
    fn inclusion_proof(
        &self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        tree_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let sequence = unsigned(sequence, |shown| out_of_range("sequence", shown))?;
        let tree_size = optional_unsigned(tree_size, |shown| size_out_of_range("treeSize", shown))?;
        py.detach(|| inclusion_json(self.core().inclusion_proof(sequence, tree_size)))
            .into_py_result(py)
    }

    /// The consistency proof between tree sizes `from_` and `to`, as JSON.
    #[pyo3(signature = (from_, to))]
    fn consistency_proof(
        &self,
        py: Python<'_>,
        from_: &Bound<'_, PyAny>,
        to: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let from = unsigned(from_, |shown| size_out_of_range("from", shown))?;
        let to = unsigned(to, |shown| size_out_of_range("to", shown))?;
        py.detach(|| consistency_json(self.core().consistency_proof(from, to)))
            .into_py_result(py)
    }
});
