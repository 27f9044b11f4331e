"""``GET /metrics``: the attrflow core's counters in the Prometheus text exposition format.

The counters are the process's (:mod:`attrflow.metrics`); ``prometheus_client`` writes
the format from one snapshot per scrape, so the families of one answer agree.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from attrflow.metrics import Metrics, snapshot
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from quart import Blueprint, Response

CALLS = "attrflow_rpc_calls"
"""RPC calls by ``outcome`` (``ok``, ``lock_conflict``, ``error``); exposed with ``_total``."""
LOCK_CONFLICTS = "attrflow_lock_conflicts"
"""Lock conflicts of RPC calls and flow starts."""
COMMITS = "attrflow_commits"
"""Successful COMMITs, each making one or more calls durable."""
MEMBERS_COMMITTED = "attrflow_committed_calls"
BATCHED_CALLS = "attrflow_batched_calls"
"""Calls and flow starts made durable by those commits."""
COMMIT_LATENCY = "attrflow_commit_latency_seconds"
"""A histogram of each COMMIT's latency."""


class AttrflowCollector(Collector):
    """Collects one :func:`attrflow.metrics.snapshot` as Prometheus metric families."""

    def collect(self) -> Iterator[Metric]:
        """The families of one snapshot."""
        yield from families(snapshot())


def families(metrics: Metrics) -> Iterator[Metric]:
    """``metrics`` as Prometheus metric families."""
    calls = CounterMetricFamily(CALLS, "RPC calls by outcome.", labels=["outcome"])
    calls.add_metric(["ok"], metrics.calls_ok)
    calls.add_metric(["lock_conflict"], metrics.calls_lock_conflict)
    calls.add_metric(["error"], metrics.calls_error)
    yield calls
    yield CounterMetricFamily(
        LOCK_CONFLICTS, "Lock conflicts of RPC calls and flow starts.", metrics.lock_conflicts
    )
    yield CounterMetricFamily(
        COMMITS, "Successful COMMITs (each holds one or more calls).", metrics.commits
    )
    yield CounterMetricFamily(
        MEMBERS_COMMITTED,
        "RPC calls and flow starts made durable by those COMMITs.",
        metrics.members_committed,
    )
    yield CounterMetricFamily(
        BATCHED_CALLS,
        "RPC calls handed to the store in a batch of two or more.",
        metrics.calls_batched,
    )
    yield HistogramMetricFamily(
        COMMIT_LATENCY,
        "Latency of each successful COMMIT.",
        buckets=[(_bound(bound), count) for bound, count in metrics.commit_latency_buckets],
        sum_value=metrics.commit_latency_sum_seconds,
    )


def create_metrics_blueprint() -> Blueprint:
    """The blueprint serving ``GET /metrics``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AttrflowCollector())
    blueprint = Blueprint("metrics", __name__)

    @blueprint.get("/metrics")
    async def metrics() -> Response:
        return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)

    return blueprint


def _bound(seconds: float) -> str:
    """A bucket's ``le`` label: ``+Inf``, or the bound as Python writes it (``0.00025``)."""
    return "+Inf" if math.isinf(seconds) else repr(seconds)
