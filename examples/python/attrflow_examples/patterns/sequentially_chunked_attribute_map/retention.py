"""Retention and reading forward for the archive's HTTP routes.

``POST /trim`` drops whole archived chunks, oldest first: ``{"keepNewest": n}`` keeps at
least the newest ``n`` subscribers, ``{"dropBefore": s}`` drops the chunks wholly before
sequence ``s``. ``PUT /retention`` (``{"keepNewest": n}``, or ``{"keepNewest": null}`` to
keep everything) makes every registration apply ``keepNewest``. ``GET
/subscribers?after=N&limit=L`` returns up to ``L`` (default :data:`DEFAULT_READ_LIMIT`)
subscribers with sequences after ``N``, oldest first, and the ``nextAfter`` to ask with
next; with ``&wait=S`` it is a long poll: when there is nothing after ``N`` yet it waits up
to ``S`` seconds (at most 60) for the next registration, and answers an empty list if none
came. ``GET /subscribers/stream?after=N`` sends the subscribers after ``N`` as Server-Sent
Events, each with its sequence as the event ID, and keeps sending new ones as they are
registered; a reconnecting client's ``Last-Event-ID`` header takes the place of ``after``,
so it resumes without a gap or a repeat. A trimmed page token or ``after`` is answered
410 Gone with the oldest retained page token and sequence in the body (see
:mod:`attrflow_examples.http_errors`).

Every rule (what a trim drops, the limits, the typed errors) is the core's; this module
only reads the request and calls the core's client off the event loop.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

from attrflow import AttrflowError, PageTrimmedError
from attrflow.flows.chunked_subscriber import FLOW_ID, Subscriber, SubscriberArchive
from werkzeug.exceptions import BadRequest

from attrflow_examples.app_state import AppState

DEFAULT_READ_LIMIT = 100
"""How many subscribers ``GET /subscribers?after=`` returns when ``limit`` is not given."""

STREAM_WAIT_SECONDS = 15.0
"""How long the event stream waits for a registration before it sends a comment line,
which keeps proxies from closing an idle connection."""

STREAM_BATCH = 100
"""The most subscribers the event stream reads at a time."""

LAST_EVENT_ID_HEADER = "Last-Event-ID"


def archive_client(app_state: AppState) -> SubscriberArchive:
    """The core's client of the archive, retrying lock conflicts by the service's policy."""
    return SubscriberArchive(app_state.client, FLOW_ID, app_state.lock_retry)


def optional_integer(body: dict[str, Any], field: str) -> int | None:
    """``body[field]`` as an integer, or ``None`` when absent or null.

    Anything but a JSON integer is ``BadRequest``; the range is the core's to check.
    """
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{field} must be an integer")
    return value


def query_integer(args: Any, name: str, default: int) -> int:
    """The query parameter ``name`` as a whole number, ``default`` when absent.

    Anything but decimal digits is ``BadRequest``.
    """
    text = args.get(name)
    if text is None:
        return default
    if not (isinstance(text, str) and text.isascii() and text.isdigit()):
        raise BadRequest(f"{name} must be a whole number from 0, got {text!r}")
    return int(text)


def query_seconds(args: Any, name: str) -> float | None:
    """The query parameter ``name`` as a number of seconds, ``None`` when absent.

    Anything but a finite decimal number is ``BadRequest``; the range is the core's.
    """
    text = args.get(name)
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError as error:
        raise BadRequest(f"{name} must be a number of seconds, got {text!r}") from error
    if not math.isfinite(seconds):
        raise BadRequest(f"{name} must be a number of seconds, got {text!r}")
    return seconds


async def trim(app_state: AppState, body: dict[str, Any]) -> dict[str, object]:
    """The body of ``POST /trim``: what the trim dropped and what is left."""
    keep_newest = optional_integer(body, "keepNewest")
    drop_before = optional_integer(body, "dropBefore")
    archive = archive_client(app_state)
    outcome = await asyncio.to_thread(
        archive.trim, keep_newest=keep_newest, drop_before=drop_before
    )
    return {
        "droppedChunks": outcome.dropped_chunks,
        "droppedRecords": outcome.dropped_records,
        "retainedRecords": outcome.retained_records,
        "oldestSequence": outcome.oldest_sequence,
        "oldestToken": outcome.oldest_token,
    }


async def set_retention(app_state: AppState, body: dict[str, Any]) -> dict[str, object]:
    """The body of ``PUT /retention``: the retention in force and what it dropped at once."""
    keep_newest = optional_integer(body, "keepNewest")
    archive = archive_client(app_state)
    change = await asyncio.to_thread(archive.set_retention, keep_newest)
    return {
        "keepNewest": None if change.retention is None else change.retention.keep_newest,
        "droppedChunks": change.trimmed.dropped_chunks,
        "oldestSequence": change.trimmed.oldest_sequence,
        "oldestToken": change.trimmed.oldest_token,
    }


async def subscribers_after(app_state: AppState, args: Any) -> tuple[list[Subscriber], int]:
    """The subscribers of ``GET /subscribers?after=N[&limit=L]``, and the next ``after``.

    The subscribers come oldest first; asking again with the returned ``after`` goes on
    where this read stopped.
    """
    after = query_integer(args, "after", 0)
    limit = query_integer(args, "limit", DEFAULT_READ_LIMIT)
    wait = query_seconds(args, "wait")
    archive = archive_client(app_state)
    if wait is None:
        read = await asyncio.to_thread(archive.read_from, after + 1, limit)
    else:
        read = await archive.tail_async(after, limit, wait)
    return read.subscribers, read.next_sequence - 1


def stream_start(args: Any, headers: Any) -> int:
    """The sequence an event stream starts after.

    It is the client's ``Last-Event-ID`` when it reconnects, else the ``after`` query
    parameter (0 when absent).
    """
    last_event_id = headers.get(LAST_EVENT_ID_HEADER)
    if last_event_id is not None:
        return query_integer({LAST_EVENT_ID_HEADER: last_event_id}, LAST_EVENT_ID_HEADER, 0)
    return query_integer(args, "after", 0)


async def subscriber_events(
    app_state: AppState, after: int, to_json: Callable[[Subscriber], dict[str, object]]
) -> AsyncIterator[bytes]:
    """The Server-Sent Events of the subscribers after ``after``, then of each new one.

    The start is checked before the stream begins, so a bad or trimmed ``after`` is an
    ordinary 400 or 410. A failure later (a trim that overtakes a slow reader, say) ends the
    stream with an ``error`` event carrying the error body.
    """
    archive = archive_client(app_state)
    await archive.tail_async(after, 1, 0.0)

    async def events() -> AsyncIterator[bytes]:
        position = after
        while True:
            try:
                read = await archive.tail_async(position, STREAM_BATCH, STREAM_WAIT_SECONDS)
            except AttrflowError as error:
                body: dict[str, object] = {"error": str(error)}
                if isinstance(error, PageTrimmedError):
                    body["oldestToken"] = error.oldest_token
                    body["oldestSequence"] = error.oldest_sequence
                yield f"event: error\ndata: {json.dumps(body)}\n\n".encode()
                return
            if not read.subscribers:
                yield b": waiting\n\n"
            for subscriber in read.subscribers:
                data = json.dumps(to_json(subscriber))
                yield f"id: {subscriber.sequence}\ndata: {data}\n\n".encode()
            position = read.next_sequence - 1

    return events()
