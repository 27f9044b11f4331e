"""Concurrent calls of a Python-defined flow, from threads and from asyncio tasks, keep exact
sequences: every registration gets its own number, none is lost or repeated, and the
archive holds exactly 1..N across its chunk boundary."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from archive_support import retry_on_conflict
from python_flow_support import dex, dex_page, start_options

from attrflow import AsyncClient, Client, RpcLockConflictError

FLOW_ID = "python-archive"
SEQUENTIAL = 95
CONCURRENT = 20


def all_sequences(client: Client) -> list[int]:
    found: list[int] = []
    token = "current"
    while token:
        page = dex_page(client, FLOW_ID, token)
        found.extend(s.sequence for s in page.subscribers)
        token = page.next_page_token
    return sorted(found)


def registration(n: int) -> dex.RegisterSubscriberInput:
    return dex.RegisterSubscriberInput(f"subscriber-{n:03d}", f"subscriber-{n:03d}@example.com")


def test_threads_keep_exact_sequences(store_path: Path):
    flow = dex.ChunkedSubscriberFlow()
    with Client(store_path, built_in_flows=False) as client:
        client.start_flow(flow, FLOW_ID, None, start_options())
        for n in range(1, SEQUENTIAL + 1):
            client.invoke_rpc(flow.register_subscriber, FLOW_ID, registration(n))
        results: dict[int, int] = {}
        barrier = threading.Barrier(CONCURRENT)

        def register(n: int) -> None:
            barrier.wait()
            subscriber, _ = retry_on_conflict(
                lambda: client.invoke_rpc(flow.register_subscriber, FLOW_ID, registration(n))
            )
            results[n] = subscriber.sequence

        threads = [
            threading.Thread(target=register, args=(n,))
            for n in range(SEQUENTIAL + 1, SEQUENTIAL + CONCURRENT + 1)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results.values()) == list(range(SEQUENTIAL + 1, SEQUENTIAL + CONCURRENT + 1))
        assert all_sequences(client) == list(range(1, SEQUENTIAL + CONCURRENT + 1))


def test_asyncio_tasks_keep_exact_sequences(store_path: Path):
    flow = dex.ChunkedSubscriberFlow()
    total = SEQUENTIAL + CONCURRENT

    async def register(client: AsyncClient, n: int) -> int:
        while True:
            try:
                subscriber = await client.invoke_rpc(
                    flow.register_subscriber, FLOW_ID, registration(n)
                )
                return subscriber.sequence
            except RpcLockConflictError:
                await asyncio.sleep(0.001)

    async def main() -> list[int]:
        async with AsyncClient(store_path, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options())
            return await asyncio.gather(*(register(client, n) for n in range(1, total + 1)))

    sequences = asyncio.run(main())
    assert sorted(sequences) == list(range(1, total + 1))
    with Client(store_path, built_in_flows=False) as client:
        assert all_sequences(client) == list(range(1, total + 1))
