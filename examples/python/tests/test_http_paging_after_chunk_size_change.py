"""After the archive moved to another chunk size (through the Python client on the same
store), the HTTP page route accepts the new layout's tokens and walks across the change."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_api import HttpClient, get_page, read_page, sequences
from attrflow import Client
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChangeChunkSizeInput,
    ChunkedSubscriberFlow,
    NewSubscriber,
    RegisterSubscribersInput,
)

from attrflow_examples.app import create_app


@pytest.mark.asyncio
async def test_pages_of_every_layout_are_served(tmp_path: Path) -> None:
    store = tmp_path / "attrflow.db"
    flow = ChunkedSubscriberFlow()
    with Client(store) as client:
        client.start_flow(flow, FLOW_ID)
        client.invoke_rpc(flow.change_chunk_size, FLOW_ID, ChangeChunkSizeInput(30))
        batch = [NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(1, 71)]
        client.invoke_rpc(flow.register_subscribers, FLOW_ID, RegisterSubscribersInput(batch))
    app = create_app(str(store))
    async with app.test_app() as test_app:
        http: HttpClient = test_app.test_client()
        newest = await read_page(http, "current")
        assert sequences(newest) == list(range(70, 60, -1))
        assert newest["nextPageToken"] == "00000000000000000031"
        older = await read_page(http, "00000000000000000031")
        assert sequences(older) == list(range(60, 30, -1))
        assert older["nextPageToken"] == "00000000000000000001"
        status, body = await get_page(http, "00000000000000000101")
        assert (status, body) == (400, {"error": 'invalid page token "00000000000000000101"'})
