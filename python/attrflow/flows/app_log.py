"""``ChunkedLogFlow``: the app log, many named append-only logs of JSON records in one flow.

Each log is kept by the rules of the sequentially chunked AttributeMap: an open ``current``
chunk of at most :data:`LOG_CHUNK_SIZE` entries plus immutable archived chunks named by
their first sequence (20 digits), read newest first one page at a time. The RPCs run in
the Rust core, so a store written here reads the same from Rust, Kotlin and Swift.

::

    flow = ChunkedLogFlow()
    await client.start_flow(flow, "my-app", options=StartFlowOptions(ignore_already_started=True))
    entry = await client.invoke_rpc(
        flow.append_log_record,
        "my-app",
        AppendLogRecordInput("audit", {"event": "login"}),
    )
    page = await client.invoke_rpc(
        flow.get_log_page,
        "my-app",
        GetLogPageInput("audit", page_token),
    )

Every call is planned by the core from its input (the log's state and chunks to lock and
load), so none needs options; :meth:`ChunkedLogFlow.append_options` and its siblings only
check their arguments and return no options of their own.

An append locks only its own log's state and ``current`` chunk: concurrent appends to one
log may raise ``RpcLockConflictError`` (retry), appends to different logs never conflict.

Batch and idempotent appends follow the subscriber archive's rules, per log:
``AppendLogRecords`` (:attr:`ChunkedLogFlow.append_log_records`) appends 1 to 1000 records
in one transaction, optionally under an idempotency key; ``AppendLogRecordOnce``
(:attr:`ChunkedLogFlow.append_log_record_once`) appends one record under a required key. A
retry with the same key and payload returns the first call's entries; the same key with
another payload raises ``InvalidInputError``.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Optional

from attrflow import _native, codec
from attrflow.async_client import _submit
from attrflow.attribute import AttributeMap
from attrflow.flow import Flow, core_rpc
from attrflow.flows.chunked_subscriber import (
    MAX_TAIL_TIMEOUT_SECONDS,
    ChunkLayout,
    IdempotencyWindow,
    Retention,
    RetentionChange,
    TrimOutcome,
)
from attrflow.flows.follow import FollowCursor
from attrflow.options import RPCInvokeOptions
from attrflow.retry import RetryPolicy
from attrflow.verifiable import (
    ConsistencyProof,
    InclusionProof,
    TreeHead,
    consistency_proof_from_json,
    inclusion_proof_from_json,
    tree_head_from_json,
)

if TYPE_CHECKING:
    from attrflow.client import Client

__all__ = [
    "APPEND_LOG_RECORD",
    "APPEND_LOG_RECORDS",
    "APPEND_LOG_RECORD_ONCE",
    "FLOW_TYPE",
    "GET_LOG_PAGE",
    "LOG_CHUNKS_MAP",
    "LOG_CHUNK_SIZE",
    "LOG_STATES_MAP",
    "AppLog",
    "AppendLogRecordInput",
    "AppendLogRecordOnceInput",
    "AppendLogRecordsInput",
    "AppendedLogEntries",
    "ChunkedLogFlow",
    "GetLogPageInput",
    "LogChunk",
    "LogEntriesFrom",
    "LogEntry",
    "LogPage",
    "LogState",
    "page_chunk_key",
]

FLOW_TYPE: str = _native.APP_LOG_FLOW_TYPE
"""The flow type, ``ChunkedLogFlow``."""
LOG_STATES_MAP: str = _native.APP_LOG_STATES_MAP
"""The AttributeMap of log states, one instance a log."""
LOG_CHUNKS_MAP: str = _native.APP_LOG_CHUNKS_MAP
"""The AttributeMap of chunks, instances ``<log>.current`` and ``<log>.<archive token>``."""
APPEND_LOG_RECORD: str = _native.APP_LOG_APPEND_LOG_RECORD
"""The appending RPC's name."""
GET_LOG_PAGE: str = _native.APP_LOG_GET_LOG_PAGE
"""The paging RPC's name."""
APPEND_LOG_RECORDS: str = _native.APP_LOG_APPEND_LOG_RECORDS
"""The batch-appending RPC's name."""
APPEND_LOG_RECORD_ONCE: str = _native.APP_LOG_APPEND_LOG_RECORD_ONCE
"""The idempotent appending RPC's name."""
LOG_CHUNK_SIZE: int = _native.APP_LOG_CHUNK_SIZE
"""Entries per chunk; part of the stored layout."""


