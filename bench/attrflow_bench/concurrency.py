"""Concurrency: 16 appenders at ``synchronous=FULL`` against Redis Streams XADD with
``appendfsync always`` and 16 clients, on one flow (stream) and on 16.

attrflow is measured as Rust threads (the ``concurrency`` command of ``attrflow-bench``,
with group commit and with one COMMIT per call) and as ``AsyncClient`` tasks (public API
only); Redis twice, each client against its own kind: 16 connections of redis-benchmark
(Redis's own load generator, in C) against the Rust threads, and 16 asyncio redis-py
clients against the ``AsyncClient`` tasks. Every figure is interleaved repeat by repeat
with the Redis figures it is divided by. Also: lock conflicts per 1,000 appends, COMMITs
(fsyncs) per append, and a lone appender's latency grouped against one COMMIT per call.

Run just this section::

    python -m attrflow_bench.concurrency --bench-bin target/release/attrflow-bench \\
        --data-dir target/bench-data [--smoke] [--out section.md]
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import redis.asyncio as aioredis
from attrflow import AsyncClient
from attrflow.errors import RpcLockConflictError

from attrflow_bench import redis_streams
from attrflow_bench.client_rates import FLOW, registration
from attrflow_bench.notes import note
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.section import run_alone
from attrflow_bench.service import HOST
from attrflow_bench.stats import Summary, ratios

APPENDERS = 16
"""Concurrent appenders in every figure of this section."""

SHAPES = {"one_flow": 1, "many_flows": APPENDERS}
"""Flows (streams) the appenders share: all on one, or one each."""

RUST_TARGET = 2.0
ASYNC_TARGET = 1.0
LATENCY_TARGET = 1.1


@dataclass(frozen=True)
class ConcurrencyPlan:
    """How long and how often this section measures."""

    seconds: float
    repeats: int
    latency_calls: int


FULL = ConcurrencyPlan(seconds=3.0, repeats=3, latency_calls=300)
SMOKE = ConcurrencyPlan(seconds=0.2, repeats=2, latency_calls=3)


async def _redis_rate(port: int, streams: int, seconds: float) -> float:
    """XADDs per second from ``APPENDERS`` clients, client ``i`` on stream ``i % streams``."""
    clients = [aioredis.Redis(host=HOST, port=port) for _ in range(APPENDERS)]
    done = 0
    deadline = time.perf_counter() + seconds

    async def append(index: int) -> None:
        nonlocal done
        client, stream, sequence = clients[index], f"stream-{index % streams}", 0
        while time.perf_counter() < deadline:
            sequence += 1
            record = registration(index * 10_000_000 + sequence)
            await client.xadd(
                stream,
                {"subscriberId": record.subscriber_id, "deliveryAddress": record.delivery_address},
            )
            done += 1

    started = time.perf_counter()
    try:
        await asyncio.gather(*(append(index) for index in range(APPENDERS)))
    finally:
        for client in clients:
            await client.aclose()
    return done / (time.perf_counter() - started)


async def _async_client_rate(store: Path, flows: int, seconds: float) -> tuple[float, float]:
    """(appends per second, lock conflicts per 1,000 appends) of ``APPENDERS`` tasks on one
    ``AsyncClient`` at ``synchronous=full``, task ``i`` on flow ``i % flows``."""
    done = conflicts = 0
    async with AsyncClient(store=str(store), synchronous="full") as client:
        flow_ids = [f"archive-{index}" for index in range(flows)]
        for flow_id in flow_ids:
            await client.start_flow(FLOW, flow_id)
        deadline = time.perf_counter() + seconds

        async def append(index: int) -> None:
            nonlocal done, conflicts
            sequence = 0
            while time.perf_counter() < deadline:
                sequence += 1
                record = registration(index * 10_000_000 + sequence)
                while True:
                    try:
                        await client.invoke_rpc(
                            FLOW.register_subscriber, flow_ids[index % flows], record
                        )
                        break
                    except RpcLockConflictError:
                        conflicts += 1
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(append(index) for index in range(APPENDERS)))
        elapsed = time.perf_counter() - started
    return done / elapsed, conflicts * 1000 / max(done, 1)


def _remove_store(store: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)


def figures(rust: RustBench, smoke: bool, results: Results) -> None:
    """Measures every figure of this section into ``results``."""
    plan = SMOKE if smoke else FULL
    store = rust.data_dir / "concurrency-async.db"
    results.facts["concurrency.appenders"] = APPENDERS
    results.facts["concurrency.seconds"] = plan.seconds
    with redis_streams.RedisServer("always", rust.data_dir) as server:
        port = int(server.connection_pool.connection_kwargs["port"])
        for _ in range(plan.repeats):
            native = rust.measure(
                "concurrency",
                threads=APPENDERS,
                seconds=plan.seconds,
                repeats=1,
                latency_calls=plan.latency_calls,
            )
            results.merge_rust("concurrency.native", native)
            for shape, flows in SHAPES.items():
                server.flushall()
                results.add(
                    f"concurrency.redis_benchmark.{shape}.appends_per_s",
                    "ops/s",
                    redis_streams.benchmark_xadd_rate(port, APPENDERS, flows, plan.seconds),
                )
                server.flushall()
                results.add(
                    f"concurrency.redis.{shape}.appends_per_s",
                    "ops/s",
                    asyncio.run(_redis_rate(port, flows, plan.seconds)),
                )
                _remove_store(store)
                rate, conflicts = asyncio.run(_async_client_rate(store, flows, plan.seconds))
                _remove_store(store)
                results.add(f"concurrency.async.{shape}.appends_per_s", "ops/s", rate)
                results.add(f"concurrency.async.{shape}.conflicts_per_1000", "count", conflicts)


def _ratio(results: Results, numerator: str, denominator: str) -> Summary:
    return Summary.of(ratios(results.values(numerator), results.values(denominator)))


def _figure(results: Results, name: str, digits: int = 0) -> str:
    summary = results.summary(name)
    return f"{summary.median:,.{digits}f} ({summary.low:,.{digits}f}–{summary.high:,.{digits}f})"


def _optional(results: Results, name: str, digits: int = 0) -> str:
    """``name``'s figure, or a dash when the run did not measure it."""
    return _figure(results, name, digits) if name in results.series else "—"


