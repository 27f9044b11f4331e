"""The core's follow cursor through Python: it resumes exactly after the last record it
delivered, starts a trimmed log at its oldest record, never skips a trimmed record once it
has a position, and pins itself to the run its first step read."""

from __future__ import annotations

import asyncio

import pytest

from attrflow import Client, InvalidInputError, PageTrimmedError
from attrflow.flows.app_log import AppLog
from attrflow.flows.chunked_subscriber import NewSubscriber, SubscriberArchive


def register(archive: SubscriberArchive, first: int, last: int) -> None:
    archive.register_batch(
        [NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(first, last + 1)]
    )


def test_a_cursor_steps_after_what_it_delivered(client: Client) -> None:
    archive = SubscriberArchive(client, "archive")
    run_id = archive.start()
    register(archive, 1, 5)
    cursor = archive.follow_cursor(after=1, limit=3)
    assert (cursor.after, cursor.run_id, cursor.limit) == (1, None, 3)
    assert [s.sequence for s in cursor.step(0)] == [2, 3, 4]
    assert (cursor.after, cursor.run_id) == (4, run_id)
    assert [s.sequence for s in cursor.step(0)] == [5]
    assert cursor.step(0) == []
    assert cursor.after == 5
    register(archive, 6, 6)
    assert [s.subscriber_id for s in asyncio.run(cursor.step_async(0))] == ["s-6"]


def test_a_cursor_from_the_start_of_a_trimmed_log_begins_at_its_oldest_record(
    client: Client,
) -> None:
    archive = SubscriberArchive(client, "archive")
    archive.start()
    register(archive, 1, 250)
    assert archive.trim(keep_newest=100).oldest_sequence == 101
    cursor = archive.follow_cursor(limit=10)
    assert [s.sequence for s in cursor.step(0)] == list(range(101, 111))


def test_a_positioned_cursor_whose_next_record_was_trimmed_stays_and_says_so(
    client: Client,
) -> None:
    logs = AppLog(client, "my-app")
    logs.start()
    logs.append_batch("audit", list(range(1, 251)))
    cursor = logs.follow_cursor("audit", limit=5)
    assert [e.record for e in cursor.step(0)] == [1, 2, 3, 4, 5]
    logs.trim("audit", keep_newest=100)
    with pytest.raises(PageTrimmedError) as trimmed:
        cursor.step(0)
    assert trimmed.value.oldest_sequence == 101
    assert cursor.after == 5
    resumed = logs.follow_cursor("audit", after=trimmed.value.oldest_sequence - 1, limit=5)
    assert [e.sequence for e in resumed.step(0)] == [101, 102, 103, 104, 105]


def test_bad_cursor_arguments_are_refused_when_it_is_opened(client: Client) -> None:
    archive = SubscriberArchive(client, "archive")
    archive.start()
    for after, limit in [(0, 0), (-1, 10), (0, 10**6)]:
        with pytest.raises(InvalidInputError):
            archive.follow_cursor(after, limit)
    with pytest.raises(InvalidInputError):
        AppLog(client, "my-app").follow_cursor("bad/name").step(0)
    with pytest.raises(InvalidInputError):
        archive.follow_cursor().step(-1.0)


def test_a_cursor_takes_one_step_at_a_time(client: Client) -> None:
    archive = SubscriberArchive(client, "archive")
    archive.start()
    cursor = archive.follow_cursor()

    async def two_steps() -> None:
        waiting = asyncio.ensure_future(cursor.step_async(0.5))
        await asyncio.sleep(0)
        with pytest.raises(InvalidInputError, match="one step at a time"):
            cursor.step(0)
        assert cursor.after == 0  # reading the position does not wait for the step
        assert await waiting == []

    asyncio.run(two_steps())
    register(archive, 1, 1)
    assert [s.sequence for s in cursor.step(0)] == [1]
