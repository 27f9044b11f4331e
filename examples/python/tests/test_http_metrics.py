"""``GET /metrics`` of the real service answers the Prometheus text format, and the
counters in it follow the calls made: parsed with ``prometheus_client``'s own parser."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from service_process import REQUEST_TIMEOUT_SECONDS, ServiceProcess

from attrflow_examples.metrics_route import (
    BATCHED_CALLS,
    CALLS,
    COMMIT_LATENCY,
    COMMITS,
    LOCK_CONFLICTS,
    MEMBERS_COMMITTED,
)

PREFIX = "/patterns/sequentially-chunked-attribute-map"


def scrape(service: ServiceProcess) -> dict[str, Metric]:
    """The service's metric families by name."""
    url = f"{service.base_url}/metrics"
    with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_SECONDS) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def value(family: Metric, sample: str, **labels: str) -> float:
    """The value of the one sample of ``family`` named ``sample`` with ``labels``."""
    found = [s.value for s in family.samples if s.name == sample and s.labels == labels]
    assert len(found) == 1, (sample, labels, family.samples)
    return found[0]


def register(service: ServiceProcess, first: int, count: int) -> None:
    for n in range(first, first + count):
        status, _ = service.post(
            f"{PREFIX}/register",
            {"subscriberId": f"s-{n}", "deliveryAddress": f"s-{n}@example.com"},
        )
        assert status == 200


def test_metrics_count_the_calls_and_commits_of_the_service(store: str, tmp_path: Path) -> None:
    service = ServiceProcess(store, tmp_path / "service.log")
    service.start()
    try:
        register(service, 1, 3)
        before = scrape(service)
        register(service, 4, 5)
        after = scrape(service)
    finally:
        service.kill()

    assert {
        CALLS,
        LOCK_CONFLICTS,
        COMMITS,
        MEMBERS_COMMITTED,
        BATCHED_CALLS,
        COMMIT_LATENCY,
    } <= set(after)
    assert value(after[BATCHED_CALLS], f"{BATCHED_CALLS}_total") >= 0
    assert after[CALLS].type == "counter"
    assert after[COMMIT_LATENCY].type == "histogram"

    def ok_calls(families: dict[str, Metric]) -> float:
        return value(families[CALLS], f"{CALLS}_total", outcome="ok")

    assert ok_calls(before) >= 3
    assert ok_calls(after) - ok_calls(before) >= 5
    assert value(after[CALLS], f"{CALLS}_total", outcome="error") >= 0
    assert value(after[LOCK_CONFLICTS], f"{LOCK_CONFLICTS}_total") >= 0

    commits = value(after[COMMITS], f"{COMMITS}_total")
    members = value(after[MEMBERS_COMMITTED], f"{MEMBERS_COMMITTED}_total")
    assert commits >= 1
    assert commits - value(before[COMMITS], f"{COMMITS}_total") >= 1
    assert members >= commits, "a commit holds one call or more"
    members_before = value(before[MEMBERS_COMMITTED], f"{MEMBERS_COMMITTED}_total")
    assert members - members_before >= 5, "every register wrote, so each one was committed"

    histogram = after[COMMIT_LATENCY]
    buckets = [
        (float(s.labels["le"]), s.value)
        for s in histogram.samples
        if s.name == f"{COMMIT_LATENCY}_bucket"
    ]
    assert len(buckets) >= 2
    assert [bound for bound, _ in buckets] == sorted(bound for bound, _ in buckets)
    counts = [count for _, count in buckets]
    assert counts == sorted(counts), "bucket counts are cumulative"
    assert buckets[-1] == (float("inf"), commits)
    assert value(histogram, f"{COMMIT_LATENCY}_count") == commits
    assert value(histogram, f"{COMMIT_LATENCY}_sum") > 0
