"""``AttrflowSession``: an OpenAI Agents SDK ``Session`` kept in one chunked log.

Install with ``pip install 'attrflow[openai-agents]'``; then hand a session to the runner::

    session = AttrflowSession("conversation-42", store="data/attrflow.db")
    result = await Runner.run(agent, "Hello", session=session)

A session is the app log flow (:class:`~attrflow.flows.app_log.ChunkedLogFlow`) whose flow
ID is the session ID, and its log :data:`SESSION_LOG`. The log only grows: each record is
one of

- ``{"item": <item>}``: an item the SDK added, exactly as given;
- ``{"removed": <sequence>, "pop": <nonce>}``: :meth:`AttrflowSession.pop_item` removed the
  item of that sequence (the nonce tells two racing pops apart);
- ``{"cleared": true}``: :meth:`AttrflowSession.clear_session` removed every earlier item.

A reader pages the log newest first and applies the removals and the newest clear as it
goes, so a page (``attrflow page``) or an export (``attrflow export``) shows each item and
what removed it, and archived chunks are never rewritten. docs/agents.md tells why.

A record's size limit follows its log's chunk size (the core's rule: a full chunk must fit
in one stored value), so a session asks the core for the largest chunk size that takes
items of ``max_item_bytes`` (:data:`DEFAULT_MAX_ITEM_BYTES`, 128 kB: chunks of 8 items).
Smaller chunks take larger items but make ``get_items(20)`` read more pages (3 or 4 of 8
items, against 1 or 2 of 100); 128 kB takes a long tool output or answer whole.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import Any, cast

from agents.memory import SessionABC, SessionSettings

from attrflow import _native
from attrflow.async_client import AsyncClient
from attrflow.client import DEFAULT_STORE
from attrflow.errors import InvalidInputError, RpcLockConflictError
from attrflow.flow import BoundRpc, RpcDefinition
from attrflow.flows.app_log import (
    AppendLogRecordOnceInput,
    AppendLogRecordsInput,
    AppLog,
    ChunkedLogFlow,
    GetLogPageInput,
    LogEntry,
)
from attrflow.options import StartFlowOptions
from attrflow.retry import RetryPolicy

__all__ = [
    "DEFAULT_MAX_ITEM_BYTES",
    "SESSION_LOG",
    "AttrflowSession",
    "InvalidSessionIdError",
    "ItemTooLargeError",
]

SESSION_LOG = "items"
"""The name of the log holding a session's records, in the flow named by the session ID."""

DEFAULT_MAX_ITEM_BYTES = 128_000
"""The largest item (compact JSON bytes, UTF-8) a session takes unless told otherwise."""

_ITEM_RECORD_OVERHEAD = len('{"item":}')
"""What the ``{"item": …}`` record adds to an item."""

_PART_BYTES = 1_000_000
"""The most item bytes a batch re-sent in parts holds: within the core's RPC input limit
(1 MiB, ``attrflow::limits::MAX_RPC_INPUT_BYTES``) with room for the call's own JSON."""


def _json_bytes(item: Any) -> int | None:
    """The size of ``item`` as compact UTF-8 JSON, None when it is no JSON."""
    try:
        return len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        return None


_BATCH_ITEMS: int = _native.MAX_CHUNK_SIZE
"""Items appended in one transaction. The core sizes a chunk so that this many records of
the largest size fit in one stored value, which is also the most one call may send, so a
batch of this many always fits; each of an ``add_items`` call's batches is contiguous."""


@dataclass
class _ChangeLogChunkSizeInput:
    """Input of the core's ``ChangeLogChunkSize``: the log, and the record size it must take
    (the core picks the largest chunk size that takes it)."""

    log: str
    max_record_bytes: int


@dataclass
class _LogChunkSizeChange:
    """Output of ``ChangeLogChunkSize``: the chunk size and the largest entry it takes."""

    log: str
    chunk_size: int
    record_limit: int
    from_sequence: int
    layouts: list[Any]


