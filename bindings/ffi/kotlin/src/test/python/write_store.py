"""Writes a subscriber archive and an app log with the Python package and records every
page Python reads back, one entry a line, so the Kotlin tests can check that they read the
same file the same way.

Usage: python write_store.py STORE PAGES
"""

from __future__ import annotations

import json
import sys

from attrflow import Client, RPCInvokeOptions, StartFlowOptions
from attrflow.flows.app_log import AppendLogRecordInput, ChunkedLogFlow, GetLogPageInput
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
)

SUBSCRIBERS = 150
APP_FLOW_ID = "python-app"
LOG = "audit"
LOG_RECORDS = 120


def subscriber_lines(client: Client) -> list[str]:
    """Registers the subscribers, then pages them back as `subscribers` lines."""
    flow = ChunkedSubscriberFlow()
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
    lines = []
    token = "current"
    while token:
        load = flow.subscriber_chunks.load(token)
        page = client.invoke_rpc(
            flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput(token),
            options=RPCInvokeOptions(load_attribute_map_instances=(load,)),
        )
        for s in page.subscribers:
            fields = (
                s.sequence,
                s.subscriber_id,
                s.delivery_address,
                page.next_page_token,
            )
            lines.append("\t".join(map(str, ("subscribers", page.page_token, *fields))))
        token = page.next_page_token
    return lines


def log_lines(client: Client) -> list[str]:
    """Appends the app-log records, then pages them back as `log` lines."""
    flow = ChunkedLogFlow()
    client.start_flow(
        flow, APP_FLOW_ID, None, StartFlowOptions(ignore_already_started=True)
    )
    for n in range(1, LOG_RECORDS + 1):
        record = {"event": f"python-{n}", "n": n}
        options = flow.append_options(LOG)
        client.invoke_rpc(
            flow.append_log_record,
            APP_FLOW_ID,
            AppendLogRecordInput(LOG, record),
            options=options,
        )
    lines = []
    token = "current"
    while token:
        page = client.invoke_rpc(
            flow.get_log_page,
            APP_FLOW_ID,
            GetLogPageInput(LOG, token),
            options=flow.page_options(LOG, token),
        )
        for e in page.entries:
            record_json = json.dumps(e.record, sort_keys=True, separators=(",", ":"))
            fields = (e.sequence, record_json, page.next_page_token)
            lines.append("\t".join(map(str, ("log", page.page_token, *fields))))
        token = page.next_page_token
    return lines


def main(store: str, pages_path: str) -> None:
    with Client(store) as client:
        lines = subscriber_lines(client) + log_lines(client)
    with open(pages_path, "w", encoding="utf-8") as pages:
        pages.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
