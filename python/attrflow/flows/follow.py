"""The follow cursor: every record of one chunked log (the subscriber archive, one log of an
app log) delivered once, oldest first, as it is appended.

A :class:`FollowCursor` is the Rust core's cursor (``attrflow::flows::follow``), opened by
``SubscriberArchive.follow_cursor`` or ``AppLog.follow_cursor``; the rules of where it
resumes live there, once, for every front end:

- each step reads after the last record it delivered, so nothing comes twice, across chunk
  boundaries, chunk-size changes and trims;
- opened from the start (``after=0``), it begins at the oldest retained record of a trimmed
  log; once it has a position it never skips: a step whose next record was trimmed raises
  ``PageTrimmedError`` (naming the oldest retained sequence) and the cursor stays put;
- its first step pins it to the run it read (or the ``run_id`` it was opened with); a log
  started again since raises ``RunNotCurrentError``.

``async for record in cursor`` steps forever, waiting :data:`FOLLOW_WAIT_SECONDS` at a time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Generic, TypeVar

from attrflow import _native, codec
from attrflow.async_client import _submit

__all__ = ["FOLLOW_WAIT_SECONDS", "FollowCursor"]

FOLLOW_WAIT_SECONDS = 1.0
"""How long each wait of an ``async for`` over a cursor lasts: how long its worker thread
may go on waiting after the iteration was cancelled."""

R = TypeVar("R")


class FollowCursor(Generic[R]):
    """Where a follower of one log stands; each step delivers the records after it, as
    ``record_type`` (the log's entry type)."""

    def __init__(self, native: _native.FollowCursor, record_type: type[R]) -> None:
        self._native = native
        self._records_type = list[record_type]  # type: ignore[valid-type]

    @property
    def after(self) -> int:
        """The sequence of the last record delivered (or the ``after`` it was opened with)."""
        return self._native.after

    @property
    def run_id(self) -> str | None:
        """The run the cursor follows, once its first step pinned it (or it was opened so)."""
        return self._native.run_id

    @property
    def limit(self) -> int:
        """The most records one step delivers."""
        return self._native.limit

    def step(self, timeout: float = _native.MAX_TAIL_TIMEOUT_SECONDS) -> list[R]:
        """Waits (blocking) up to ``timeout`` seconds for records after the cursor and
        returns them, oldest first (none on timeout), moving the cursor after them."""
        return self._decode(self._native.next(timeout))

    async def step_async(self, timeout: float = FOLLOW_WAIT_SECONDS) -> list[R]:
        """:meth:`step`, awaited: the wait runs on a worker thread of the native module.

        A cursor takes one step at a time (another raises ``InvalidInputError``). A step
        whose await is cancelled still moves the cursor when its wait ends, past records
        nobody received: after a cancellation, open a new cursor after the last record seen.
        """
        output: str = await _submit(self._native.next, timeout)
        return self._decode(output)

    def __aiter__(self) -> AsyncIterator[R]:
        return self._forever()

    async def _forever(self) -> AsyncIterator[R]:
        while True:
            for record in await self.step_async(FOLLOW_WAIT_SECONDS):
                yield record

    def _decode(self, output: str) -> list[R]:
        records: list[R] = codec.from_json(output, self._records_type, what="followed records")
        return records

    def __repr__(self) -> str:
        return repr(self._native)
