"""PostgreSQL under concurrency: 16 Rust threads appending on one archive and on 16, with
group commit (the default) and with one transaction per call (``group_commit=off``),
against Redis Streams XADD with ``appendfsync always`` and 16 clients on one stream and on
16, every figure interleaved repeat by repeat with the others; then page reads, by one
thread and by 16.

The server is scripts/postgres.sh's with ``POSTGRES_DURABLE=1`` (default ``fsync``,
``full_page_writes``, ``synchronous_commit=on``) on loopback, started and removed by this
section. The appenders and readers are the ``pg-appenders`` and ``pg-readers`` binaries
built next to ``attrflow-bench``.

Run just this section::

    python -m attrflow_bench.pg_concurrency --bench-bin target/release/attrflow-bench \\
        --data-dir target/bench-data [--smoke] [--out section.md]
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from attrflow_bench import redis_streams
from attrflow_bench.concurrency import (
    REDIS_CLIENTS,
    _figure,
    _ratio,
    _redis_rate,
    against_redis,
    redis_rows,
)
from attrflow_bench.notes import note
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.section import run_alone

ROOT = Path(__file__).resolve().parents[2]
POSTGRES_SH = ROOT / "scripts" / "postgres.sh"

APPENDERS = 16
"""Concurrent appenders (threads; Redis clients) in every figure of this section."""

SHAPES = {"one_flow": 1, "many_flows": APPENDERS}
"""Archives (streams) the appenders share: all on one, or one each."""

PATHS = {"per_call": f"group_commit=off&pool_max_size={APPENDERS}", "grouped": "group_commit=on"}
"""The store URL's options of each measured path: one transaction per call with a connection
for every appender, and group commit with the store's defaults (a pool of 8 connections, 2 of
them lanes; more lanes make smaller groups, bench/notes/7-postgresql.md)."""

ISSUE_TARGETS = {"one_flow": 1_850.0, "many_flows": 6_200.0}
"""Appends per second asked for: 5× what one transaction per call reached when the goal was
set (370/s on one archive, 1,240/s on 16)."""

READERS = (1, APPENDERS)
"""Threads reading pages at once, one figure each."""

START_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class PgPlan:
    """How long and how often this section measures."""

    seconds: float
    repeats: int


FULL = PgPlan(seconds=5.0, repeats=3)
SMOKE = PgPlan(seconds=0.2, repeats=2)


def postgres_available() -> bool:
    """Whether PostgreSQL's server binaries are installed (scripts/postgres.sh installs them
    from Debian's packages when run as root)."""
    return shutil.which("initdb") is not None or bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))


class PostgresServer:
    """A throwaway durable PostgreSQL server (``scripts/postgres.sh run``); its URL."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(
            ["bash", str(POSTGRES_SH), "run"],
            env={**os.environ, "POSTGRES_DURABLE": "1"},
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("store URL: "):
                return line.removeprefix("store URL: ").strip()
        self.process.wait(timeout=START_TIMEOUT_SECONDS)
        raise RuntimeError(f"scripts/postgres.sh run exited ({self.process.returncode})")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process is not None:
            # The script stops the server and removes its data on SIGTERM (and Ctrl-C, which
            # a shell in the background may ignore).
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=START_TIMEOUT_SECONDS)


def _appenders(binary: Path, url: str, seconds: float) -> list[dict[str, float]]:
    """One report per shape of ``pg-appenders`` (one archive, then one each)."""
    return _reports([str(binary), url, str(APPENDERS), str(seconds), f"1,{APPENDERS}"])


def _readers(binary: Path, url: str, seconds: float) -> list[dict[str, float]]:
    """One report per thread count of ``pg-readers`` (:data:`READERS`)."""
    return _reports([str(binary), url, ",".join(map(str, READERS)), str(seconds)])


def _reports(argv: list[str]) -> list[dict[str, float]]:
    """The JSON objects a benchmark binary prints, one per line."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def figures(rust: RustBench, smoke: bool, results: Results) -> None:
    """Measures every figure of this section into ``results``."""
    plan = SMOKE if smoke else FULL
    binary = rust.binary.parent / "pg-appenders"
    readers = rust.binary.parent / "pg-readers"
    results.facts["pg.appenders"] = APPENDERS
    results.facts["pg.seconds"] = plan.seconds
    with (
        PostgresServer() as base,
        redis_streams.RedisServer("always", rust.data_dir) as server,
    ):
        port = int(server.connection_pool.connection_kwargs["port"])
        for _ in range(plan.repeats):
            for path, options in PATHS.items():
                url = f"{base}?sslmode=disable&{options}"
                for report in _appenders(binary, url, plan.seconds):
                    shape = "one_flow" if report["flows"] == 1 else "many_flows"
                    prefix = f"pg.{path}.{shape}"
                    appends = max(report["appends"], 1)
                    results.add(f"{prefix}.appends_per_s", "ops/s", report["appends_per_second"])
                    results.add(
                        f"{prefix}.conflicts_per_1000",
                        "count",
                        report["lock_conflicts"] * 1000 / appends,
                    )
                    if path == "grouped":
                        results.add(
                            f"{prefix}.commits_per_append", "count", report["commits_per_append"]
                        )
            url = f"{base}?sslmode=disable&{PATHS['grouped']}"
            for report in _readers(readers, url, plan.seconds):
                prefix = f"pg.reads.{report['threads']:.0f}"
                results.add(f"{prefix}.reads_per_s", "ops/s", report["reads_per_s"])
                results.add(f"{prefix}.latency_us", "us", report["mean_latency_us"])
            for shape, flows in SHAPES.items():
                server.flushall()
                results.add(
                    f"pg.redis_benchmark.{shape}.appends_per_s",
                    "ops/s",
                    redis_streams.benchmark_xadd_rate(port, APPENDERS, flows, plan.seconds),
                )
                server.flushall()
                results.add(
                    f"pg.redis.{shape}.appends_per_s",
                    "ops/s",
                    asyncio.run(_redis_rate(port, flows, plan.seconds)),
                )


