"""``Client.metrics()`` reads the core's counters: calls by outcome, lock conflicts, commits
and the commit latency histogram move with the calls made."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path

import pytest
from archive_support import Archive, store_write_lock, subscriber_input

from attrflow import AsyncClient, Client, FlowNotFoundError, RpcLockConflictError
from attrflow.flows.chunked_subscriber import FLOW_ID
from attrflow.metrics import SPAN_RPC, Metrics, snapshot


def test_counters_follow_calls_conflicts_errors_and_commits(store_path: Path) -> None:
    with Client(f"sqlite:{store_path}?busy_timeout_ms=0") as client:
        archive = Archive(client)
        archive.start()
        before = client.metrics()
        archive.register(1)
        archive.register(2)
        with store_write_lock(store_path), pytest.raises(RpcLockConflictError):
            client.invoke_rpc(archive.flow.register_subscriber, FLOW_ID, subscriber_input(3))
        with pytest.raises(FlowNotFoundError):
            client.invoke_rpc(archive.flow.register_subscriber, "nobody", subscriber_input(4))
        after = client.metrics()

    assert after.calls_ok - before.calls_ok >= 2
    assert after.calls_lock_conflict - before.calls_lock_conflict == 1
    assert after.calls_error - before.calls_error == 1
    assert after.lock_conflicts - before.lock_conflicts == 1
    assert after.calls - before.calls >= 4
    assert after.commits - before.commits >= 1
    assert after.members_committed - before.members_committed >= 2
    bounds = [bound for bound, _ in after.commit_latency_buckets]
    counts = [count for _, count in after.commit_latency_buckets]
    assert bounds == sorted(bounds)
    assert math.isinf(bounds[-1])
    assert counts == sorted(counts)
    assert counts[-1] == after.commits
    assert after.commit_latency_sum_seconds > before.commit_latency_sum_seconds


def test_the_snapshot_is_a_plain_dataclass_shared_by_every_client(store_path: Path) -> None:
    client = AsyncClient(store_path)
    metrics = client.metrics()
    client.close()
    assert isinstance(metrics, Metrics)
    assert set(asdict(metrics)) >= {"calls_ok", "commits", "commit_latency_buckets"}
    assert snapshot().calls >= metrics.calls
    assert SPAN_RPC == "attrflow.rpc"
