"""Writes or reads a subscriber archive with the ChunkedSubscriberFlow defined in Python (the
Dex-idiom flow module of the Python tests), so the Kotlin tests can check that a flow
defined in Kotlin with the same layout reads its rows and writes rows it reads.

Usage: python python_flow_store.py write STORE FLOW_ID COUNT
       python python_flow_store.py read STORE FLOW_ID
`read` prints every page, newest first, one subscriber a line:
page token, sequence, subscriber ID, delivery address, next page token (tab-separated).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[6] / "python" / "tests"))

from attrflow import Client
from python_flow_support import dex, dex_page, start_options


def write(store: str, flow_id: str, count: int) -> None:
    flow = dex.ChunkedSubscriberFlow()
    with Client(store, built_in_flows=False) as client:
        client.start_flow(flow, flow_id, None, start_options())
        for n in range(1, count + 1):
            subscriber_id = f"python-{n:03}"
            client.invoke_rpc(
                flow.register_subscriber,
                flow_id,
                dex.RegisterSubscriberInput(
                    subscriber_id, f"{subscriber_id}@example.com"
                ),
            )


def read(store: str, flow_id: str) -> list[str]:
    lines = []
    with Client(store, built_in_flows=False) as client:
        token = dex.CURRENT_CHUNK_INSTANCE
        while token:
            page = dex_page(client, flow_id, token)
            for s in page.subscribers:
                fields = (
                    page.page_token,
                    s.sequence,
                    s.subscriber_id,
                    s.delivery_address,
                )
                lines.append("\t".join(map(str, (*fields, page.next_page_token))))
            token = page.next_page_token
    return lines


def main(argv: list[str]) -> None:
    match argv:
        case ["write", store, flow_id, count]:
            write(store, flow_id, int(count))
        case ["read", store, flow_id]:
            print("\n".join(read(store, flow_id)))
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
