"""Trimming, retention and reading forward from Python, on both backends: the core's typed
clients of the subscriber archive and the app log, with ``PageTrimmedError`` carrying the
oldest retained token and sequence, and bad values refused as ``InvalidInputError``."""

from __future__ import annotations

import pytest

from attrflow import Client, InvalidInputError, PageTrimmedError
from attrflow.flows.app_log import AppLog
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    MAX_READ_RECORDS,
    ChunkedSubscriberFlow,
    NewSubscriber,
    RegisterSubscribersInput,
    Retention,
    SubscriberArchive,
    TrimOutcome,
    archive_chunk_token,
)

MAX_SEQUENCE = 2**64 - 1


def archive_of(client: Client, count: int) -> SubscriberArchive:
    """A started archive holding subscribers 1 to ``count`` (chunks of 100)."""
    archive = SubscriberArchive(client)
    archive.start()
    flow = ChunkedSubscriberFlow()
    for first in range(1, count + 1, 250):
        batch = [
            NewSubscriber(f"s-{n}", f"s-{n}@example.com")
            for n in range(first, min(first + 250, count + 1))
        ]
        client.invoke_rpc(flow.register_subscribers, FLOW_ID, RegisterSubscribersInput(batch))
    return archive


def test_a_trim_keeps_the_retained_pages_and_names_the_oldest_in_its_error(
    client: Client,
) -> None:
    archive = archive_of(client, 550)
    kept_before = [archive.page(archive_chunk_token(first)) for first in (301, 401)]

    outcome = archive.trim(drop_before=250)
    assert outcome == TrimOutcome(
        dropped_chunks=2,
        dropped_records=200,
        retained_records=350,
        oldest_sequence=201,
        oldest_token="00000000000000000201",
    )
    assert [archive.page(archive_chunk_token(first)) for first in (301, 401)] == kept_before
    assert archive.page(archive_chunk_token(201)).next_page_token == ""

    with pytest.raises(PageTrimmedError) as trimmed:
        archive.page(archive_chunk_token(101))
    assert isinstance(trimmed.value, LookupError)
    assert trimmed.value.token == "00000000000000000101"
    assert trimmed.value.oldest_token == "00000000000000000201"
    assert trimmed.value.oldest_sequence == 201
    assert str(trimmed.value) == (
        'page "00000000000000000101" was trimmed; the oldest retained page is '
        '"00000000000000000201", from sequence 201'
    )

    outcome = archive.trim(keep_newest=1)
    assert (outcome.dropped_chunks, outcome.oldest_token) == (3, "current")
    with pytest.raises(PageTrimmedError) as trimmed:
        archive.read_from(450, 10)
    assert (trimmed.value.oldest_token, trimmed.value.oldest_sequence) == ("current", 501)


def test_a_read_forward_returns_subscribers_oldest_first_across_chunks(client: Client) -> None:
    archive = archive_of(client, 550)
    read = archive.read_from(95, 120)
    assert [s.sequence for s in read.subscribers] == list(range(95, 215))
    assert read.subscribers[0].subscriber_id == "s-95"
    assert read.next_sequence == 215
    tail = archive.read_from(540, MAX_READ_RECORDS)
    assert [s.sequence for s in tail.subscribers] == list(range(540, 551))
    assert archive.read_from(tail.next_sequence, 10).subscribers == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: a.read_from(0, 10), f"sequence must be from 1 to {MAX_SEQUENCE}, not 0"),
        (lambda a: a.read_from(-3, 10), f"sequence must be from 1 to {MAX_SEQUENCE}, not -3"),
        (lambda a: a.read_from(1, 0), f"limit must be from 1 to {MAX_READ_RECORDS}, not 0"),
        (
            lambda a: a.read_from(1, MAX_READ_RECORDS + 1),
            f"limit must be from 1 to {MAX_READ_RECORDS}, not {MAX_READ_RECORDS + 1}",
        ),
        (lambda a: a.read_from(1, -1), f"limit must be from 1 to {MAX_READ_RECORDS}, not -1"),
        (lambda a: a.trim(keep_newest=0), f"keepNewest must be from 1 to {MAX_SEQUENCE}, not 0"),
        (
            lambda a: a.trim(drop_before=2**64),
            f"dropBefore must be from 1 to {MAX_SEQUENCE}, not {2**64}",
        ),
        (lambda a: a.trim(), "a trim takes exactly one of keepNewest and dropBefore"),
        (
            lambda a: a.trim(keep_newest=1, drop_before=1),
            "a trim takes exactly one of keepNewest and dropBefore",
        ),
        (
            lambda a: a.trim(drop_before=502),
            "dropBefore 502 would drop records of the open chunk, which starts at sequence 501;"
            " a trim drops whole archived chunks only",
        ),
        (
            lambda a: a.set_retention(-1),
            f"keepNewest must be from 1 to {MAX_SEQUENCE}, not -1",
        ),
    ],
)
def test_bad_values_are_refused_naming_them(client: Client, call: object, message: str) -> None:
    archive = archive_of(client, 550)
    assert callable(call)
    with pytest.raises(InvalidInputError) as refused:
        call(archive)
    assert str(refused.value) == message
    assert len(archive.read_from(1, 1).subscribers) == 1


def test_a_retention_holds_an_app_log_within_one_chunk_of_its_bound(client: Client) -> None:
    logs = AppLog(client, "my-app")
    logs.start()
    change = logs.set_retention("audit", 150)
    assert change.retention == Retention(keep_newest=150)
    for n in range(1, 601):
        logs.append_with_retry("audit", {"n": n})
        if n % 50 == 0:
            # A trim to the same bound finds nothing left to drop, and reports what is held.
            held = logs.trim("audit", keep_newest=150)
            assert held.dropped_chunks == 0
            assert min(n, 150) <= held.retained_records < 250
    oldest = logs.read_from("audit", held.oldest_sequence, 1)
    assert oldest.entries[0].record == {"n": held.oldest_sequence}
    with pytest.raises(PageTrimmedError):
        logs.read_from("audit", 1, 10)

    cleared = logs.set_retention("audit", None)
    assert cleared.retention is None
    trimmed = logs.trim("audit", keep_newest=1)
    assert trimmed.oldest_token == "current"
    read = logs.read_from("audit", trimmed.oldest_sequence, 5)
    assert [e.sequence for e in read.entries] == list(
        range(trimmed.oldest_sequence, trimmed.oldest_sequence + 5)
    )