@dataclass
class LogEntry:
    """One record of a log; ``sequence`` counts from 1 without gaps."""

    # Pages hold a hundred at a time: slots make each cheaper to build, free and keep.
    __slots__ = ("record", "sequence")

    sequence: int
    record: Any


@dataclass
class LogChunk:
    """One chunk of a log, oldest entry first."""

    entries: list[LogEntry]


@dataclass
class LogState:
    """A log's bookkeeping: the next sequence, the newest archived chunk's token, and (not
    stored while they are the defaults) the layout history and the idempotency window."""

    next_sequence: int
    latest_archived_chunk_token: str = ""
    oldest_sequence: int = 1
    layouts: list[ChunkLayout] = field(default_factory=list)
    retention: Optional[Retention] = None  # noqa: UP045 - Python 3.9
    idempotency_window: Optional[IdempotencyWindow] = None  # noqa: UP045 - Python 3.9


@dataclass
class LogEntriesFrom:
    """A read forward of one log: entries oldest first from the start, the sequence to read
    from next (the start again when there were none) and the logs flow's run read, in which
    those sequences count."""

    log: str
    entries: list[LogEntry]
    next_sequence: int
    run_id: str


@dataclass
class AppendLogRecordInput:
    """Input of ``AppendLogRecord``: the log's name and any JSON value but ``None``."""

    log: str
    record: Any


@dataclass
class AppendLogRecordsInput:
    """Input of ``AppendLogRecords``: the log's name, 1 to 1000 records (none ``None``) in
    the order they get their sequences, and an optional idempotency key (``""`` for none)."""

    log: str
    records: list[Any]
    idempotency_key: str = ""


@dataclass
class AppendedLogEntries:
    """Output of ``AppendLogRecords``: the entries with their sequences, in the batch's
    order."""

    entries: list[LogEntry]


@dataclass
class AppendLogRecordOnceInput:
    """Input of ``AppendLogRecordOnce``: the log's name, the idempotency key and the
    record."""

    log: str
    idempotency_key: str
    record: Any


@dataclass
class GetLogPageInput:
    """Input of ``GetLogPage``: ``""`` or ``current`` for the newest page, else a token."""

    log: str
    page_token: str = ""


@dataclass
class LogPage:
    """One page of a log, newest entry first, with the next older page's token (``""``
    when there is none)."""

    log: str
    page_token: str
    entries: list[LogEntry]
    next_page_token: str = ""


def page_chunk_key(log: str, page_token: str) -> str:
    """The chunk instance key holding ``log``'s page ``page_token``.

    >>> page_chunk_key("audit", "")
    'audit.current'
    """
    return _native.app_log_page_chunk_key(log, page_token)


class ChunkedLogFlow(Flow[None]):
    """The app log: an RPC-only flow holding any number of named logs."""

    flow_type = FLOW_TYPE

    log_states = AttributeMap(LOG_STATES_MAP, LogState)
    """The logs' states (``log_states``), by log name."""
    log_chunks = AttributeMap(LOG_CHUNKS_MAP, LogChunk)
    """The logs' chunks (``log_chunks``), by ``<log>.<page token>``."""

    append_log_record = core_rpc(APPEND_LOG_RECORD, AppendLogRecordInput, LogEntry)
    """Appends a record and returns its entry."""
    get_log_page = core_rpc(GET_LOG_PAGE, GetLogPageInput, LogPage)
    """Reads one page."""
    append_log_records = core_rpc(APPEND_LOG_RECORDS, AppendLogRecordsInput, AppendedLogEntries)
    """Appends a batch and returns its entries."""
    append_log_record_once = core_rpc(APPEND_LOG_RECORD_ONCE, AppendLogRecordOnceInput, LogEntry)
    """Appends a record under an idempotency key."""

    def append_options(self, log: str) -> RPCInvokeOptions:
        """Options of an append to ``log``, after checking its name: none of their own, since
        the core plans every app-log call's locks and loads from its input (calling without
        options is the same). Raises ``InvalidInputError`` for a bad log name."""
        page_chunk_key(log, "")
        return RPCInvokeOptions()

    def idempotent_append_options(self, log: str) -> RPCInvokeOptions:
        """As :meth:`append_options`: a keyed append is planned by the core too."""
        return self.append_options(log)

    def page_options(self, log: str, page_token: str) -> RPCInvokeOptions:
        """Options of a read of ``log``'s page ``page_token``, after checking both (the core
        plans the read's loads); raises ``InvalidPageTokenError`` for a malformed token."""
        page_chunk_key(log, page_token)
        return RPCInvokeOptions()


