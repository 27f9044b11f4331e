"""Helpers of the tests of the Dex-style ChunkedSubscriberFlow written in Python."""

from __future__ import annotations

import dex_style_chunked_subscriber as dex

from attrflow import Client, RPCInvokeOptions


def dex_page(client: Client, flow_id: str, token: str) -> dex.SubscriberPage:
    """One page of the Python flow ``flow_id``, loading the token's chunk."""
    flow = dex.ChunkedSubscriberFlow()
    return client.invoke_rpc(
        flow.get_subscriber_page,
        flow_id,
        dex.GetSubscriberPageInput(token),
        options=RPCInvokeOptions(
            load_attribute_map_instances=(flow.subscriber_chunks.load(token),)
        ),
    )
