"""Tailing from Python, on both backends: a blocking tail returns what is there at once
and nothing on timeout, wakes for registrations of another thread, and an ``async for``
over ``follow`` delivers every subscriber once, in order, of the run it began in: an
archive started again meanwhile raises ``RunNotCurrentError`` rather than delivering the
new run's records at the old run's position. Nothing here asserts a time."""

from __future__ import annotations

import asyncio
import functools
import math
import threading

import pytest
from archive_support import retry_on_conflict

from attrflow import (
    Client,
    IdReusePolicy,
    InvalidInputError,
    RunNotCurrentError,
    StartFlowOptions,
)
from attrflow.flows.app_log import AppLog, ChunkedLogFlow
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


def start_again(client: Client, flow: ChunkedSubscriberFlow | ChunkedLogFlow, flow_id: str) -> str:
    """Starts ``flow_id`` again, ending its running run; the new run's ID."""
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING)
    return client.start_flow(flow, flow_id, None, options)


def test_a_tail_pinned_to_its_run_refuses_the_run_that_replaced_it(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID, PATIENT)
    first = archive.start()
    register(client, 1, 3)
    read = archive.tail(0, 10, timeout=0)
    assert (len(read.subscribers), read.run_id) == (3, first)

    second = start_again(client, ChunkedSubscriberFlow(), FLOW_ID)
    register(client, 1, 5)
    with pytest.raises(RunNotCurrentError) as refused:
        archive.tail(3, 10, timeout=0, run_id=first)
    error = refused.value
    assert (error.flow_id, error.run_id, error.current_run_id) == (FLOW_ID, first, second)
    assert str(error) == f'flow "{FLOW_ID}" has no run "{first}"; its run is "{second}"'
    assert isinstance(error, InvalidInputError)
    with pytest.raises(RunNotCurrentError):
        archive.read_from(4, 10, run_id=first)
    read = archive.read_from(1, 10, run_id=second)
    assert ([s.sequence for s in read.subscribers], read.run_id) == ([1, 2, 3, 4, 5], second)


def test_follow_stops_with_run_not_current_when_the_archive_is_started_again(
    client: Client,
) -> None:
    archive = SubscriberArchive(client, FLOW_ID, PATIENT)
    first = archive.start()
    register(client, 1, 3)
    received: list[int] = []
    runs: list[str] = []

    async def follow_and_start_again() -> None:
        async for subscriber in archive.follow(limit=2):
            received.append(subscriber.sequence)
            if subscriber.sequence == 3:
                # The new run's five registrations carry sequences 1 to 5: none of them may
                # reach this follower as the old run's 4 and 5.
                flow = ChunkedSubscriberFlow()
                runs.append(await asyncio.to_thread(start_again, client, flow, FLOW_ID))
                await asyncio.to_thread(register, client, 1, 5)

    with pytest.raises(RunNotCurrentError) as ended:
        asyncio.run(follow_and_start_again())
    assert received == [1, 2, 3]
    assert (ended.value.run_id, ended.value.current_run_id) == (first, runs[0])

    async def follow_new_run() -> list[int]:
        new_run: list[int] = []
        async for subscriber in archive.follow(run_id=runs[0]):
            new_run.append(subscriber.sequence)
            if subscriber.sequence == 5:
                break
        return new_run

    assert asyncio.run(follow_new_run()) == [1, 2, 3, 4, 5]


def test_an_app_log_follow_stops_when_its_logs_are_started_again(client: Client) -> None:
    logs = AppLog(client, "my-app", PATIENT)
    first = logs.start()
    logs.append_with_retry("audit", {"n": 1})
    records: list[object] = []

    async def follow_and_start_again() -> None:
        async for entry in logs.follow("audit"):
            records.append(entry.record)
            await asyncio.to_thread(start_again, client, ChunkedLogFlow(), "my-app")
            await asyncio.to_thread(logs.append_with_retry, "audit", {"n": "new"})
            await asyncio.to_thread(logs.append_with_retry, "audit", {"n": "new"})

    with pytest.raises(RunNotCurrentError) as ended:
        asyncio.run(follow_and_start_again())
    assert records == [{"n": 1}]
    assert ended.value.run_id == first
    read = logs.tail("audit", 0, 10, timeout=0, run_id=ended.value.current_run_id)
    assert [entry.record for entry in read.entries] == [{"n": "new"}, {"n": "new"}]
