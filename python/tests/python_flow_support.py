"""Helpers of the tests of the Dex-idiom ChunkedSubscriberFlow written in Python
(``dex_idiom/``): its start options, as Dex's controller builds them, and one page."""

from __future__ import annotations

from dex_idiom.patterns.sequentially_chunked_attribute_map import chunked_subscriber_flow as dex

from attrflow import Client, RPCInvokeOptions, StartFlowOptions

__all__ = ["dex", "dex_page", "start_options"]


def start_options() -> StartFlowOptions:
    """The initial state and empty ``current`` chunk the pattern starts with."""
    flow = dex.ChunkedSubscriberFlow()
    return (
        StartFlowOptions(ignore_already_started=True)
        .with_attribute(flow.archive_state, dex.SubscriberArchiveState(next_sequence=1))
        .with_attribute(flow.subscriber_chunks, dex.CURRENT_CHUNK_INSTANCE, dex.SubscriberChunk([]))
    )


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
