"""The Python snippet of the sequentially chunked AttributeMap page runs verbatim."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from attrflow import AsyncClient, RPCInvokeOptions, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
)


@dataclass
class AppState:
    client: AsyncClient


def test_the_seed_snippet_reads_a_page(store_path: Path) -> None:
    async def main() -> None:
        flow = ChunkedSubscriberFlow()
        async with AsyncClient(store_path) as client:
            app_state = AppState(client)
            await client.start_flow(
                flow, FLOW_ID, options=StartFlowOptions(ignore_already_started=True)
            )
            await client.invoke_rpc(
                flow.register_subscriber,
                FLOW_ID,
                RegisterSubscriberInput("subscriber-001", "subscriber-001@example.com"),
            )
            page_token = "current"

            # The seed document's snippet, verbatim.
            page = await app_state.client.invoke_rpc(
                flow.get_subscriber_page,
                FLOW_ID,
                GetSubscriberPageInput(page_token),
                options=RPCInvokeOptions(
                    load_attribute_map_instances=(flow.subscriber_chunks.load(page_token),)
                ),
            )

            assert page.page_token == "current"
            assert [s.subscriber_id for s in page.subscribers] == ["subscriber-001"]
            assert page.subscribers[0].delivery_address == "subscriber-001@example.com"
            assert page.subscribers[0].sequence == 1
            assert page.next_page_token == ""

    asyncio.run(main())