def _against_redis(results: Results, prefix: str, shape: str) -> str:
    """``prefix``'s appends/s as a multiple of each Redis figure of ``shape``: two cells."""
    return " | ".join(
        against_redis(results, prefix, f"pg.{client}.{shape}") for client in REDIS_CLIENTS
    )


def missed(results: Results) -> list[str]:
    """The keys of this section's targets the run missed (none when it did not run)."""
    return [
        f"7-pg-{'one-archive' if shape == 'one_flow' else f'{APPENDERS}-archives'}"
        for shape, target in ISSUE_TARGETS.items()
        if f"pg.grouped.{shape}.appends_per_s" in results.series
        and results.summary(f"pg.grouped.{shape}.appends_per_s").median < target
    ]


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if "pg.redis.one_flow.appends_per_s" not in results.series:
        return []
    lines = [
        "## 7. PostgreSQL: 16 threads appending, group commit against one transaction per call; "
        "page reads",
        "",
        f"{results.facts['pg.appenders']} Rust threads register subscribers for "
        f"{results.facts['pg.seconds']} s on one archive, then one archive each "
        "(`pg-appenders`, retrying lock conflicts after 200 µs), with group commit (the "
        "default, with the store's default pool of 8 connections and 2 lanes) and with one "
        "transaction per call (`group_commit=off`, a pool of one connection per thread), "
        "against Redis "
        "Streams XADD with `appendfsync always`, driven by redis-benchmark (Redis's own load "
        "generator, in C) with as many connections and by as many asyncio redis-py clients; "
        "PostgreSQL is scripts/postgres.sh's server with `POSTGRES_DURABLE=1` (default "
        "`fsync`, `synchronous_commit=on`) on loopback. Each ratio is taken repeat by repeat.",
        "",
        "| path | shape | appends/s | × one transaction per call | × Redis, redis-benchmark | "
        "× Redis, redis-py | conflicts / 1,000 | COMMITs / append |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    for shape, flows in SHAPES.items():
        label = "one archive" if flows == 1 else f"{flows} archives"
        per_call = f"pg.per_call.{shape}.appends_per_s"
        for path, who in (("grouped", "group commit"), ("per_call", "one transaction per call")):
            prefix = f"pg.{path}.{shape}"
            commits = (
                _figure(results, f"{prefix}.commits_per_append", 3)
                if f"{prefix}.commits_per_append" in results.series
                else "1"
            )
            lines.append(
                f"| {who} | {label} | {_figure(results, f'{prefix}.appends_per_s')} | "
                f"{_ratio(results, f'{prefix}.appends_per_s', per_call).median:.2f} | "
                f"{_against_redis(results, prefix, shape)} | "
                f"{_figure(results, f'{prefix}.conflicts_per_1000', 1)} | {commits} |"
            )
        lines += redis_rows(results, "pg", shape, label, (1, 2))
        grouped = results.summary(f"pg.grouped.{shape}.appends_per_s").median
        target = ISSUE_TARGETS[shape]
        verdicts.append(
            f"{label} {grouped:,.0f}/s against {target:,.0f}/s "
            f"({'met' if grouped >= target else '**missed**'})"
        )
    lines += [
        "",
        "The goal set for group commit on PostgreSQL (5× what one transaction per call "
        "reached when it was set, an absolute figure of that machine): "
        + "; ".join(verdicts)
        + ".",
        *_reads(results),
        "",
        *note("7-postgresql"),
    ]
    return lines


def _reads(results: Results) -> list[str]:
    """The page reads' table (when the run measured them)."""
    if f"pg.reads.{READERS[0]}.reads_per_s" not in results.series:
        return []
    lines = [
        "",
        "Page reads on the same server (`pg-readers`: each thread reads pages one at a time, "
        "taking turns between an archived page of 100 subscribers and `current`; each read "
        "is a lock-free RPC on one snapshot, one round trip):",
        "",
        "| threads | pages/s | mean latency (µs) |",
        "| --- | --- | --- |",
    ]
    for threads in READERS:
        prefix = f"pg.reads.{threads}"
        lines.append(
            f"| {threads} | {_figure(results, f'{prefix}.reads_per_s')} | "
            f"{_figure(results, f'{prefix}.latency_us')} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measures this section alone and prints it (and saves the raw figures)."""
    run_alone("pg_concurrency", figures, render, argv)


if __name__ == "__main__":
    main()
