"""Writes a subscriber archive with the Python package and records the pages Python reads
from it, so the Kotlin tests can check that they read the same file the same way.

Usage: python write_store.py STORE PAGES
"""

from __future__ import annotations

import sys

from attrflow import Client, RPCInvokeOptions, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
)

SUBSCRIBERS = 150


def main(store: str, pages_path: str) -> None:
    flow = ChunkedSubscriberFlow()
    lines: list[str] = []
    with Client(store) as client:
        client.start_flow(
            flow, FLOW_ID, None, StartFlowOptions(ignore_already_started=True)
        )
        for n in range(1, SUBSCRIBERS + 1):
            subscriber_id = f"python-{n:03}"
            client.invoke_rpc(
                flow.register_subscriber,
                FLOW_ID,
                RegisterSubscriberInput(subscriber_id, f"{subscriber_id}@example.com"),
            )
        token = "current"
        while token:
            page = client.invoke_rpc(
                flow.get_subscriber_page,
                FLOW_ID,
                GetSubscriberPageInput(token),
                options=RPCInvokeOptions(
                    load_attribute_map_instances=(flow.subscriber_chunks.load(token),)
                ),
            )
            for s in page.subscribers:
                fields = (
                    page.page_token,
                    s.sequence,
                    s.subscriber_id,
                    s.delivery_address,
                )
                lines.append("\t".join(map(str, (*fields, page.next_page_token))))
            token = page.next_page_token
    with open(pages_path, "w", encoding="utf-8") as pages:
        pages.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
