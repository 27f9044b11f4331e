"""Reading a chunk the call did not load raises AttributeMapNotLoadedError, never an empty
page: absent and not loaded must not look alike."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import AttrflowError, AttributeMapNotLoadedError, Client, RPCInvokeOptions
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow, GetSubscriberPageInput


def test_a_page_read_without_its_load_fails(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    archive.register(1)
    # Without options the core plans the page's load; options naming another load win.
    other = RPCInvokeOptions(
        load_attribute_map_instances=(flow.subscriber_chunks.load("00000000000000000001"),)
    )
    with pytest.raises(AttributeMapNotLoadedError) as raised:
        client.invoke_rpc(
            flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput("current"), options=other
        )
    assert (
        str(raised.value)
        == "AttributeMap instance was not loaded for RPC: subscriber_chunks/current"
    )
    assert raised.value.physical_name == "subscriber_chunks/current"
    assert isinstance(raised.value, AttrflowError)
    assert not isinstance(raised.value, KeyError)


def test_loading_another_instance_does_not_help(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    for n in range(1, 102):
        archive.register(n)
    wrong = RPCInvokeOptions(load_attribute_map_instances=(flow.subscriber_chunks.load("current"),))
    with pytest.raises(AttributeMapNotLoadedError, match="subscriber_chunks/00000000000000000001"):
        client.invoke_rpc(
            flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput("00000000000000000001"),
            options=wrong,
        )


def test_a_page_read_without_options_is_planned_by_the_core(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    for n in range(1, 102):
        archive.register(n)
    page = client.invoke_rpc(
        flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput("00000000000000000001")
    )
    assert [s.sequence for s in page.subscribers] == list(range(100, 0, -1))