def _delayed(results: Results, native: str) -> list[str]:
    """What a commit delay costs a lone appender (when the run measured it)."""
    delayed = f"{native}.delayed.single_append_us"
    if delayed not in results.series:
        return []
    added = _ratio(results, delayed, f"{native}.grouped.single_append_us")
    return [
        f"With `commit_delay_us=100` it takes {_figure(results, delayed)} µs: "
        f"{added.median:.2f}× of group commit without one (the delay keeps a lone "
        "caller's group open that long for other callers).",
    ]


WAL_FRAME = 4096 + 24
"""Bytes of one WAL frame: a 4 KiB page and its header."""


def _group_writes(results: Results, prefix: str) -> tuple[float, float] | None:
    """Bytes written per append and WAL frames per COMMIT of one grouped run (``None`` when
    the run did not measure them)."""
    names = (f"{prefix}.written_per_append", f"{prefix}.commits_per_append")
    if not all(name in results.series for name in names):
        return None
    written, commits = (results.summary(name).median for name in names)
    return written, written / commits / WAL_FRAME


def _write_volume(results: Results, native: str) -> list[str]:
    """What a group's COMMIT writes on one flow and on many, from this run's figures."""
    one = _group_writes(results, f"{native}.grouped.one_flow")
    many = _group_writes(results, f"{native}.grouped.many_flows")
    if one is None or many is None:
        return []
    return [
        "",
        f"What a group writes: on one flow {one[0]:,.0f} bytes per append, about "
        f"{one[1]:.0f} WAL frames per COMMIT (the one open chunk, its overflow page and "
        f"the state row, rewritten once for the whole group, plus the free-list pages); on "
        f"{SHAPES['many_flows']} flows {many[0]:,.0f} bytes per append, about "
        f"{many[1]:.0f} frames per COMMIT, since every member rewrites an open chunk and "
        "a state row of its own. The turn holder writes and fsyncs those frames while the "
        "next group waits (bench/notes/6-concurrency.md has what fewer bytes changed).",
    ]


REDIS_CLIENTS = {
    "redis_benchmark": f"redis-benchmark (C), {APPENDERS} connections",
    "redis": f"redis-py, {APPENDERS} asyncio clients",
}
"""The two ways this section drives Redis, as the table names them."""


def against_redis(results: Results, prefix: str, redis: str, target: float | None = None) -> str:
    """``prefix``'s appends/s as a multiple of those of ``redis``, the prefix of a Redis
    figure (``concurrency.redis_benchmark.one_flow``, say), with the verdict when ``target``
    is judged against that one ("—" when the run did not measure it)."""
    if f"{redis}.appends_per_s" not in results.series:
        return "—"
    ratio = _ratio(results, f"{prefix}.appends_per_s", f"{redis}.appends_per_s")
    if target is None:
        return f"{ratio.median:.2f}"
    return f"{ratio.median:.2f} ({target:g}×, {'met' if ratio.median >= target else '**missed**'})"


def redis_rows(
    results: Results, section: str, shape: str, label: str, dashes: tuple[int, int]
) -> list[str]:
    """A table row for each way Redis was driven in ``section`` on ``shape`` (its figures
    named ``{section}.{client}.{shape}``): its appends/s, ``dashes[0]`` empty cells, its
    multiples of each Redis figure (one cell each, as ``REDIS_CLIENTS`` orders them), then
    ``dashes[1]`` empty cells."""
    rows = []
    for client, described in REDIS_CLIENTS.items():
        prefix = f"{section}.{client}.{shape}"
        if f"{prefix}.appends_per_s" in results.series:
            cells = ["—"] * dashes[0]
            cells += [
                against_redis(results, prefix, f"{section}.{other}.{shape}")
                for other in REDIS_CLIENTS
            ]
            cells += ["—"] * dashes[1]
            rows.append(
                f"| Redis XADD, {described} | {label} | "
                f"{_figure(results, f'{prefix}.appends_per_s')} | {' | '.join(cells)} |"
            )
    return rows


