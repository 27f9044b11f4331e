"""Two processes appending to one store file at once give exactly 1..N, no duplicate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from archive_support import Archive

from attrflow import Client

PER_PROCESS = 60

APPENDER = """
import json, random, sys, time
from attrflow import Client, RpcLockConflictError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID, ChunkedSubscriberFlow, RegisterSubscriberInput)
flow = ChunkedSubscriberFlow()
name, count = sys.argv[2], int(sys.argv[3])
sys.stdin.readline()  # start together
added = {}
with Client(sys.argv[1]) as client:
    for n in range(count):
        subscriber_id = f"{name}-{n:03d}"
        while True:
            try:
                added[subscriber_id] = client.invoke_rpc(flow.register_subscriber, FLOW_ID,
                    RegisterSubscriberInput(subscriber_id, subscriber_id + "@example.com")).sequence
                break
            except RpcLockConflictError:
                time.sleep(random.random() / 1000)
print(json.dumps(added))
"""


def test_two_processes_append_without_losing_or_duplicating(store_url: str, tmp_path: Path) -> None:
    with Client(store_url) as client:
        Archive(client).start()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, store_url, name, str(PER_PROCESS)],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    added: dict[str, int] = {}
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        added.update(json.loads(out))

    total = 2 * PER_PROCESS
    assert sorted(added.values()) == list(range(1, total + 1))
    with Client(store_url) as client:
        everyone = Archive(client).all_subscribers()
    assert [s.sequence for s in everyone] == list(range(total, 0, -1))
    assert {s.subscriber_id: s.sequence for s in everyone} == added
