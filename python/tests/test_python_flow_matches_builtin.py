"""A flow module written for the Dex Python SDK runs on the core with only its imports
changed, and its archive equals the built-in Rust ChunkedSubscriberFlow's, page for page,
in both directions: each flow type reads the rows the other wrote."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from archive_support import Archive, subscriber_input
from python_flow_support import dex, dex_page, start_options

from attrflow import Client, RPCInvokeOptions, WorkerInvocationError
from attrflow.flows.chunked_subscriber import GetSubscriberPageInput

REGISTRATIONS = 250
PYTHON_FLOW_ID = "python-chunked-subscriber-archive"
TOKENS = ("current", "00000000000000000101", "00000000000000000001")


@pytest.fixture
def python_client(store_url: str) -> Iterator[Client]:
    """A second client on the same store, in which the name ChunkedSubscriberFlow belongs
    to the Python flow type (the first client's is the built-in one)."""
    with Client(store_url) as client:
        yield client


def python_page(client: Client, flow_id: str, token: str) -> dict[str, Any]:
    return dataclasses.asdict(dex_page(client, flow_id, token))


def builtin_page(archive: Archive, flow_id: str, token: str) -> dict[str, Any]:
    page = archive.client.invoke_rpc(
        archive.flow.get_subscriber_page,
        flow_id,
        GetSubscriberPageInput(token),
        options=RPCInvokeOptions(
            load_attribute_map_instances=(archive.flow.subscriber_chunks.load(token),)
        ),
    )
    return dataclasses.asdict(page)


def test_the_dex_style_flow_pages_like_the_builtin_flow(archive: Archive, python_client: Client):
    flow = dex.ChunkedSubscriberFlow()
    python_client.start_flow(flow, PYTHON_FLOW_ID, None, start_options())
    for n in range(1, REGISTRATIONS + 1):
        builtin = archive.register(n)
        given = subscriber_input(n)
        python = python_client.invoke_rpc(
            flow.register_subscriber,
            PYTHON_FLOW_ID,
            dex.RegisterSubscriberInput(given.subscriber_id, given.delivery_address),
        )
        assert dataclasses.asdict(python) == dataclasses.asdict(builtin)

    for token in TOKENS:
        expected = dataclasses.asdict(archive.page(token))
        assert python_page(python_client, PYTHON_FLOW_ID, token) == expected
        # Each flow type reads the rows the other one wrote.
        assert builtin_page(archive, PYTHON_FLOW_ID, token) == expected
        assert python_page(python_client, dex.FLOW_ID, token) == expected
    assert [
        s["sequence"] for s in python_page(python_client, PYTHON_FLOW_ID, "current")["subscribers"]
    ] == list(range(REGISTRATIONS, 200, -1))


def test_the_dex_style_flow_reports_its_own_errors(python_client: Client):
    flow = dex.ChunkedSubscriberFlow()
    python_client.start_flow(flow, PYTHON_FLOW_ID, None, start_options())
    with pytest.raises(WorkerInvocationError, match="subscriberId is required") as raised:
        python_client.invoke_rpc(
            flow.register_subscriber, PYTHON_FLOW_ID, dex.RegisterSubscriberInput("", "x")
        )
    assert raised.value.worker_error_type == "ValueError"
    with pytest.raises(WorkerInvocationError, match='subscriber page "00000000000000000301"'):
        python_page(python_client, PYTHON_FLOW_ID, "00000000000000000301")
    with pytest.raises(WorkerInvocationError, match='invalid page token "00000000000000000002"'):
        python_page(python_client, PYTHON_FLOW_ID, "00000000000000000002")
