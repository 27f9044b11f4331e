"""Tailing and trimming a chunked log.

Tail latency: a writer appends at a steady pace while a tailer waits; each record carries
the wall-clock time taken just before its append call, and its latency is the time from
then until the tailer holds it. attrflow is measured in Rust (the ``tail-latency`` command
of ``attrflow-bench``: an ``AppLog`` on SQLite at ``synchronous=NORMAL``, the writer a
thread of the tailer's process or another process), Redis Streams as a redis-py writer
thread and a reader waiting in ``XREAD BLOCK`` (``appendfsync everysec``), interleaved
repeat by repeat in one run.

Trim cost: successive trims of the same number of chunks from archives of growing length.

Run just this section::

    python -m attrflow_bench.tailing --bench-bin target/release/attrflow-bench \\
        --data-dir target/bench-data [--smoke] [--out section.md]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attrflow_bench import redis_streams
from attrflow_bench.notes import note
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.section import run_alone

PREFIX = "tailing"


@dataclass(frozen=True)
class TailingPlan:
    """How much this section measures."""

    repeats: int
    records: int
    interval_ms: int
    trim_sizes: tuple[int, ...]
    trim_chunks: int
    trims: int


FULL = TailingPlan(
    repeats=3,
    records=500,
    interval_ms=10,
    trim_sizes=(10_000, 100_000, 1_000_000),
    trim_chunks=10,
    trims=5,
)
SMOKE = TailingPlan(
    repeats=2, records=5, interval_ms=2, trim_sizes=(300, 1_000), trim_chunks=1, trims=2
)


def _percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile by nearest rank, as the Rust harness computes it."""
    ordered = sorted(samples)
    rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
    return ordered[rank - 1]


def figures(rust: RustBench, smoke: bool, results: Results) -> None:
    """Measures every figure of this section into ``results``."""
    plan = SMOKE if smoke else FULL
    results.facts[f"{PREFIX}.records"] = plan.records
    results.facts[f"{PREFIX}.interval_ms"] = plan.interval_ms
    with redis_streams.RedisServer("everysec", rust.data_dir) as client:
        for _ in range(plan.repeats):
            native = rust.measure(
                "tail-latency", records=plan.records, interval_ms=plan.interval_ms, repeats=1
            )
            results.merge_rust(PREFIX, native)
            latencies = redis_streams.xread_block_latencies_us(
                client, plan.records, plan.interval_ms / 1000
            )
            results.add(f"{PREFIX}.redis_p50_us", "us", _percentile(latencies, 0.50))
            results.add(f"{PREFIX}.redis_p99_us", "us", _percentile(latencies, 0.99))
    trim = rust.measure(
        "trim-cost",
        sizes=",".join(str(size) for size in plan.trim_sizes),
        chunks=plan.trim_chunks,
        trims=plan.trims,
        repeats=plan.repeats,
    )
    results.merge_rust(f"{PREFIX}.trim", trim)


def _figure(results: Results, name: str, scale: float = 1.0, digits: int = 2) -> str:
    summary = results.summary(name)
    low, median, high = (value / scale for value in (summary.low, summary.median, summary.high))
    return f"{median:,.{digits}f} ({low:,.{digits}f}–{high:,.{digits}f})"


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if f"{PREFIX}.redis_p50_us" not in results.series:
        return []
    records = results.facts[f"{PREFIX}.records"]
    interval = results.facts[f"{PREFIX}.interval_ms"]
    lines = [
        "## 8. Tailing and trimming",
        "",
        f"Tail latency: a writer appends {records:,} records, one every {interval} ms, while a "
        "tailer waits for them; each record carries the wall-clock time taken just before its "
        "append call, and its latency is the time from then until the tailer holds it "
        "(p50 and p99 over the records of one repeat; median and min–max over repeats). "
        "attrflow: `AppLog::tail` in Rust on SQLite at `synchronous=NORMAL`, the writer a "
        "thread of the tailer's process (the tail wakes on the commit) or another process "
        "(the tail checks `PRAGMA data_version` after a pause of 1 ms doubling to 5 ms, "
        "reset by each delivery, and reads again when it moved). Redis Streams: "
        "`appendfsync everysec`, a redis-py writer thread and a reader in `XREAD BLOCK`, "
        "interleaved with attrflow repeat by repeat.",
        "",
        "| tailer | writer | p50 (ms) | p99 (ms) |",
        "| --- | --- | --- | --- |",
    ]
    for who, writer, key in (
        ("attrflow `tail`", "same process", "in_process"),
        ("attrflow `tail`", "another process", "cross_process"),
        ("Redis `XREAD BLOCK`", "another connection", "redis"),
    ):
        lines.append(
            f"| {who} | {writer} | {_figure(results, f'{PREFIX}.{key}_p50_us', 1e3)} | "
            f"{_figure(results, f'{PREFIX}.{key}_p99_us', 1e3)} |"
        )
    config = results.facts[f"{PREFIX}.trim.config"]
    lines += [
        "",
        f"Trim cost: {config['trims']} successive trims, each dropping {config['chunks']} "
        f"chunks of {config['chunk_size']} records (`Trim::DropBefore`), from an archive of "
        "each length; the median trim per repeat, then median and min–max over repeats.",
        "",
        f"| archive length | trim of {config['chunks']} chunks (ms) |",
        "| --- | --- |",
    ]
    for size in config["sizes"]:
        lines.append(f"| {size:,} records | {_figure(results, f'{PREFIX}.trim.trim_ms@{size}')} |")
    shortest, longest = config["sizes"][0], config["sizes"][-1]
    growth = (
        results.summary(f"{PREFIX}.trim.trim_ms@{longest}").median
        / results.summary(f"{PREFIX}.trim.trim_ms@{shortest}").median
    )
    lines += [
        "",
        f"A trim costs what it drops: the same trim takes {growth:.2f}× as long at {longest:,} "
        f"records as at {shortest:,} (one delete per dropped chunk and one state write; "
        "nothing retained is read or rewritten). Within a process a tail is woken by the "
        "commit; across processes the SQLite tail notices a commit at its next "
        "`PRAGMA data_version` check, so its latency is the append plus up to one pause "
        "(1 to 5 ms).",
        "",
        *note("8-tailing"),
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measures this section alone and prints it (and saves the raw figures)."""
    run_alone("tailing", figures, render, argv)


if __name__ == "__main__":
    main()
