"""The sequentially chunked AttributeMap pattern written exactly as Dex's Python example
writes its flow module and Quart controller (tests/dex_idiom/, only the imports name
attrflow) runs on attrflow, on both backends: 201 records page with the exact tokens,
95 sequential and 20 concurrent appends give exactly 1..115, bad tokens get a 400, and a
missing page is the handler's own error."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

import pytest
from dex_idiom.patterns.sequentially_chunked_attribute_map import (
    chunked_subscriber_flow as pattern,
)
from dex_idiom.serving import Server, serving

from attrflow import AsyncClient, RPCInvokeOptions, RpcLockConflictError, WorkerInvocationError

PREFIX = "/patterns/sequentially-chunked-attribute-map"
ARCHIVE_101 = "00000000000000000101"
ARCHIVE_1 = "00000000000000000001"


def register(server: Server, n: int) -> dict[str, object]:
    answer = server.call(
        "POST",
        f"{PREFIX}/register",
        {
            "subscriberId": f"subscriber-{n:03d}",
            "deliveryAddress": f"subscriber-{n:03d}@example.com",
        },
    )
    assert answer.status == 200, answer.text()
    body: dict[str, object] = answer.json()
    return body


def page(server: Server, token: str | None) -> dict[str, object]:
    query = "" if token is None else f"?pageToken={token}"
    answer = server.call("GET", f"{PREFIX}/subscribers{query}")
    assert answer.status == 200, answer.text()
    body: dict[str, object] = answer.json()
    return body


def sequences(body: dict[str, object]) -> list[object]:
    subscribers = body["subscribers"]
    assert isinstance(subscribers, list)
    return [subscriber["sequence"] for subscriber in subscribers]


def start(server: Server) -> None:
    answer = server.call("POST", f"{PREFIX}/start")
    assert answer.status == 200, answer.text()
    assert answer.json()["flowID"] == pattern.FLOW_ID


def test_201_registrations_page_newest_first_with_exact_tokens(store_url: str) -> None:
    with serving(store_url) as server:
        start(server)
        assert page(server, None) == {
            "pageToken": "current",
            "subscribers": [],
            "nextPageToken": "",
        }
        for n in range(1, 202):
            assert register(server, n) == {
                "sequence": n,
                "subscriberId": f"subscriber-{n:03d}",
                "deliveryAddress": f"subscriber-{n:03d}@example.com",
            }

        newest = page(server, "current")
        assert sequences(newest) == [201]
        assert newest["nextPageToken"] == ARCHIVE_101
        assert page(server, "") == newest
        middle = page(server, ARCHIVE_101)
        assert sequences(middle) == list(range(200, 100, -1))
        assert middle["pageToken"] == ARCHIVE_101
        assert middle["nextPageToken"] == ARCHIVE_1
        oldest = page(server, ARCHIVE_1)
        assert sequences(oldest) == list(range(100, 0, -1))
        assert oldest["nextPageToken"] == ""


def test_bad_tokens_get_a_400_and_a_missing_page_is_the_handlers_error(store_url: str) -> None:
    with serving(store_url) as server:
        start(server)
        for token in ("1", "archive", "00000000000000000002", "00000000000000000000"):
            answer = server.call("GET", f"{PREFIX}/subscribers?pageToken={token}")
            assert answer.status == 400
            assert f'invalid page token "{token}"' in answer.text()
        # Dex's controller lets the handler's error through: the framework answers 500.
        assert (
            server.call("GET", f"{PREFIX}/subscribers?pageToken=00000000000000000301").status == 500
        )

    async def read_missing_page() -> None:
        flow = pattern.ChunkedSubscriberFlow()
        async with AsyncClient(store_url) as client:
            with pytest.raises(WorkerInvocationError) as raised:
                await client.invoke_rpc(
                    flow.get_subscriber_page,
                    pattern.FLOW_ID,
                    pattern.GetSubscriberPageInput("00000000000000000301"),
                    options=RPCInvokeOptions(
                        load_attribute_map_instances=(
                            flow.subscriber_chunks.load("00000000000000000301"),
                        )
                    ),
                )
        assert raised.value.worker_error_type == "ValueError"
        assert (
            raised.value.worker_error_detail == 'subscriber page "00000000000000000301" not found'
        )

    asyncio.run(read_missing_page())


async def register_retrying(
    client: AsyncClient, flow: pattern.ChunkedSubscriberFlow, n: int
) -> pattern.Subscriber:
    while True:
        try:
            return await client.invoke_rpc(
                flow.register_subscriber,
                pattern.FLOW_ID,
                pattern.RegisterSubscriberInput(f"subscriber-{n:03d}", f"s-{n}@example.com"),
            )
        except RpcLockConflictError:
            await asyncio.sleep(0)


def test_95_sequential_and_20_concurrent_appends_hold_exactly_1_to_115(store_url: str) -> None:
    async def append() -> list[pattern.Subscriber]:
        flow = pattern.ChunkedSubscriberFlow()
        async with AsyncClient(store_url) as client:
            for n in range(1, 96):
                await register_retrying(client, flow, n)
            return list(
                await asyncio.gather(*(register_retrying(client, flow, n) for n in range(96, 116)))
            )

    with serving(store_url) as server:
        start(server)
        concurrent = asyncio.run(append())
        assert sorted(asdict(s)["sequence"] for s in concurrent) == list(range(96, 116))
        newest = page(server, "current")
        assert sequences(newest) == list(range(115, 100, -1))
        assert newest["nextPageToken"] == ARCHIVE_1
        assert sequences(page(server, ARCHIVE_1)) == list(range(100, 0, -1))
