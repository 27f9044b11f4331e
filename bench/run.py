"""Runs every benchmark of ``make bench`` and writes BENCHMARKS.md.

Usage::

    python bench/run.py --bench-bin target/release/attrflow-bench --data-dir D --out BENCHMARKS.md
    python bench/run.py --smoke ...   # every part at the smallest sizes, in seconds
    python bench/run.py --from-results D/results.json --out BENCHMARKS.md ...  # re-render

Redis Streams needs redis-server on PATH and the HTTP figures need wrk; scripts/bench.sh
installs both. Without them (``--smoke`` only) those parts are left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attrflow_bench import (
    agents_session,
    concurrency,
    langgraph_saver,
    machine,
    pg_concurrency,
    phases,
    python_speed,
    report,
    tailing,
    verifiable,
)
from attrflow_bench.plan import FULL, SMOKE
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench

ROOT = Path(__file__).resolve().parents[1]
SERVE_PY = ROOT / "examples" / "python" / "serve.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Run attrflow's benchmarks.")
    parser.add_argument("--bench-bin", type=Path, help="attrflow-bench binary")
    parser.add_argument("--data-dir", type=Path, help="folder for the stores")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown report to write")
    parser.add_argument("--smoke", action="store_true", help="smallest sizes, optional tools")
    parser.add_argument(
        "--from-results",
        type=Path,
        help="render the report from a saved run's results.json instead of measuring",
    )
    args = parser.parse_args(argv)
    if args.from_results is None and (args.bench_bin is None or args.data_dir is None):
        parser.error("measuring needs --bench-bin and --data-dir")
    return args


def log(message: str) -> None:
    """Progress on stderr."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """Runs every part and writes the report, the plot and the raw figures."""
    args = parse_args(argv)
    if args.from_results:
        write_report(Results.load(args.from_results), args.out)
        return
    plan = SMOKE if args.smoke else FULL
    args.data_dir.mkdir(parents=True, exist_ok=True)
    rust = RustBench(args.bench_bin.resolve(), args.data_dir.resolve())
    results = Results()
    results.facts["machine"] = machine.describe()
    log("Rust: fsync floor, append growth, durable appends")
    phases.rust_figures(rust, plan, results)
    log("Python clients against Rust-native calls")
    phases.client_figures(rust, plan, results)
    log("Python: 16 AsyncClient tasks against 16 Rust threads")
    python_speed.concurrency_figures(rust, plan, results)
    if phases.tool_available("wrk") or not args.smoke:
        log("HTTP under wrk")
        phases.http_figures(rust, SERVE_PY, plan, results)
        log("HTTP: the service against a bare-ASGI floor")
        python_speed.http_floor_figures(rust, SERVE_PY, plan, results)
    if phases.tool_available("redis-server") or not args.smoke:
        log("Redis Streams")
        phases.redis_figures(rust, plan, results)
    if phases.tool_available("redis-server") or not args.smoke:
        log("Concurrency: group commit against Redis Streams")
        concurrency.figures(rust, args.smoke, results)
    redis = phases.tool_available("redis-server")
    if (redis and pg_concurrency.postgres_available()) or not args.smoke:
        log("PostgreSQL: 16 appenders, group commit against one transaction per call and Redis")
        pg_concurrency.figures(rust, args.smoke, results)
    if phases.tool_available("redis-server") or not args.smoke:
        log("Tailing against Redis XREAD BLOCK, and trim cost")
        tailing.figures(rust, args.smoke, results)
    log("Verifiable logs: appends with the tree on and off, proof latency by log size")
    verifiable.figures(rust, args.smoke, results)
    log("Agent memory: AttrflowSession against the SDK's SQLiteSession")
    agents_session.figures(args.smoke, args.data_dir, results)
    log("Agent memory: AttrflowSaver against LangGraph's SqliteSaver")
    langgraph_saver.figures(args.smoke, args.data_dir, results)
    log(f"memory: the service paging through {plan.memory_records:,} records")
    phases.memory_figures(rust, SERVE_PY, plan, results)
    results.save(args.data_dir / "results.json")
    write_report(results, args.out)
    for leftover in args.data_dir.glob("*.db*"):
        leftover.unlink()


def write_report(results: Results, out: Path) -> None:
    """Writes the Markdown report and, next to it, the growth plot."""
    plot = out.parent / report.PLOT_NAME
    plotted = report.render_plot(results, plot)
    out.write_text(report.render(results, plotted))
    log(f"wrote {out}" + (f" and {plot}" if plotted else ""))


if __name__ == "__main__":
    main()
