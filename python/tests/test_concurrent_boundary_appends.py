"""95 sequential appends, then 20 concurrent ones across the chunk boundary, retried only on
lock conflicts, give exactly sequences 1..115: none lost, none duplicated."""

from __future__ import annotations

import asyncio
import random
import threading

from archive_support import Archive, retry_on_conflict, subscriber_input

from attrflow import AsyncClient, Client, RpcLockConflictError
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow, Subscriber

CONCURRENT = range(96, 116)


def register_sequentially(archive: Archive) -> None:
    for n in range(1, 96):
        assert archive.register(n).sequence == n


def check_archive(archive: Archive, concurrent: list[Subscriber]) -> None:
    assert sorted(s.sequence for s in concurrent) == list(CONCURRENT)
    assert sorted(s.subscriber_id for s in concurrent) == [
        f"subscriber-{n:03d}" for n in CONCURRENT
    ]

    current = archive.page("current")
    assert [s.sequence for s in current.subscribers] == list(range(115, 100, -1))
    assert current.next_page_token == "00000000000000000001"
    oldest = archive.page("00000000000000000001")
    assert [s.sequence for s in oldest.subscribers] == list(range(100, 0, -1))

    everyone = archive.all_subscribers()
    assert sorted(s.sequence for s in everyone) == list(range(1, 116))
    assert len({s.subscriber_id for s in everyone}) == 115
    by_id = {s.subscriber_id: s for s in everyone}
    for subscriber in concurrent:
        assert by_id[subscriber.subscriber_id] == subscriber


def test_threads_sharing_one_blocking_client(archive: Archive, client: Client) -> None:
    register_sequentially(archive)
    results: dict[int, Subscriber] = {}
    failures: list[BaseException] = []
    barrier = threading.Barrier(len(CONCURRENT))

    def register(n: int) -> None:
        try:
            barrier.wait()
            results[n], _ = retry_on_conflict(
                lambda: client.invoke_rpc(
                    archive.flow.register_subscriber, FLOW_ID, subscriber_input(n)
                )
            )
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=register, args=(n,)) for n in CONCURRENT]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    check_archive(archive, list(results.values()))


def test_asyncio_tasks_sharing_one_async_client(store_url: str) -> None:
    async def main() -> list[Subscriber]:
        async with AsyncClient(store_url) as client:
            flow = ChunkedSubscriberFlow()

            async def register(n: int) -> Subscriber:
                while True:
                    try:
                        return await client.invoke_rpc(
                            flow.register_subscriber, FLOW_ID, subscriber_input(n)
                        )
                    except RpcLockConflictError:
                        await asyncio.sleep(random.random() / 1000)

            await client.start_flow(flow, FLOW_ID)
            for n in range(1, 96):
                assert (await register(n)).sequence == n
            return list(await asyncio.gather(*(register(n) for n in CONCURRENT)))

    concurrent = asyncio.run(main())
    with Client(store_url) as client:
        check_archive(Archive(client), concurrent)
