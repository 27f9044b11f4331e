"""The parts of a run, each adding its series to the run's results."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from attrflow import Client
from attrflow.flows.chunked_subscriber import FLOW_ID

from attrflow_bench import client_rates, http_load, redis_streams
from attrflow_bench.client_rates import ARCHIVED_PAGE, FLOW
from attrflow_bench.plan import Plan
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.service import Service, page_through


def rust_figures(rust: RustBench, plan: Plan, results: Results) -> None:
    """The fsync floor, append growth and durable appends, all measured in Rust."""
    results.merge_rust(
        "fsync", rust.measure("fsync", samples=plan.fsync_samples, repeats=plan.repeats)
    )
    growth = rust.measure(
        "append-growth",
        sizes=",".join(str(size) for size in plan.growth_sizes),
        appends=plan.growth_appends,
        naive_appends=plan.naive_appends,
        repeats=plan.repeats,
    )
    results.merge_rust("growth", growth)
    durable = rust.measure(
        "durable", history=plan.client_history, appends=plan.durable_appends, repeats=plan.repeats
    )
    results.merge_rust("durable", durable)


def client_figures(rust: RustBench, plan: Plan, results: Results) -> None:
    """Rust-native, blocking-Python and asyncio-Python call rates, interleaved per repeat."""
    store = rust.data_dir / "clients.db"
    first = plan.client_history + 1
    for _ in range(plan.repeats):
        native = rust.measure(
            "native-rates", history=plan.client_history, calls=plan.client_calls, repeats=1
        )
        results.merge_rust("native", native)
        rust.populate(store, plan.client_history)
        register, page = client_rates.sync_rates(store, first, plan.client_calls)
        results.add("python_sync.register_per_s", "ops/s", register)
        results.add("python_sync.page_per_s", "ops/s", page)
        rust.populate(store, plan.client_history)
        register, page = client_rates.async_rates(store, first, plan.client_calls)
        results.add("python_async.register_per_s", "ops/s", register)
        results.add("python_async.page_per_s", "ops/s", page)


def http_figures(rust: RustBench, serve_py: Path, plan: Plan, results: Results) -> None:
    """Register and archived-page latency over HTTP under wrk, at each concurrency."""
    store = http_load.store_path(rust.data_dir)
    rust.populate(store, plan.client_history)
    results.facts["http.connections"] = list(plan.http_connections)
    with Service(serve_py, store) as service:
        for _ in range(plan.repeats):
            for connections in plan.http_connections:
                for route, load in (
                    ("register", http_load.register_load(service, connections, plan.http_seconds)),
                    (
                        "page",
                        http_load.page_load(service, ARCHIVED_PAGE, connections, plan.http_seconds),
                    ),
                ):
                    prefix = f"http.{route}.c{connections}"
                    results.add(f"{prefix}.p50_ms", "ms", load.p50_ms)
                    results.add(f"{prefix}.p99_ms", "ms", load.p99_ms)
                    results.add(f"{prefix}.requests_per_s", "req/s", load.requests_per_second)
                    results.add(f"{prefix}.errors", "requests", float(load.errors))


def redis_figures(rust: RustBench, plan: Plan, results: Results) -> None:
    """Redis Streams against the attrflow Python client at matched durability."""
    store = rust.data_dir / "redis-match.db"
    results.facts["redis.client"] = redis_streams.client_description()
    for label, appendfsync in redis_streams.APPENDFSYNC.items():
        with redis_streams.RedisServer(appendfsync, rust.data_dir) as redis_client:
            for _ in range(plan.repeats):
                results.add(
                    f"redis.xadd_per_s@{label}",
                    "ops/s",
                    redis_streams.xadd_rate(redis_client, 1, max(plan.durable_client_calls, 100)),
                )
                results.add(
                    f"redis.xrevrange_us@{label}",
                    "us",
                    redis_streams.xrevrange_latency_us(redis_client, plan.page_calls),
                )
                rust.populate(store, plan.client_history)
                with Client(str(store), synchronous=label) as client:
                    first = plan.client_history + 1
                    results.add(
                        f"attrflow.register_per_s@{label}",
                        "ops/s",
                        client_rates.sync_register_rate(client, first, plan.durable_client_calls),
                    )
                    results.add(
                        f"attrflow.current_page_us@{label}",
                        "us",
                        current_page_latency_us(client, plan.page_calls),
                    )


def current_page_latency_us(client: Client, calls: int) -> float:
    """Median latency of reading the newest page (``current``), in microseconds."""
    page, load = client_rates.page_input("current")
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        client.invoke_rpc(FLOW.get_subscriber_page, FLOW_ID, page, options=load)
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return samples[len(samples) // 2]


def memory_figures(rust: RustBench, serve_py: Path, plan: Plan, results: Results) -> None:
    """Peak RSS of the service paging through a store of ``memory_records`` subscribers,
    a fresh service process per repeat on the same store."""
    store = rust.data_dir / "memory.db"
    started = time.perf_counter()
    rust.populate(store, plan.memory_records)
    results.facts["memory.populate_seconds"] = time.perf_counter() - started
    results.facts["memory.store_mib"] = store.stat().st_size / 2**20
    results.facts["memory.records"] = plan.memory_records
    for _ in range(plan.memory_repeats):
        with Service(serve_py, store) as service:
            results.add("memory.rss_at_start_mib", "MiB", service.peak_rss_kib() / 1024)
            started = time.perf_counter()
            seen = page_through(service)
            results.add("memory.page_through_s", "s", time.perf_counter() - started)
            if seen != plan.memory_records:
                raise RuntimeError(f"paging saw {seen} records, not {plan.memory_records}")
            results.add("memory.peak_rss_mib", "MiB", service.peak_rss_kib() / 1024)


def tool_available(name: str) -> bool:
    """Whether the program ``name`` is on PATH."""
    return shutil.which(name) is not None
