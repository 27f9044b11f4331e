"""The store file holds camelCase JSON, readable by every attrflow front end."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from archive_support import Archive

from attrflow import Client, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
    Subscriber,
    SubscriberArchiveState,
    SubscriberChunk,
)


def stored_values(path: Path) -> dict[str, object]:
    """Every value of the archive flow, read with Python's own sqlite3 after the client is
    closed (two SQLite libraries must not hold one file open in one process at once)."""
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT name, value FROM attribute_values WHERE flow_id = ?", (FLOW_ID,)
        ).fetchall()
    finally:
        connection.close()
    return {name: json.loads(value) for name, value in rows}


def test_state_and_chunks_use_camel_case(store_path: Path) -> None:
    with Client(store_path) as client:
        archive = Archive(client)
        archive.start()
        for n in range(1, 103):
            archive.register(n)
    values = stored_values(store_path)
    assert values["subscriber_archive_state"] == {
        "nextSequence": 103,
        "latestArchivedChunkToken": "00000000000000000001",
    }
    assert values["subscriber_chunks/current"] == {
        "subscribers": [
            {
                "sequence": 101,
                "subscriberId": "subscriber-101",
                "deliveryAddress": "subscriber-101@example.com",
            },
            {
                "sequence": 102,
                "subscriberId": "subscriber-102",
                "deliveryAddress": "subscriber-102@example.com",
            },
        ]
    }
    archived = values["subscriber_chunks/00000000000000000001"]
    assert isinstance(archived, dict)
    assert len(archived["subscribers"]) == 100


def test_initial_values_from_python_are_stored_in_camel_case(store_path: Path) -> None:
    flow = ChunkedSubscriberFlow()
    seeded = [Subscriber(n, f"s-{n}", f"s-{n}@example.com") for n in (1, 2)]
    options = (
        StartFlowOptions()
        .with_attribute(flow.archive_state, SubscriberArchiveState(next_sequence=3))
        .with_attribute(flow.subscriber_chunks, "current", SubscriberChunk(seeded))
    )
    with Client(store_path) as client:
        client.start_flow(flow, FLOW_ID, options=options)
    raw = sqlite3.connect(store_path)
    try:
        (text,) = raw.execute(
            "SELECT value FROM attribute_values WHERE name = 'subscriber_archive_state'"
        ).fetchone()
    finally:
        raw.close()
    assert "nextSequence" in text
    assert "next_sequence" not in text
    # The mirror carries every field of the core's state; the core reads the empty
    # layout history, the absent window, the first sequence as the oldest retained one
    # and the absent retention as the defaults it leaves out itself.
    assert json.loads(text) == {
        "nextSequence": 3,
        "latestArchivedChunkToken": "",
        "layouts": [],
        "idempotencyWindow": None,
        "oldestSequence": 1,
        "retention": None,
    }
    with Client(store_path) as client:
        added = client.invoke_rpc(
            flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s", "s@example.com")
        )
    assert added.sequence == 3
