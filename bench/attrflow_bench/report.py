"""BENCHMARKS.md (and the growth plot) from one run's results."""

from __future__ import annotations

from pathlib import Path

from attrflow_bench import (
    agents_session,
    concurrency,
    langgraph_saver,
    pg_concurrency,
    report_python,
    tailing,
    verifiable,
)
from attrflow_bench.findings import CLOSING, FINDINGS
from attrflow_bench.notes import note
from attrflow_bench.results import Results
from attrflow_bench.stats import Summary
from attrflow_bench.targets import all_targets

PLOT_NAME = "BENCHMARKS-append-growth.png"


def _num(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _spread(summary: Summary) -> str:
    return (
        f"{_num(summary.p25)}–{_num(summary.p75)} (min–max {_num(summary.low)}–"
        f"{_num(summary.high)})"
    )


def _row(label: str, results: Results, name: str) -> str:
    if name not in results.series:
        return f"| {label} | not measured | | |"
    summary = results.summary(name)
    unit = results.units[name]
    return f"| {label} | {_num(summary.median)} {unit} | {_spread(summary)} | {summary.count} |"


_FIGURE_HEADER = "| figure | median | p25–p75 (min–max) | runs |\n| --- | --- | --- | --- |"


def _table(rows: list[tuple[str, str]], results: Results) -> str:
    return "\n".join([_FIGURE_HEADER, *(_row(label, results, name) for label, name in rows)])


def render_plot(results: Results, path: Path) -> bool:
    """Plots register latency against history for both logs; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = results.facts["growth.config"]["sizes"]
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for name, label in (
        ("chunked_register_us", "attrflow chunked archive (register)"),
        ("naive_append_us", "naive single-Attribute log (append)"),
    ):
        measured = [size for size in sizes if f"growth.{name}@{size}" in results.series]
        medians = [results.summary(f"growth.{name}@{size}") for size in measured]
        axes.errorbar(
            measured,
            [s.median / 1000 for s in medians],
            yerr=[
                [(s.median - s.low) / 1000 for s in medians],
                [(s.high - s.median) / 1000 for s in medians],
            ],
            marker="o",
            capsize=3,
            label=label,
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("records already in the log")
    axes.set_ylabel("append latency, ms (median, min–max)")
    axes.set_title("Append cost against history length (synchronous=NORMAL)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def render(results: Results, plotted: bool) -> str:
    """The whole of BENCHMARKS.md."""
    machine = results.facts["machine"]
    sizes: list[int] = results.facts["growth.config"]["sizes"]
    fsync = results.summary("fsync.append_fsync_us")
    fdatasync = results.summary("fsync.overwrite_fdatasync_us")
    lines = [
        "# Benchmarks",
        "",
        "Produced by `make bench` (scripts/bench.sh): every figure below comes from one run on one",
        "machine, and every target is a ratio of two figures measured side by side in that run,",
        "interleaved repeat by repeat, so a noisy, shared machine moves both sides together.",
        "Each figure is the median over repeated runs with its spread; absolute times are only",
        "indicative of this machine.",
        "",
        f"- Date: {machine['date']}",
        f"- Machine: {machine['cores']} cores ({machine['cpu']}), {machine['memory']} memory, "
        f"Linux {machine['kernel']}, Python {machine['python']}; load average at start "
        f"{machine['load_at_start']}",
        f"- Disk, measured in the store's folder: write 4 KiB + fsync (append) "
        f"{_num(fsync.median)} µs median ({_spread(fsync)}); overwrite 4 KiB + fdatasync "
        f"{_num(fdatasync.median)} µs ({_spread(fdatasync)})",
        "- Builds: Rust `--release` (the benchmark binary with the system allocator, as a "
        "Rust program gets by default); the Python extension built by maturin in release "
        "mode (its Rust allocations through mimalloc, which it sets for itself).",
        "",
        "## Targets",
        "",
        "| # | target | measured (median, min–max) | goal | |",
        "| --- | --- | --- | --- | --- |",
    ]
    missed: list[str] = []
    for target in all_targets(sizes):
        try:
            summary, met = target.evaluate(results)
        except KeyError:
            lines.append(f"| {target.key} | {target.title} | not measured | {target.goal()} | — |")
            continue
        unit = target.unit
        measured = (
            f"{summary.median:.2f}{unit} ({summary.low:.2f}–{summary.high:.2f})"
            if unit == "×"
            else f"{summary.median:.1f}{unit} ({summary.low:.1f}–{summary.high:.1f})"
        )
        lines.append(
            f"| {target.key} | {target.title} | {measured} | {target.goal()} | "
            f"{'met' if met else '**missed**'} |"
        )
        if not met:
            missed.append(target.key)
    lines += ["", *_sections(results, sizes, plotted)]
    lines += concurrency.render(results)
    lines += pg_concurrency.render(results)
    lines += tailing.render(results)
    lines += agents_session.render(results)
    lines += langgraph_saver.render(results)
    lines += verifiable.render(results)
    missed += concurrency.missed(results) + pg_concurrency.missed(results)
    missed += verifiable.missed(results)
    lines += ["## Missed targets and their profiles", ""]
    if not missed:
        lines += ["Every target was met in this run.", ""]
    by_finding: dict[str, list[str]] = {}
    for key in missed:
        by_finding.setdefault(FINDINGS.get(key, "No profile recorded."), []).append(key)
    for finding, keys in by_finding.items():
        heading = "Target" if len(keys) == 1 else "Targets"
        lines += [f"### {heading} {', '.join(keys)}", "", finding, ""]
    lines += ["## Closing note", "", CLOSING, ""]
    return "\n".join(lines)


def _sections(results: Results, sizes: list[int], plotted: bool) -> list[str]:
    growth_rows = []
    for size in sizes:
        growth_rows.append(
            (f"attrflow register at {size:,} records", f"growth.chunked_register_us@{size}")
        )
    config = results.facts["growth.config"]
    over_limit = set(config.get("naive_over_limit", []))
    for size in sizes:
        label = f"naive log append at {size:,} records"
        if size in over_limit:
            label += " (cannot be stored: the history is over the 1 MiB stored-value limit)"
        growth_rows.append((label, f"growth.naive_append_us@{size}"))
    lines = [
        "## 1. Append cost against history length",
        "",
        "A fresh store per size and repeat, already holding that many records (written in one",
        f"batch at start); then {config['appends']} registers through the Rust API (attrflow)",
        f"or {config['naive_appends']} appends (the naive log: the whole history in one",
        "Attribute, read, extended and rewritten by every append, on the same runtime and",
        "store). Per-repeat",
        "figure: the median latency of those calls. `synchronous=NORMAL`, so the figure is the",
        "append's own work, not the disk's fsync.",
        "",
        _table(growth_rows, results),
        "",
    ]
    if plotted:
        lines += [f"![append latency against history]({PLOT_NAME})", ""]
    durable = results.facts["durable.config"]
    full = results.summary("durable.attrflow_append_us@full")
    fsync = results.summary("fsync.append_fsync_us")
    lines += [
        "## 2. Durable appends: attrflow against raw rusqlite",
        "",
        f"{durable['appends']} appends per repeat on a store holding {durable['history']:,}",
        "records.",
        "The baseline is what a user would write by hand on rusqlite: the same table shape, the",
        "same two rows (log state and open chunk) read, changed and upserted in one `BEGIN",
        "IMMEDIATE` transaction, with the same WAL journal and `synchronous` setting. The two",
        f"alternate in {durable.get('batches', 1)} batches per repeat, so a burst of other disk",
        "traffic lands on both.",
        "",
        _table(
            [
                ("attrflow register, FULL", "durable.attrflow_appends_per_s@full"),
                ("raw rusqlite, FULL", "durable.raw_appends_per_s@full"),
                ("attrflow register, NORMAL", "durable.attrflow_appends_per_s@normal"),
                ("raw rusqlite, NORMAL", "durable.raw_appends_per_s@normal"),
                ("attrflow register latency, FULL", "durable.attrflow_append_us@full"),
                ("raw rusqlite latency, FULL", "durable.raw_append_us@full"),
                ("attrflow register latency, NORMAL", "durable.attrflow_append_us@normal"),
                ("raw rusqlite latency, NORMAL", "durable.raw_append_us@normal"),
            ],
            results,
        ),
        "",
        "The fsync floor: a FULL commit in WAL mode fsyncs the WAL once, so no FULL append can",
        f"beat one write + fsync on this disk ({_num(fsync.median)} µs median here). attrflow's",
        f"FULL register took {_num(full.median)} µs median, {full.median / fsync.median:.1f}× that",
        "floor; the rest is SQLite's page writes and attrflow's own work (which NORMAL shows",
        "without the fsync).",
        "",
        "## 3. Python clients against Rust-native calls, and HTTP",
        "",
        "Calls one at a time on a store of "
        f"{results.facts['native.config']['history']:,} records at `synchronous=NORMAL`; the",
        "archived page is `00000000000000000101` (100 subscribers), loaded per call. Rust-native",
        "is `SubscriberArchive` in the benchmark binary; Python is `invoke_rpc` on `Client` and,",
        "awaited one at a time, on `AsyncClient`.",
        "",
        _table(
            [
                ("Rust-native register", "native.register_per_s"),
                ("Python Client register", "python_sync.register_per_s"),
                ("Python AsyncClient register", "python_async.register_per_s"),
                ("Rust-native archived page", "native.page_per_s"),
                ("Python Client archived page", "python_sync.page_per_s"),
                ("Python AsyncClient archived page", "python_async.page_per_s"),
            ],
            results,
        ),
        "",
        "HTTP: the example service (`serve.py`: uvicorn with uvloop and httptools, access log",
        "on) on loopback, driven by",
        "wrk with 1 and 16 open connections; `register` is POST .../register (FULL, the",
        "service's default), `page` GETs the archived page. Under 16 connections registers",
        "contend for the one `current` chunk: the service retries lock conflicts itself, and",
        "`errors` counts answers other than 2xx (a 409 after its retries).",
        "",
    ]
    http_rows = []
    for route in ("register", "page"):
        for connections in results.facts.get("http.connections", []):
            prefix = f"http.{route}.c{connections}"
            if f"{prefix}.p50_ms" not in results.series:
                continue
            for figure in ("p50_ms", "p99_ms", "requests_per_s", "errors"):
                http_rows.append(
                    (f"{route}, {connections} connections: {figure}", f"{prefix}.{figure}")
                )
    lines += [
        _table(http_rows, results) if http_rows else "Not measured: wrk is not installed.",
        "",
        *report_python.section(results, _table),
        "## 4. Redis Streams at matched durability",
        "",
        "redis-server on loopback with an append-only file in a throwaway folder: `appendfsync",
        "always` against attrflow FULL, `everysec` against NORMAL. Appends: XADD through redis-py",
        "against `Client.invoke_rpc` register, one at a time. The newest 100-record page:",
        "XREVRANGE + - COUNT 100 against the `current` page (100 records) through the Python",
        f"client. The Redis client is {results.facts.get('redis.client', 'redis-py')}.",
        "",
        _table(
            [
                ("Redis XADD, always", "redis.xadd_per_s@full"),
                ("attrflow register, FULL", "attrflow.register_per_s@full"),
                ("Redis XADD, everysec", "redis.xadd_per_s@normal"),
                ("attrflow register, NORMAL", "attrflow.register_per_s@normal"),
                ("Redis XREVRANGE COUNT 100 (everysec server)", "redis.xrevrange_us@normal"),
                ("attrflow current page (NORMAL store)", "attrflow.current_page_us@normal"),
                ("Redis XREVRANGE COUNT 100 (always server)", "redis.xrevrange_us@full"),
                ("attrflow current page (FULL store)", "attrflow.current_page_us@full"),
            ],
            results,
        ),
        "",
        *note("4-redis"),
        "## 5. Memory",
        "",
    ]
    if "memory.peak_rss_mib" in results.series:
        facts = results.facts
        lines += [
            f"{facts['memory.records']:,} records written in one batch "
            f"({facts['memory.populate_seconds']:.0f} s, store "
            f"{facts['memory.store_mib']:.0f} MiB);",
            "the service started on that file, then every page read newest first over one",
            "keep-alive HTTP connection, by a fresh service process per run. Peak RSS is the",
            "service process's VmHWM.",
            "",
            _table(
                [
                    ("service RSS after start-up", "memory.rss_at_start_mib"),
                    ("service peak RSS after paging through everything", "memory.peak_rss_mib"),
                    ("time to page through everything", "memory.page_through_s"),
                ],
                results,
            ),
            "",
        ]
    return lines
