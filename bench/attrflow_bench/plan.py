"""How big each part of a run is: the full ``make bench`` run, or the seconds-long smoke run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """Sizes and repeat counts of one run."""

    repeats: int
    fsync_samples: int
    growth_sizes: tuple[int, ...]
    growth_appends: int
    naive_appends: int
    durable_appends: int
    client_history: int
    client_calls: int
    durable_client_calls: int
    page_calls: int
    http_seconds: int
    http_connections: tuple[int, ...]
    memory_records: int
    memory_repeats: int
    concurrent_workers: int = 16
    concurrent_appends: int = 50


FULL = Plan(
    repeats=5,
    fsync_samples=200,
    growth_sizes=(1_000, 3_000, 10_000, 30_000, 100_000),
    growth_appends=200,
    naive_appends=10,
    durable_appends=300,
    client_history=1_000,
    client_calls=2_000,
    durable_client_calls=300,
    page_calls=1_000,
    http_seconds=3,
    http_connections=(1, 16),
    memory_records=1_000_000,
    memory_repeats=3,
)

SMOKE = Plan(
    repeats=2,
    fsync_samples=3,
    growth_sizes=(1, 150),
    growth_appends=3,
    naive_appends=2,
    durable_appends=3,
    client_history=250,
    client_calls=5,
    durable_client_calls=3,
    page_calls=5,
    http_seconds=1,
    http_connections=(1, 2),
    memory_records=250,
    memory_repeats=2,
    concurrent_workers=4,
    concurrent_appends=3,
)
