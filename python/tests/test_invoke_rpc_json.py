"""``AsyncClient.invoke_rpc_json``: the output as compact JSON bytes written by the native
module, exactly what ``json.dumps`` writes for the decoded output's camelCase fields in their
declared order, and the same errors as ``invoke_rpc``; and many calls finishing together
all complete their awaits."""

from __future__ import annotations

import asyncio
import json

import pytest

from attrflow import AsyncClient, InvalidPageTokenError, RPCInvokeOptions
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


def test_the_json_output_is_what_json_dumps_writes_for_the_decoded_output(
    store_url: str,
) -> None:
    async def main() -> None:
        async with await AsyncClient.open(store_url) as client:
            await client.start_flow(FLOW, FLOW_ID)
            for subscriber_id in AWKWARD_IDS:
                await client.invoke_rpc(
                    FLOW.register_subscriber,
                    FLOW_ID,
                    RegisterSubscriberInput(subscriber_id, "a@example.com"),
                )
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
