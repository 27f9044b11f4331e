"""Data survives closing the store and reopening it in a new process, both ways round."""

from __future__ import annotations

import json

from archive_support import Archive, RunPython

from attrflow import Client

CHILD_WRITES = """
import sys
from attrflow import Client, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID, ChunkedSubscriberFlow, RegisterSubscriberInput)
flow = ChunkedSubscriberFlow()
with Client(sys.argv[1]) as client:
    client.start_flow(flow, FLOW_ID, options=StartFlowOptions(ignore_already_started=True))
    for n in range(1, int(sys.argv[2]) + 1):
        subscriber = RegisterSubscriberInput(f"child-{n}", f"child-{n}@example.com")
        client.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber)
"""

CHILD_READS = """
import json, sys
from attrflow import Client, RPCInvokeOptions
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow, GetSubscriberPageInput
flow = ChunkedSubscriberFlow()
seen = []
with Client(sys.argv[1]) as client:
    token = "current"
    while token:
        page = client.invoke_rpc(flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput(token),
            options=RPCInvokeOptions(load_attribute_map_instances=(flow.subscriber_chunks.load(token),)))
        seen.extend([s.sequence, s.subscriber_id] for s in page.subscribers)
        token = page.next_page_token
print(json.dumps(seen))
"""


def test_a_child_writes_and_the_parent_reads(store_url: str, run_python: RunPython) -> None:
    run_python(CHILD_WRITES, store_url, "150")
    with Client(store_url) as client:
        archive = Archive(client)
        current = archive.page("current")
        assert [s.sequence for s in current.subscribers] == list(range(150, 100, -1))
        assert current.next_page_token == "00000000000000000001"
        everyone = archive.all_subscribers()
    assert [s.subscriber_id for s in everyone] == [f"child-{n}" for n in range(150, 0, -1)]


def test_the_parent_writes_and_a_child_reads(store_url: str, run_python: RunPython) -> None:
    with Client(store_url) as client:
        archive = Archive(client)
        archive.start()
        for n in range(1, 106):
            archive.register(n)
    result = run_python(CHILD_READS, store_url)
    seen = json.loads(result.stdout)
    assert seen == [[n, f"subscriber-{n:03d}"] for n in range(105, 0, -1)]


def test_a_reopened_store_continues_the_sequence(store_url: str, run_python: RunPython) -> None:
    run_python(CHILD_WRITES, store_url, "3")
    with Client(store_url) as client:
        assert Archive(client).register(4).sequence == 4
    run_python(CHILD_WRITES, store_url, "2")
    seen = json.loads(run_python(CHILD_READS, store_url).stdout)
    assert [sequence for sequence, _ in seen] == [6, 5, 4, 3, 2, 1]
