"""The targets of BENCHMARKS.md, each a ratio measured within one run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attrflow_bench.results import Results
from attrflow_bench.stats import Summary, ratios


@dataclass(frozen=True)
class Target:
    """One goal: a figure (a ratio, or MiB for memory), its bound, and which side passes."""

    key: str
    title: str
    measure: Callable[[Results], list[float]]
    bound: float
    at_most: bool = False
    unit: str = "×"

    def goal(self) -> str:
        """The goal as text (``≥ 0.8×``)."""
        return f"{'≤' if self.at_most else '≥'} {self.bound:g}{self.unit}"

    def evaluate(self, results: Results) -> tuple[Summary, bool]:
        """The figure's summary and whether its median meets the goal."""
        summary = Summary.of(self.measure(results))
        met = summary.median <= self.bound if self.at_most else summary.median >= self.bound
        return summary, met


def _ratio(numerator: str, denominator: str) -> Callable[[Results], list[float]]:
    return lambda results: ratios(results.values(numerator), results.values(denominator))


def _growth(results: Results) -> list[float]:
    sizes = results.facts["growth.config"]["sizes"]
    return ratios(
        results.values(f"growth.chunked_register_us@{max(sizes)}"),
        results.values(f"growth.chunked_register_us@{min(sizes)}"),
    )


def all_targets(sizes: list[int]) -> list[Target]:
    """Every target, the growth one named for the history sizes of this run."""
    low, high = min(sizes), max(sizes)
    return [
        Target("1", f"register latency at {high:,} records / at {low:,}", _growth, 1.2, True),
        Target(
            "2-full",
            "durable append, FULL: attrflow Rust API / raw rusqlite (appends/s)",
            _ratio("durable.attrflow_appends_per_s@full", "durable.raw_appends_per_s@full"),
            0.8,
        ),
        Target(
            "2-normal",
            "durable append, NORMAL: attrflow Rust API / raw rusqlite (appends/s)",
            _ratio("durable.attrflow_appends_per_s@normal", "durable.raw_appends_per_s@normal"),
            0.8,
        ),
        Target(
            "3-sync-register",
            "Python `Client.invoke_rpc` register / Rust-native (calls/s)",
            _ratio("python_sync.register_per_s", "native.register_per_s"),
            0.8,
        ),
        Target(
            "3-async-register",
            "Python `AsyncClient.invoke_rpc` register / Rust-native (calls/s)",
            _ratio("python_async.register_per_s", "native.register_per_s"),
            0.8,
        ),
        Target(
            "3-sync-page",
            "Python `Client.invoke_rpc` archived page / Rust-native (calls/s)",
            _ratio("python_sync.page_per_s", "native.page_per_s"),
            0.7,
        ),
        Target(
            "3-async-page",
            "Python `AsyncClient.invoke_rpc` archived page / Rust-native (calls/s)",
            _ratio("python_async.page_per_s", "native.page_per_s"),
            0.7,
        ),
        *python_targets(),
        Target(
            "4-append-full",
            "appends/s, attrflow FULL / Redis XADD appendfsync always",
            _ratio("attrflow.register_per_s@full", "redis.xadd_per_s@full"),
            1.0,
        ),
        Target(
            "4-append-normal",
            "appends/s, attrflow NORMAL / Redis XADD appendfsync everysec",
            _ratio("attrflow.register_per_s@normal", "redis.xadd_per_s@normal"),
            1.0,
        ),
        Target(
            "4-page",
            "newest 100-record page, speed: Redis XREVRANGE latency / attrflow `current` latency",
            _ratio("redis.xrevrange_us@normal", "attrflow.current_page_us@normal"),
            1.0,
        ),
        Target(
            "5",
            "peak RSS of the service paging through the 1,000,000-record store",
            lambda results: results.values("memory.peak_rss_mib"),
            100.0,
            True,
            " MiB",
        ),
    ]


def python_targets() -> list[Target]:
    """Section 3b's targets: Python concurrency against Rust threads, HTTP against the floor."""
    return [
        Target(
            "3-concurrent-normal",
            "16 `AsyncClient` tasks / 16 Rust threads, appends/s, NORMAL",
            _ratio("python_concurrent.appends_per_s@normal", "concurrent.appends_per_s@normal"),
            0.8,
        ),
        Target(
            "3-concurrent-full",
            "16 `AsyncClient` tasks / 16 Rust threads, appends/s, FULL",
            _ratio("python_concurrent.appends_per_s@full", "concurrent.appends_per_s@full"),
            0.8,
        ),
        Target(
            "3-http-page",
            "HTTP archived page / bare-ASGI floor (req/s, 16 connections)",
            _ratio("http16.service_page_per_s", "http16.floor_per_s"),
            0.25,
        ),
        Target(
            "3-http-register-p99",
            "HTTP register p99, 16 connections (FULL)",
            lambda results: results.values("http16.register_p99_ms"),
            20.0,
            True,
            " ms",
        ),
    ]
