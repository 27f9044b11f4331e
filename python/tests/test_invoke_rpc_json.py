"""``AsyncClient.invoke_rpc_json``: the output as compact JSON bytes written by the native
module, exactly what ``json.dumps`` writes for the decoded output's camelCase fields in their
declared order, and the same errors as ``invoke_rpc``; and many calls finishing together
all complete their awaits."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from attrflow import AsyncClient, InvalidPageTokenError, RPCInvokeOptions, ValueMappingError
from attrflow.flow import BoundRpc, RpcDefinition
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    SubscriberPage,
)

FLOW = ChunkedSubscriberFlow()
AWKWARD_IDS = [
    "plain",
    'quote"back\\slash',
    "tab\tnew\nline\x01\x7f",
    "é中🙂",
    '"escaped at both ends\\',
    "\u2028🙂x\x1f",
]


def camel_case(page: SubscriberPage) -> dict[str, object]:
    return {
        "pageToken": page.page_token,
        "subscribers": [
            {
                "sequence": s.sequence,
                "subscriberId": s.subscriber_id,
                "deliveryAddress": s.delivery_address,
            }
            for s in page.subscribers
        ],
        "nextPageToken": page.next_page_token,
    }


def loads(token: str) -> RPCInvokeOptions:
    return RPCInvokeOptions(load_attribute_map_instances=(FLOW.subscriber_chunks.load(token),))


async def start_with_awkward_ids(client: AsyncClient) -> None:
    """Starts the archive and registers a subscriber under each of ``AWKWARD_IDS``."""
    await client.start_flow(FLOW, FLOW_ID)
    for subscriber_id in AWKWARD_IDS:
        await client.invoke_rpc(
            FLOW.register_subscriber,
            FLOW_ID,
            RegisterSubscriberInput(subscriber_id, f"{subscriber_id}@example.com"),
        )


def test_the_json_output_is_what_json_dumps_writes_for_the_decoded_output(
    store_url: str,
) -> None:
    async def main() -> None:
        async with await AsyncClient.open(store_url) as client:
            await start_with_awkward_ids(client)
            decoded = await client.invoke_rpc(
                FLOW.get_subscriber_page,
                FLOW_ID,
                GetSubscriberPageInput("current"),
                options=loads("current"),
            )
            written = await client.invoke_rpc_json(
                FLOW.get_subscriber_page,
                FLOW_ID,
                GetSubscriberPageInput("current"),
                options=loads("current"),
            )
            assert [s.subscriber_id for s in decoded.subscribers] == AWKWARD_IDS[::-1]
            assert written == json.dumps(camel_case(decoded), separators=(",", ":")).encode()

    asyncio.run(main())


@dataclass
class Registered:
    """A subscriber read with its fields declared in another order than the core writes
    them, one of them left out."""

    delivery_address: str
    sequence: int


@dataclass
class RegisteredPage:
    next_page_token: str
    subscribers: list[Registered]
    page_token: str


@dataclass
class TextSequence:
    sequence: str


@dataclass
class MistypedPage:
    subscribers: list[TextSequence]


def page_as(output_type: type[object], name: str) -> BoundRpc[GetSubscriberPageInput, object]:
    """The core's page RPC, its output read as `output_type`."""
    core_name = FLOW.get_subscriber_page.definition.name
    return BoundRpc(FLOW, RpcDefinition(core_name, GetSubscriberPageInput, output_type), name)


def test_the_json_output_follows_the_declared_order_of_the_output_type(store_url: str) -> None:
    async def main() -> None:
        async with await AsyncClient.open(store_url) as client:
            await start_with_awkward_ids(client)
            rpc = page_as(RegisteredPage, "reordered_page")
            page = GetSubscriberPageInput("current")
            decoded = await client.invoke_rpc(rpc, FLOW_ID, page, options=loads("current"))
            written = await client.invoke_rpc_json(rpc, FLOW_ID, page, options=loads("current"))
            assert isinstance(decoded, RegisteredPage)
            expected = {
                "nextPageToken": decoded.next_page_token,
                "subscribers": [
                    {"deliveryAddress": s.delivery_address, "sequence": s.sequence}
                    for s in decoded.subscribers
                ],
                "pageToken": decoded.page_token,
            }
            assert [s.sequence for s in decoded.subscribers] == [6, 5, 4, 3, 2, 1]
            assert written == json.dumps(expected, separators=(",", ":")).encode()

            mistyped = page_as(MistypedPage, "mistyped_page")
            for call in (client.invoke_rpc, client.invoke_rpc_json):
                with pytest.raises(ValueMappingError) as raised:
                    await call(mistyped, FLOW_ID, page, options=loads("current"))
                assert raised.value.path == "subscribers[0].sequence"
                assert "expected str, got int" in str(raised.value)

    asyncio.run(main())


def test_the_json_output_raises_the_calls_errors(store_url: str) -> None:
    async def main() -> None:
        async with await AsyncClient.open(store_url) as client:
            await client.start_flow(FLOW, FLOW_ID)
            with pytest.raises(InvalidPageTokenError):
                await client.invoke_rpc_json(
                    FLOW.get_subscriber_page,
                    FLOW_ID,
                    GetSubscriberPageInput("99999999999999999901"),
                    options=loads("99999999999999999901"),
                )

    asyncio.run(main())


def test_many_calls_finishing_together_all_complete(store_url: str) -> None:
    async def main() -> None:
        async with await AsyncClient.open(store_url) as client:
            await client.start_flow(FLOW, FLOW_ID)
            reads = [
                client.invoke_rpc_json(
                    FLOW.get_subscriber_page,
                    FLOW_ID,
                    GetSubscriberPageInput("current"),
                    options=loads("current"),
                )
                for _ in range(40)
            ]
            pages = await asyncio.gather(*reads)
            assert {json.loads(page)["pageToken"] for page in pages} == {"current"}

    asyncio.run(main())
