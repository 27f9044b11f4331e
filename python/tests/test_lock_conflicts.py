"""Lock conflicts really happen, fail fast, and write nothing.

Both tests are deterministic: another process holds the store file's write lock (a plain
sqlite3 connection in BEGIN IMMEDIATE), so an append that got its in-process locks stays
inside the core, holding them, for as long as the test wants. (The holder must be another
process: SQLite's file locks do not separate two SQLite libraries in one process.)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from archive_support import (
    IN_PROCESS_CONFLICT,
    Archive,
    retry_on_conflict,
    store_write_lock,
    subscriber_input,
)

from attrflow import Client, RpcLockConflictError
from attrflow.flows.chunked_subscriber import FLOW_ID, Subscriber


def test_a_busy_store_is_a_lock_conflict_that_writes_nothing(store_path: Path) -> None:
    with Client(f"sqlite:{store_path}?busy_timeout_ms=0") as client:
        archive = Archive(client)
        archive.start()
        with store_write_lock(store_path), pytest.raises(RpcLockConflictError) as raised:
            client.invoke_rpc(archive.flow.register_subscriber, FLOW_ID, subscriber_input(1))
        assert "is busy" in str(raised.value)
        assert archive.register(2).sequence == 1
        assert [s.subscriber_id for s in archive.page("current").subscribers] == ["subscriber-002"]


def test_an_append_holding_its_locks_makes_another_fail_fast(store_path: Path) -> None:
    """While one append holds the state and `current` locks (blocked inside the core on the
    store's write lock, with the GIL released), a second append fails at once with an
    in-process lock conflict instead of waiting; it never writes."""
    with (
        Client(f"sqlite:{store_path}?busy_timeout_ms=120000") as patient,
        Client(f"sqlite:{store_path}?busy_timeout_ms=0") as hasty,
    ):
        archive = Archive(patient)
        archive.start()
        outcome: dict[str, Subscriber] = {}
        failures: list[BaseException] = []
        seen: list[str] = []

        def append_patiently() -> None:
            try:
                outcome["patient"], _ = retry_on_conflict(
                    lambda: patient.invoke_rpc(
                        archive.flow.register_subscriber, FLOW_ID, subscriber_input(1)
                    )
                )
            except BaseException as error:  # reported by the main thread
                failures.append(error)

        with store_write_lock(store_path):
            thread = threading.Thread(target=append_patiently)
            thread.start()
            deadline = time.monotonic() + 120  # a bound against hanging, not a timing check
            while time.monotonic() < deadline:
                with pytest.raises(RpcLockConflictError) as raised:
                    hasty.invoke_rpc(archive.flow.register_subscriber, FLOW_ID, subscriber_input(2))
                seen.append(str(raised.value))
                if IN_PROCESS_CONFLICT in seen[-1]:
                    break
                time.sleep(0.001)
        thread.join()

        assert failures == []
        assert IN_PROCESS_CONFLICT in seen[-1]
        assert "subscriber_archive_state" in seen[-1]
        assert "subscriber_chunks/current" in seen[-1]
        assert outcome["patient"].sequence == 1
        page = archive.page("current")
        assert [s.subscriber_id for s in page.subscribers] == ["subscriber-001"]
