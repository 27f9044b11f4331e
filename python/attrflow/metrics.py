"""The core's counters of this process: RPC calls by outcome, lock conflicts, commits, the
calls they made durable, and a commit latency histogram (fixed buckets, in seconds).

Every client in a process counts into the same counters; each only grows. The core also
traces every RPC call as ``tracing`` spans named by the ``SPAN_*`` constants here (seen by
a Rust ``tracing`` subscriber, not by Python's ``logging``).

>>> import tempfile, os
>>> from attrflow import Client
>>> from attrflow.flows.chunked_subscriber import (
...     FLOW_ID, ChunkedSubscriberFlow, RegisterSubscriberInput)
>>> flow = ChunkedSubscriberFlow()
>>> with tempfile.TemporaryDirectory() as folder, Client(os.path.join(folder, "a.db")) as client:
...     before = client.metrics()
...     _ = client.start_flow(flow, FLOW_ID)
...     _ = client.invoke_rpc(
...         flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s-1", "s-1@example.com"))
...     after = client.metrics()
>>> after.calls_ok - before.calls_ok, after.commits - before.commits >= 1
(1, True)
>>> after.commit_latency_buckets[-1] == (float("inf"), after.commits)
True
"""

from __future__ import annotations

from dataclasses import dataclass

from attrflow import _native

__all__ = [
    "SPAN_COMMIT",
    "SPAN_HANDLER",
    "SPAN_LOCK_WAIT",
    "SPAN_RPC",
    "Metrics",
    "snapshot",
]

SPAN_RPC: str = _native.METRICS_SPAN_RPC
"""One RPC call, with the fields ``flow_type``, ``flow_id``, ``rpc`` and ``outcome``."""
SPAN_LOCK_WAIT: str = _native.METRICS_SPAN_LOCK_WAIT
"""Waiting for the store's writer turn and taking the call's locks."""
SPAN_HANDLER: str = _native.METRICS_SPAN_HANDLER
"""The RPC handler itself."""
SPAN_COMMIT: str = _native.METRICS_SPAN_COMMIT
"""One COMMIT of a group of calls, with the field ``members``."""


@dataclass(frozen=True)
class Metrics:
    """The process's counters at one moment.

    Attributes:
        calls_ok: RPC calls that returned a value.
        calls_lock_conflict: RPC calls that failed with a lock conflict.
        calls_error: RPC calls that failed with any other error.
        lock_conflicts: Lock conflicts of RPC calls and flow starts.
        commits: Successful COMMITs (each holds one or more calls).
        members_committed: Calls and flow starts those commits made durable.
        calls_batched: RPC calls handed to the store in a batch of two or more (an
            ``AsyncClient`` hands over the calls its tasks queue together, to run as
            one group), whatever their outcome.
        commit_latency_buckets: ``(upper bound in seconds, commits at most that slow)``,
            bounds ascending, counts cumulative, ending with ``(inf, commits)``.
        commit_latency_sum_seconds: The commits' total latency.
    """

    calls_ok: int
    calls_lock_conflict: int
    calls_error: int
    lock_conflicts: int
    commits: int
    members_committed: int
    calls_batched: int
    commit_latency_buckets: tuple[tuple[float, int], ...]
    commit_latency_sum_seconds: float

    @property
    def calls(self) -> int:
        """RPC calls of every outcome."""
        return self.calls_ok + self.calls_lock_conflict + self.calls_error


def snapshot() -> Metrics:
    """Reads the process's counters."""
    native = _native.metrics_snapshot()
    return Metrics(
        calls_ok=native.calls_ok,
        calls_lock_conflict=native.calls_lock_conflict,
        calls_error=native.calls_error,
        lock_conflicts=native.lock_conflicts,
        commits=native.commits,
        members_committed=native.members_committed,
        calls_batched=native.calls_batched,
        commit_latency_buckets=tuple(native.commit_latency_buckets),
        commit_latency_sum_seconds=native.commit_latency_sum_seconds,
    )
