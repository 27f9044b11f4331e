"""Tailing from Python, on both backends: a blocking tail returns what is there at once
and nothing on timeout, wakes for registrations of another thread, and an ``async for``
over ``follow`` delivers every subscriber once, in order. Nothing here asserts a time."""

from __future__ import annotations

import asyncio
import functools
import math
import threading

import pytest
from archive_support import retry_on_conflict

from attrflow import Client, InvalidInputError
from attrflow.flows.app_log import AppLog
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    MAX_TAIL_TIMEOUT_SECONDS,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
    Subscriber,
    SubscriberArchive,
)
from attrflow.retry import RetryPolicy

PATIENT = RetryPolicy(max_attempts=100_000, first_delay=1e-5, max_delay=1e-3, budget=600.0)


def register(client: Client, first: int, last: int) -> None:
    flow = ChunkedSubscriberFlow()

    def register_one(n: int) -> Subscriber:
        request = RegisterSubscriberInput(f"s-{n}", f"s-{n}@example.com")
        return client.invoke_rpc(flow.register_subscriber, FLOW_ID, request)

    for n in range(first, last + 1):
        subscriber, _ = retry_on_conflict(functools.partial(register_one, n))
        assert subscriber.sequence == n


def test_a_tail_returns_what_is_there_at_once_and_nothing_on_timeout(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID, PATIENT)
    archive.start()
    register(client, 1, 5)
    read = archive.tail(2, 10)
    assert [s.sequence for s in read.subscribers] == [3, 4, 5]
    assert read.next_sequence == 6
    empty = archive.tail(5, 10, timeout=0.02)
    assert (empty.subscribers, empty.next_sequence) == ([], 6)


@pytest.mark.parametrize(
    ("after", "timeout", "message"),
    [
        (-1, 0.0, f"after must be from 0 to {2**64 - 2}, not -1"),
        (0, -1.0, "timeout must be from 0 to 60 seconds, not -1 seconds"),
        (0, math.nan, "timeout must be from 0 to 60 seconds, not NaN seconds"),
        (0, 61.0, "timeout must be from 0 to 60 seconds, not 61 seconds"),
    ],
)
def test_bad_values_are_refused_naming_them(
    client: Client, after: int, timeout: float, message: str
) -> None:
    archive = SubscriberArchive(client)
    archive.start()
    with pytest.raises(InvalidInputError) as refused:
        archive.tail(after, 10, timeout)
    assert str(refused.value) == message


def test_a_tail_wakes_for_another_thread_and_never_repeats(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID, PATIENT)
    archive.start()
    appender = threading.Thread(target=register, args=(client, 1, 120))
    appender.start()
    received: list[int] = []
    after = 0
    while after < 120:
        read = archive.tail(after, 7, MAX_TAIL_TIMEOUT_SECONDS)
        received.extend(s.sequence for s in read.subscribers)
        after = read.next_sequence - 1
    appender.join()
    assert received == list(range(1, 121))


def test_follow_delivers_every_subscriber_once_in_order(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID, PATIENT)
    archive.start()
    register(client, 1, 3)

    async def main() -> list[Subscriber]:
        appender = asyncio.create_task(asyncio.to_thread(register, client, 4, 40))
        received: list[Subscriber] = []
        async for subscriber in archive.follow(after=1, limit=5):
            received.append(subscriber)
            if subscriber.sequence == 40:
                break
        await appender
        return received

    received = asyncio.run(main())
    assert [s.sequence for s in received] == list(range(2, 41))
    assert received[0].subscriber_id == "s-2"


def test_an_app_log_follows_one_log(client: Client) -> None:
    logs = AppLog(client, "my-app", PATIENT)
    logs.start()

    def append() -> None:
        for n in range(1, 21):
            logs.append_with_retry("chat", {"n": n})
            logs.append_with_retry("audit", {"n": n})

    async def main() -> list[object]:
        appender = asyncio.create_task(asyncio.to_thread(append))
        records: list[object] = []
        async for entry in logs.follow("audit"):
            records.append(entry.record)
            if len(records) == 20:
                break
        await appender
        return records

    assert asyncio.run(main()) == [{"n": n} for n in range(1, 21)]
    assert logs.tail("audit", 20, 5, timeout=0).entries == []