class AppLog:
    """The core's typed app-log client for the flow ``flow_id`` of ``client``'s store.

    Exactly the core client's operations, per named log: appends (one, a batch, once under
    an idempotency key), pages, reads forward, tails and a follow cursor, trim and
    retention, and the verifiable log's tree head, checkpoints and proofs. The core builds
    each call's input and locks and loads, checks names and tokens, and retries every
    call's lock conflicts by ``retry`` (the core's default
    :class:`~attrflow.retry.RetryPolicy` when None; ``RetryPolicy(max_attempts=1)`` calls
    once). Its calls block; run them off an event loop (``asyncio.to_thread``), or use the
    ``*_async`` and ``follow`` ones.
    """

    def __init__(self, client: Client, flow_id: str, retry: RetryPolicy | None = None) -> None:
        # The core's client calls the built-in flow type, registered on first use like any
        # flow's (an application's own flow type of that name is refused here, by name).
        client.register_flow(ChunkedLogFlow())
        self._native = _native.AppLog(client._runtime, flow_id, retry)

    def start(self) -> str:
        """Starts the app log, or returns the running one's run ID. A stopped one is
        not started again (a new run would hold none of its values): that raises
        ``FlowStoppedError`` saying how it was stopped."""
        return self._native.start()

    def append(self, log: str, record: Any) -> LogEntry:
        """Appends ``record`` (any JSON value but None) to ``log``; returns its entry."""
        output = self._native.append(log, _record_json(log, record))
        return codec.from_json(output, LogEntry, what="appended log entry")

    def append_with_retry(self, log: str, record: Any) -> LogEntry:
        """Deprecated: :meth:`append`, which retries lock conflicts by the client's policy."""
        warnings.warn(
            "AppLog.append_with_retry is deprecated: append retries by the client's policy",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.append(log, record)

    def append_batch(
        self, log: str, records: Sequence[Any], idempotency_key: str | None = None
    ) -> list[LogEntry]:
        """Appends ``records`` (1 to ``MAX_BATCH_SIZE``, none None) to ``log`` in one
        transaction, in order; returns their entries. With ``idempotency_key``, a retry of
        the same batch returns the first call's entries and appends nothing; the same key
        with other records raises ``InvalidInputError``."""
        records_json = codec.to_json(list(records), list[Any], what=f"records of log {log!r}")
        output = self._native.append_batch(log, records_json, idempotency_key)
        return codec.from_json(output, list[LogEntry], what="appended log entries")

    def append_once(self, log: str, idempotency_key: str, record: Any) -> LogEntry:
        """Appends ``record`` to ``log`` under ``idempotency_key``: a retry with the same key
        and record returns the first call's entry (same sequence) instead of appending."""
        output = self._native.append_once(log, idempotency_key, _record_json(log, record))
        return codec.from_json(output, LogEntry, what="appended log entry")

    def page(self, log: str, page_token: str = "") -> LogPage:
        """Reads one page of ``log``: ``""`` or ``current`` for the newest. A token of a
        trimmed chunk raises ``PageTrimmedError``."""
        return codec.from_json(self._native.page(log, page_token), LogPage, what="log page")

    def trim(
        self, log: str, *, keep_newest: int | None = None, drop_before: int | None = None
    ) -> TrimOutcome:
        """Drops whole archived chunks of ``log``, oldest first; the rules of
        :meth:`attrflow.flows.chunked_subscriber.SubscriberArchive.trim`."""
        output = self._native.trim(log, keep_newest, drop_before)
        return codec.from_json(output, TrimOutcome, what="trim outcome")

    def set_retention(self, log: str, keep_newest: int | None) -> RetentionChange:
        """Makes every append to ``log`` keep at least its newest ``keep_newest`` entries
        (whole chunks), and applies it at once; ``None`` keeps every entry again."""
        output = self._native.set_retention(log, keep_newest)
        return codec.from_json(output, RetentionChange, what="retention change")

    def read_from(
        self, log: str, sequence: int, limit: int, *, run_id: str | None = None
    ) -> LogEntriesFrom:
        """Up to ``limit`` entries of ``log`` from ``sequence`` on, oldest first. A trimmed
        ``sequence`` raises ``PageTrimmedError``; with ``run_id``, logs in another run raise
        ``RunNotCurrentError``."""
        output = self._native.read_from(log, sequence, limit, run_id=run_id)
        return codec.from_json(output, LogEntriesFrom, what="log entries")

    def tail(
        self,
        log: str,
        after: int,
        limit: int = 100,
        timeout: float = MAX_TAIL_TIMEOUT_SECONDS,
        *,
        run_id: str | None = None,
    ) -> LogEntriesFrom:
        """Waits up to ``timeout`` seconds for entries of ``log`` after ``after`` and returns
        up to ``limit`` of them, oldest first; the rules of
        :meth:`attrflow.flows.chunked_subscriber.SubscriberArchive.tail`."""
        output = self._native.tail(log, after, limit, timeout, run_id=run_id)
        return codec.from_json(output, LogEntriesFrom, what="log entries")

    async def tail_async(
        self,
        log: str,
        after: int,
        limit: int = 100,
        timeout: float = MAX_TAIL_TIMEOUT_SECONDS,
        *,
        run_id: str | None = None,
    ) -> LogEntriesFrom:
        """:meth:`tail`, awaited on a worker thread of the native module."""
        tail = partial(self._native.tail, run_id=run_id)
        output: str = await _submit(tail, log, after, limit, timeout)
        return codec.from_json(output, LogEntriesFrom, what="log entries")

    def follow_cursor(
        self, log: str, after: int = 0, limit: int = 100, *, run_id: str | None = None
    ) -> FollowCursor[LogEntry]:
        """The core's follow cursor of ``log`` after ``after`` (0: from its oldest retained
        entry), up to ``limit`` entries a step, in the run ``run_id`` or else the run its
        first step reads (see :mod:`attrflow.flows.follow`)."""
        return FollowCursor(self._native.follow(log, after, limit, run_id=run_id), LogEntry)

    def follow(
        self, log: str, after: int = 0, limit: int = 100, *, run_id: str | None = None
    ) -> AsyncIterator[LogEntry]:
        """Every entry of ``log`` after ``after``, oldest first, as it is appended, forever:
        ``async for`` over :meth:`follow_cursor`. Logs started again meanwhile raise
        ``RunNotCurrentError``."""
        return self.follow_cursor(log, after, limit, run_id=run_id).__aiter__()

    def make_verifiable(self, log: str) -> TreeHead:
        """Makes ``log`` verifiable (idempotent; the tree covers every entry from sequence 1)
        and returns its tree head."""
        return tree_head_from_json(self._native.make_verifiable(log))

    def tree_head(self, log: str) -> TreeHead:
        """The tree head of ``log``: its entry count and RFC 6962 root hash."""
        return tree_head_from_json(self._native.tree_head(log))

    def checkpoint(self, log: str, key: str | bytes, origin: str | None = None) -> str:
        """The newest tree head of ``log`` as a C2SP checkpoint, a signed note signed with
        the signer key ``key`` (its text, or the bytes of a key file; used for this call
        only, never stored); ``origin`` defaults to ``attrflow/<flow ID>/<log>``."""
        return self._native.checkpoint(log, key, origin)

    def inclusion_proof(
        self, log: str, sequence: int, tree_size: int | None = None
    ) -> InclusionProof:
        """The inclusion proof of entry ``sequence`` of ``log`` in the tree of ``tree_size``
        entries (the newest when None)."""
        return inclusion_proof_from_json(self._native.inclusion_proof(log, sequence, tree_size))

    def consistency_proof(self, log: str, from_: int, to: int) -> ConsistencyProof:
        """The consistency proof of ``log`` between tree sizes ``from_`` and ``to``."""
        return consistency_proof_from_json(self._native.consistency_proof(log, from_, to))


def _record_json(log: str, record: Any) -> str:
    """``record`` of ``log`` as JSON text."""
    return codec.to_json(record, Any, what=f"record of log {log!r}")
