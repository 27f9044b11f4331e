"""Read-only RPCs (``@rpc(is_read_only=True)``): a call that writes fails and stores nothing,
and on the embedded store ``AsyncClient`` runs a lone read-only call (or ``get_attribute``)
on the event loop's own thread, while every other call, and every call on PostgreSQL, runs
on a worker thread."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    Client,
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    WorkerInvocationError,
    async_client,
    rpc,
)

FLOW_ID = "reader-1"
CALLS = 10


class ReaderFlow(Flow):
    """Handlers that report the thread they ran on."""

    counter = Attribute("counter", int)

    def __init__(self) -> None:
        self.threads: list[int] = []

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc(name="Peek", is_read_only=True)
    def peek(self, context: Context, pause_ms: int) -> RPCResult[int]:
        self.threads.append(threading.get_ident())
        if pause_ms:
            time.sleep(pause_ms / 1000)
        return RPCResult(self.counter.get(context))

    @rpc(name="Glance")
    def glance(self, context: Context, _: None) -> RPCResult[int]:
        """Lock-free, but not declared read-only."""
        self.threads.append(threading.get_ident())
        return RPCResult(self.counter.get(context))

    @rpc(name="LockedPeek", lock_attributes=(counter.lock(),), is_read_only=True)
    def locked_peek(self, context: Context, _: None) -> RPCResult[int]:
        self.threads.append(threading.get_ident())
        return RPCResult(self.counter.get(context))

    @rpc(name="Sneak", is_read_only=True)
    def sneak(self, context: Context, value: int) -> RPCResult[int]:
        """Declared read-only, yet writes."""
        self.counter.set(context, value)
        return RPCResult(value)


def start_options(flow: ReaderFlow) -> StartFlowOptions:
    return StartFlowOptions().with_attribute(flow.counter, 7)


def test_a_read_only_rpc_that_writes_fails_and_stores_nothing(store_url: str) -> None:
    flow = ReaderFlow()
    with Client(store_url, built_in_flows=False) as client:
        client.start_flow(flow, FLOW_ID, None, start_options(flow))
        with pytest.raises(WorkerInvocationError) as raised:
            client.invoke_rpc(flow.sneak, FLOW_ID, 99)
        assert 'RPC "Sneak" is declared read-only, but staged writes to counter' in str(
            raised.value
        )
        assert client.get_attribute(FLOW_ID, flow.counter) == 7
        assert client.invoke_rpc(flow.peek, FLOW_ID, 0) == 7


def test_a_lone_read_only_call_runs_on_the_event_loop_thread_on_the_embedded_store(
    store_url: str,
) -> None:
    """Awaited one at a time, a read-only call runs on the loop's thread whenever the loop has
    nothing else ready (not necessarily every time: a callback of the loop's own may be
    pending), on SQLite only; the other calls always run on workers."""
    flow = ReaderFlow()
    embedded = not store_url.startswith("postgresql:")

    async def main() -> tuple[list[int], list[int]]:
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            for _ in range(CALLS):
                assert await client.invoke_rpc(flow.peek, FLOW_ID, 0) == 7
            peeks = flow.threads[:]
            flow.threads.clear()
            for _ in range(CALLS):
                assert await client.invoke_rpc(flow.glance, FLOW_ID) == 7
                assert await client.invoke_rpc(flow.locked_peek, FLOW_ID) == 7
            return peeks, flow.threads

    loop_thread = threading.get_ident()  # asyncio.run runs the loop on this thread
    peeks, others = asyncio.run(main())
    assert len(peeks) == CALLS
    assert len(others) == 2 * CALLS
    assert (loop_thread in peeks) is embedded
    # Not declared read-only, or taking a lock: a worker's, on either store.
    assert loop_thread not in others


def test_a_lone_attribute_read_runs_in_place_on_the_embedded_store(store_url: str) -> None:
    """The native read, given a loop's queue and a future: the value at once (run here) on
    SQLite, the future (handed to a worker) on PostgreSQL."""
    flow = ReaderFlow()
    embedded = not store_url.startswith("postgresql:")

    async def main() -> tuple[bool, object]:
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            loop = asyncio.get_running_loop()
            done = (async_client._watch(loop).completions, loop.create_future())
            runtime = client._client._runtime
            result = runtime.get_attribute(FLOW_ID, "counter", done=done, in_place=True)
            handed_over = result is done[1]
            text = await done[1] if handed_over else result
            assert await client.get_attribute(FLOW_ID, flow.counter) == 7
            return handed_over, text

    handed_over, text = asyncio.run(main())
    assert handed_over is not embedded
    assert text == "7"


def test_read_only_calls_made_together_run_on_workers(store_url: str) -> None:
    flow = ReaderFlow()

    async def main() -> list[int]:
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            calls = [client.invoke_rpc(flow.peek, FLOW_ID, 0) for _ in range(4)]
            return await asyncio.gather(*calls)

    loop_thread = threading.get_ident()  # asyncio.run runs the loop on this thread
    assert asyncio.run(main()) == [7, 7, 7, 7]
    # Each call found the loop with other tasks ready, or another call in flight.
    assert len(flow.threads) == 4
    assert loop_thread not in flow.threads


def test_slow_read_only_calls_go_to_workers_for_a_while(store_path: Path) -> None:
    """A read that outlasts the loop's wait for a lone call (200 µs) twice in a row sends the
    next one to a worker, so slow reads keep the loop from its other work no longer than
    watching for them would; fast ones run in place again."""
    flow = ReaderFlow()

    async def main(store: str) -> int:
        async with await AsyncClient.open(store, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            flow.threads.clear()
            for _ in range(10):
                assert await client.invoke_rpc(flow.peek, FLOW_ID, 2) == 7
            return threading.get_ident()

    loop_thread = asyncio.run(main(str(store_path)))
    in_place = [thread == loop_thread for thread in flow.threads]
    # Run in place: the 1st and 2nd (two misses), then after one on a worker the 4th, then
    # after two the 7th; without the back-off, all ten.
    assert 1 <= in_place.count(True) <= 5