JUDGED = {
    "rust": ("concurrency.native.grouped", "redis_benchmark", RUST_TARGET),
    "async": ("concurrency.async", "redis", ASYNC_TARGET),
}
"""Each judged figure of this section: its prefix, the Redis figure it is divided by and
its target."""

SHAPE_KEYS = {"one_flow": "one-flow", "many_flows": f"{APPENDERS}-flows"}
"""How a shape is named in a target's key (``6-rust-one-flow``, say)."""


def _target(figure: str, client: str) -> float | None:
    """The target ``figure`` (a prefix of ``JUDGED``'s, without the shape) is judged by
    against Redis driven by ``client``, if any."""
    return next(
        (
            target
            for judged, redis, target in JUDGED.values()
            if (judged, redis) == (figure, client)
        ),
        None,
    )


def missed(results: Results) -> list[str]:
    """The keys of this section's targets the run missed (none when it did not run)."""
    keys = []
    for who, (prefix, redis, target) in JUDGED.items():
        for shape, key in SHAPE_KEYS.items():
            baseline = f"concurrency.{redis}.{shape}.appends_per_s"
            if baseline not in results.series:
                continue
            ratio = _ratio(results, f"{prefix}.{shape}.appends_per_s", baseline)
            if ratio.median < target:
                keys.append(f"6-{who}-{key}")
    return keys


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if "concurrency.redis.one_flow.appends_per_s" not in results.series:
        return []
    native = "concurrency.native"
    lines = [
        "## 6. Concurrency: group commit",
        "",
        f"{results.facts['concurrency.appenders']} appenders for "
        f"{results.facts['concurrency.seconds']} s each at `synchronous=FULL`, against Redis "
        "Streams XADD with `appendfsync always`, driven twice: by redis-benchmark, Redis's "
        "own load generator in C, with as many connections (on 16 streams each XADD goes to "
        "one picked at random), and by as many asyncio redis-py clients. Each attrflow "
        "figure is judged against the Redis client of its own kind: Rust threads, which "
        "call the core directly, against redis-benchmark; `AsyncClient` tasks, sharing one "
        "client, against redis-py. "
        '"one COMMIT per call" is the same build with `group_max_calls=1`. Lock conflicts '
        "are retried at once and counted; COMMITs per append come from the store's own "
        "counter (one fsync each); bytes written per append are the process's own (`wchar` "
        "of `/proc/self/io`: the WAL frames of every COMMIT, 4 KiB pages, and what "
        "checkpoints copy into the database file).",
        "",
        "| appenders | shape | appends/s | × Redis, redis-benchmark (target) | "
        "× Redis, redis-py (target) | conflicts / 1,000 | COMMITs / append | "
        "bytes written / append |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for shape in SHAPES:
        label = "one flow" if shape == "one_flow" else f"{SHAPES[shape]} flows"
        rows = [
            ("Rust threads, group commit", f"{native}.grouped"),
            ("Rust threads, one COMMIT per call", f"{native}.per_call"),
            ("`AsyncClient` tasks, group commit", "concurrency.async"),
        ]
        for who, figure in rows:
            prefix = f"{figure}.{shape}"
            ratios = " | ".join(
                against_redis(
                    results, prefix, f"concurrency.{client}.{shape}", _target(figure, client)
                )
                for client in REDIS_CLIENTS
            )
            commits = _optional(results, f"{prefix}.commits_per_append", 2)
            written = _optional(results, f"{prefix}.written_per_append")
            lines.append(
                f"| {who} | {label} | {_figure(results, f'{prefix}.appends_per_s')} | "
                f"{ratios} | {_figure(results, f'{prefix}.conflicts_per_1000', 1)} | "
                f"{commits} | {written} |"
            )
        lines += redis_rows(results, "concurrency", shape, label, (0, 3))
    latency = _ratio(
        results, f"{native}.grouped.single_append_us", f"{native}.per_call.single_append_us"
    )
    verdict = "met" if latency.median <= LATENCY_TARGET else "**missed**"
    lines += [
        "",
        f"A lone appender (Rust, FULL): {_figure(results, f'{native}.grouped.single_append_us')} "
        f"µs with group commit against "
        f"{_figure(results, f'{native}.per_call.single_append_us')} µs with one COMMIT per "
        f"call: {latency.median:.2f}× (target ≤ {LATENCY_TARGET}×, {verdict}).",
        *_delayed(results, native),
        *_write_volume(results, native),
        "",
        *note("6-concurrency"),
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measures this section alone and prints it (and saves the raw figures)."""
    run_alone("concurrency", figures, render, argv)


if __name__ == "__main__":
    main()