_FLOW = ChunkedLogFlow()
# The core's app-log RPC that sizes a log's chunks for its records, bound to the app log
# flow (the Python app-log wrapper does not declare it yet).
_CHANGE_LOG_CHUNK_SIZE: BoundRpc[_ChangeLogChunkSizeInput, _LogChunkSizeChange] = BoundRpc(
    _FLOW,
    RpcDefinition("ChangeLogChunkSize", _ChangeLogChunkSizeInput, _LogChunkSizeChange),
    "change_log_chunk_size",
)
_START = StartFlowOptions(ignore_already_started=True)
_APPEND = _FLOW.append_options(SESSION_LOG)
_APPEND_ONCE = _FLOW.idempotent_append_options(SESSION_LOG)


class ItemTooLargeError(InvalidInputError):
    """An item larger than its session takes: ``index`` is its place in the ``add_items``
    call, ``size`` its compact JSON bytes, ``limit`` the most the session takes."""

    index: int
    size: int
    limit: int

    def __init__(self, message: str, index: int, size: int, limit: int) -> None:
        super().__init__(message)
        self.index, self.size, self.limit = index, size, limit


class InvalidSessionIdError(InvalidInputError):
    """A session ID that is not a valid flow ID (empty, over 256 bytes, or holding ``/``,
    ``$``, ``:`` or a control character). ``session_id`` is the ID refused."""

    session_id: str

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


@dataclass
class _Live:
    """A session's readable items, newest first, with their sequences: what a read of
    the log finds once the removals and the newest clear are applied."""

    items: list[LogEntry]


