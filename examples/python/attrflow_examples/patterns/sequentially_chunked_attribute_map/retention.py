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
Events, each with ``<runID>:<sequence>`` as the event ID, and keeps sending new ones as they
are registered; a reconnecting client's ``Last-Event-ID`` header takes the place of
``after`` (and of ``runID``), so it resumes without a gap or a repeat. A trimmed page token
or ``after`` is answered 410 Gone with the oldest retained page token and sequence in the
body (see :mod:`attrflow_examples.http_errors`).

Sequences count within one run of the archive flow: started again, it counts from 1. So a
read forward answers the ``runID`` it read, and ``&runID=R`` (or an event ID's run) pins a
read, a long poll or a stream to that run: once the archive has been started again it is a
409 naming the ``currentRunID``, or on an open stream an ``error`` event with that body,
never the new run's subscribers at the old run's position.

Every rule (what a trim drops, the limits, the typed errors) is the core's; this module
only reads the request and calls the core's client off the event loop.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

from attrflow import AttrflowError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    Subscriber,
    SubscriberArchive,
    SubscribersFrom,
)
from werkzeug.exceptions import BadRequest

from attrflow_examples.app_state import AppState
from attrflow_examples.http_errors import error_fields

DEFAULT_READ_LIMIT = 100
"""How many subscribers ``GET /subscribers?after=`` returns when ``limit`` is not given."""

STREAM_WAIT_SECONDS = 15.0
"""How long the event stream waits for a registration before it sends a comment line,
which keeps proxies from closing an idle connection."""

STREAM_BATCH = 100
"""The most subscribers the event stream sends a step of its follow cursor."""

LAST_EVENT_ID_HEADER = "Last-Event-ID"

RUN_ID_PARAMETER = "runID"
"""The query parameter that pins a read forward, a long poll or a stream to one run."""


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


def query_run_id(args: Any) -> str | None:
    """The ``runID`` query parameter, ``None`` when absent; an empty one is ``BadRequest``."""
    run_id = args.get(RUN_ID_PARAMETER)
    if run_id is None:
        return None
    if not isinstance(run_id, str) or not run_id:
        raise BadRequest(f"{RUN_ID_PARAMETER} must not be empty")
    return run_id


async def subscribers_after(app_state: AppState, args: Any) -> SubscribersFrom:
    """The read of ``GET /subscribers?after=N[&limit=L][&wait=S][&runID=R]``.

    The subscribers come oldest first; asking again with ``after`` at the read's next
    sequence less one, and its run, goes on where this read stopped.
    """
    after = query_integer(args, "after", 0)
    limit = query_integer(args, "limit", DEFAULT_READ_LIMIT)
    wait = query_seconds(args, "wait")
    run_id = query_run_id(args)
    archive = archive_client(app_state)
    if wait is None:
        return await asyncio.to_thread(archive.read_from, after + 1, limit, run_id=run_id)
    return await archive.tail_async(after, limit, wait, run_id=run_id)


def stream_start(args: Any, headers: Any) -> tuple[int, str | None]:
    """The sequence an event stream starts after, and the run it is pinned to.

    The run is ``None`` when the client names none: the stream keeps to the run its first
    read finds. Both come from the client's ``Last-Event-ID`` (``<runID>:<sequence>``, or
    a bare sequence) when it reconnects, else from the ``after`` (0 when absent) and
    ``runID`` query parameters.
    """
    last_event_id = headers.get(LAST_EVENT_ID_HEADER)
    if last_event_id is None:
        return query_integer(args, "after", 0), query_run_id(args)
    run_id, _, sequence = last_event_id.rpartition(":")
    if not (sequence.isascii() and sequence.isdigit()):
        raise BadRequest(
            f"{LAST_EVENT_ID_HEADER} must be <runID>:<sequence> or a sequence, "
            f"got {last_event_id!r}"
        )
    return int(sequence), run_id or None


async def subscriber_events(
    app_state: AppState,
    start: tuple[int, str | None],
    to_json: Callable[[Subscriber], dict[str, object]],
) -> AsyncIterator[bytes]:
    """The Server-Sent Events of the subscribers after ``start``, then of each new one.

    ``start`` is what :func:`stream_start` returns; every event is of one run. The start is
    checked before the stream begins, so a bad or trimmed ``after``, or a run the archive
    is no longer in, is an ordinary 400, 410 or 409. A failure later (a trim that overtakes
    a slow reader, the archive started again) ends the stream with an ``error`` event
    carrying the error body.
    """
    after, run_id = start
    archive = archive_client(app_state)
    first = await archive.tail_async(after, 1, 0.0, run_id=run_id)
    # The core's follow cursor resumes after the last subscriber sent, pinned to the run.
    cursor = archive.follow_cursor(after, STREAM_BATCH, run_id=first.run_id)

    async def events() -> AsyncIterator[bytes]:
        while True:
            try:
                subscribers = await cursor.step_async(STREAM_WAIT_SECONDS)
            except AttrflowError as error:
                body = {"error": str(error), **error_fields(error)}
                yield f"event: error\ndata: {json.dumps(body)}\n\n".encode()
                return
            if not subscribers:
                yield b": waiting\n\n"
            for subscriber in subscribers:
                data = json.dumps(to_json(subscriber))
                yield f"id: {cursor.run_id}:{subscriber.sequence}\ndata: {data}\n\n".encode()

    return events()