class AttrflowSession(SessionABC):
    """An OpenAI Agents SDK session whose items live in attrflow's chunked log.

    ``AttrflowSession(session_id, store=...)`` opens ``store`` (an SQLite file or a
    ``postgresql://`` URL) and owns it: :meth:`close` it, or use ``async with``.
    ``AttrflowSession(session_id, client=...)`` borrows an open
    :class:`~attrflow.AsyncClient` and leaves it open. Many sessions share one store, each
    its own flow. Lock conflicts between writers of one session are retried by ``retry``
    (the core's default :class:`~attrflow.retry.RetryPolicy` when None).

    ``max_item_bytes`` is the largest item (compact JSON, UTF-8 bytes) the session must
    take, 1 to about 1 MiB: the core sizes the session log's chunks for it (from the next
    chunk boundary of a log that already holds items), so every item up to it is taken. An
    item the log cannot take (over ``max_item_bytes``, and over the core's limit for the
    chunk size, which is a little more) raises :class:`ItemTooLargeError` and its batch
    stores nothing.

    A session ID that is not a valid flow ID raises :class:`InvalidSessionIdError`.
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        store: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        client: AsyncClient | None = None,
        session_settings: SessionSettings | None = None,
        retry: RetryPolicy | None = None,
        max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES,
    ) -> None:
        if isinstance(max_item_bytes, bool) or not isinstance(max_item_bytes, int):
            raise InvalidInputError(f"max_item_bytes must be an int, not {max_item_bytes!r}")
        if max_item_bytes < 1:
            raise InvalidInputError(f"max_item_bytes must be at least 1, got {max_item_bytes}")
        try:
            _native.validate_flow_id(session_id)
        except InvalidInputError as error:
            raise InvalidSessionIdError(
                f"session ID {session_id!r} is not a valid flow ID: {error}", session_id
            ) from None
        self.session_id = session_id
        self.session_settings = session_settings
        self._owns_client = client is None
        self._client = AsyncClient(store) if client is None else client
        self._retry = RetryPolicy() if retry is None else retry
        self._max_item_bytes = max_item_bytes
        self._started = False

    @property
    def max_item_bytes(self) -> int:
        """The largest item, compact JSON bytes, the session takes."""
        return self._max_item_bytes

    @property
    def client(self) -> AsyncClient:
        """The attrflow client the session reads and writes through."""
        return self._client

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The newest ``limit`` items (``session_settings.limit`` when None; every item
        when both are None), oldest first. Reads newest first only the chunks that hold
        them."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and limit == 0:
            return []
        # A negative limit means no limit, as in the SDK's SQLiteSession.
        wanted = limit if limit is not None and limit > 0 else None
        live = await self._read_live(wanted)
        return [cast(dict[str, Any], entry.record)["item"] for entry in reversed(live.items)]

    async def add_items(self, items: list[Any]) -> None:
        """Appends ``items`` in order, each batch of up to :data:`_BATCH_ITEMS` in one
        transaction (so contiguous, whatever other writers do). An item that is not JSON
        raises ``ValueMappingError``, one the log cannot take (over :attr:`max_item_bytes`)
        raises :class:`ItemTooLargeError` naming its place, size and the limit; its batch
        stores nothing."""
        if not items:
            await self._ensure_started()
            return
        records = [{"item": item} for item in items]
        await self._ensure_started()
        for start in range(0, len(records), _BATCH_ITEMS):
            await self._append(items, start, records[start : start + _BATCH_ITEMS])

    async def _append(self, items: list[Any], start: int, records: list[Any]) -> None:
        """Appends ``records`` (those of ``items[start:]``) in one transaction. When the
        core refuses them, measures them (only a refused batch is encoded here): an item
        over :attr:`max_item_bytes` raises :class:`ItemTooLargeError`; a batch of large
        items over the core's RPC input limit is sent again in parts within it."""
        batch = AppendLogRecordsInput(SESSION_LOG, records)
        try:
            await self._with_retry(
                lambda: self._client.invoke_rpc(
                    _FLOW.append_log_records, self.session_id, batch, options=_APPEND
                )
            )
        except InvalidInputError as error:
            sizes = [_json_bytes(record["item"]) for record in records]
            for offset, size in enumerate(sizes):
                if size is not None and size > self._max_item_bytes:
                    raise self._too_large(start + offset, size) from error
            known = [size for size in sizes if size is not None]
            if len(known) < len(sizes) or len(sizes) == 1 or sum(known) <= _PART_BYTES:
                raise
            part_start, part_bytes = 0, 0
            for offset, size in enumerate(known):
                if offset > part_start and part_bytes + size > _PART_BYTES:
                    await self._append(items, start + part_start, records[part_start:offset])
                    part_start, part_bytes = offset, 0
                part_bytes += size + _ITEM_RECORD_OVERHEAD
            await self._append(items, start + part_start, records[part_start:])

    def _too_large(self, index: int, size: int) -> ItemTooLargeError:
        return ItemTooLargeError(
            f"item {index} of session {self.session_id!r} is {size} bytes as JSON; the "
            f"session takes items of up to {self._max_item_bytes} bytes "
            "(AttrflowSession(max_item_bytes=...) takes larger ones, up to about 1 MiB)",
            index,
            size,
            self._max_item_bytes,
        )

    async def pop_item(self) -> Any | None:
        """Removes and returns the newest item (``None`` when there is none) by appending
        a removal record; archived chunks are never rewritten. Two racing pops remove two
        items: the removal of one sequence is keyed by it, so only one call can make it."""
        await self._ensure_started()
        while True:
            live = await self._read_live(1)
            if not live.items:
                return None
            newest = live.items[0]
            removal = AppendLogRecordOnceInput(
                SESSION_LOG,
                f"pop-{newest.sequence}",
                {"removed": newest.sequence, "pop": uuid.uuid4().hex},
            )
            try:
                await self._with_retry(
                    lambda removal=removal: self._client.invoke_rpc(
                        _FLOW.append_log_record_once,
                        self.session_id,
                        removal,
                        options=_APPEND_ONCE,
                    )
                )
            except InvalidInputError:
                # The key taken with another payload: a racing pop removed this item first,
                # and its removal may still be committing in the same group. Read again
                # (pausing by the retry policy) until it shows; an item still readable once
                # the policy gives up means some other refusal, which is raised.
                await self._await_removal(newest.sequence)
                continue
            return cast(dict[str, Any], newest.record)["item"]

    async def clear_session(self) -> None:
        """Leaves no item readable: appends a clear record, then drops the archived chunks
        wholly before it, so their storage is reclaimed. The session stays usable."""
        await self._ensure_started()
        cleared = await self._with_retry(
            lambda: self._client.invoke_rpc(
                _FLOW.append_log_records,
                self.session_id,
                AppendLogRecordsInput(SESSION_LOG, [{"cleared": True}]),
                options=_APPEND,
            )
        )
        marker = cleared.entries[0].sequence
        current = await self._page("")
        # A trim may not reach into the open chunk: stop at its first record if the clear
        # record is in it.
        drop_before = min(marker, current.entries[-1].sequence) if current.entries else marker
        if drop_before > 1:
            # The AsyncClient has no trim of its own yet: the core's app log client trims
            # on a worker thread, retrying lock conflicts by the session's policy.
            app_log = AppLog(self._client._client, self.session_id, self._retry)
            await asyncio.to_thread(app_log.trim, SESSION_LOG, drop_before=drop_before)

    def close(self) -> None:
        """Closes the store if the session opened it; a borrowed client stays open."""
        if self._owns_client:
            self._client.close()

    async def __aenter__(self) -> AttrflowSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AttrflowSession {self.session_id!r} on {self._client.store!r}>"

    async def _ensure_started(self) -> None:
        if not self._started:
            await self._client.start_flow(_FLOW, self.session_id, options=_START)
            # Writes nothing once the log's chunks already have the size asked for.
            await self._with_retry(
                lambda: self._client.invoke_rpc(
                    _CHANGE_LOG_CHUNK_SIZE,
                    self.session_id,
                    _ChangeLogChunkSizeInput(
                        SESSION_LOG, self._max_item_bytes + _ITEM_RECORD_OVERHEAD
                    ),
                    options=_APPEND,
                )
            )
            self._started = True

    async def _page(self, token: str) -> Any:
        return await self._client.invoke_rpc(
            _FLOW.get_log_page,
            self.session_id,
            GetLogPageInput(SESSION_LOG, token),
            options=_FLOW.page_options(SESSION_LOG, token),
        )

    async def _read_live(self, limit: int | None) -> _Live:
        """The newest ``limit`` (all when None) readable items, newest first, reading
        pages newest first until it has them or meets the session's beginning. A removal
        record always follows the item it removes, so it is met first."""
        await self._ensure_started()
        items: list[LogEntry] = []
        removed: set[int] = set()
        token = ""
        while True:
            page = await self._page(token)
            for entry in page.entries:
                record = entry.record
                if not isinstance(record, dict):
                    continue  # not a session record: written to this log by something else
                if "item" in record:
                    if entry.sequence in removed:
                        removed.discard(entry.sequence)
                        continue
                    items.append(entry)
                    if limit is not None and len(items) >= limit:
                        return _Live(items)
                elif "removed" in record:
                    removed.add(record["removed"])
                elif "cleared" in record:
                    return _Live(items)
            if not page.next_page_token:
                return _Live(items)
            token = page.next_page_token

    async def _await_removal(self, sequence: int) -> None:
        """Returns once the newest readable item is no longer ``sequence``; raises the
        error being handled if it still is when the retry policy gives up."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        retry = 0
        while True:
            again = await self._read_live(1)
            if not again.items or again.items[0].sequence != sequence:
                return
            pause = self._retry.pause_before(retry, loop.time() - start)
            if pause is None:
                raise
            await asyncio.sleep(pause)
            retry += 1

    async def _with_retry(self, call: Any) -> Any:
        """``call()``, called again after each lock conflict while the retry policy
        allows; its last conflict is raised once the policy gives up."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        retry = 0
        while True:
            try:
                return await call()
            except RpcLockConflictError:
                pause = self._retry.pause_before(retry, loop.time() - start)
                if pause is None:
                    raise
            await asyncio.sleep(pause)
            retry += 1
