"""Python at native speed (section 3b of BENCHMARKS.md): many `AsyncClient` tasks against as
many Rust threads doing the same appends, and the HTTP service against a bare-ASGI floor.

- Concurrency: 16 workers, each registering subscribers on its own archive (flow IDs
  ``concurrent-00`` …), so no two contend for a lock: in Rust 16 threads
  (``attrflow-bench concurrent-appends``), in Python 16 asyncio tasks on one
  ``AsyncClient``, each on a fresh store at ``synchronous=NORMAL`` and at ``FULL``.
- HTTP, wrk with 16 connections on loopback, every server without its access log: the
  service's archived page (uvicorn, as ``make run`` serves it), the same app under hypercorn
  (the server it replaced), and the floor, :mod:`attrflow_bench.asgi_floor` under uvicorn
  with uvloop and httptools; then the service's register (FULL store), for its p99 and
  errors. The servers take turns, repeat by repeat.

Run alone (with the one-at-a-time client rates of section 3, and the ratios the targets
name)::

    python -m attrflow_bench.python_speed --bench-bin B --data-dir D [--repeats 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from attrflow import AsyncClient
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow

from attrflow_bench import http_load, phases
from attrflow_bench.client_rates import ARCHIVED_PAGE, registration
from attrflow_bench.plan import FULL, Plan
from attrflow_bench.results import Results
from attrflow_bench.rust_bench import RustBench
from attrflow_bench.service import HOST, ROUTES, free_port, stop

BENCH_DIR = Path(__file__).resolve().parents[1]
EXAMPLES_DIR = BENCH_DIR.parent / "examples" / "python"
READY_TIMEOUT_SECONDS = 60.0
SYNCHRONOUS = ("normal", "full")
FLOW = ChunkedSubscriberFlow()


def flow_id(worker: int) -> str:
    """The archive of worker ``worker``, as the Rust benchmark names it."""
    return f"concurrent-{worker:02}"


async def _async_appends(store: Path, synchronous: str, workers: int, appends: int) -> float:
    async with await AsyncClient.open(str(store), synchronous=synchronous) as client:
        for worker in range(workers):
            await client.start_flow(FLOW, flow_id(worker))

        async def append(worker: int) -> None:
            for sequence in range(1, appends + 1):
                await client.invoke_rpc(
                    FLOW.register_subscriber, flow_id(worker), registration(sequence)
                )

        started = time.perf_counter()
        await asyncio.gather(*(append(worker) for worker in range(workers)))
        return workers * appends / (time.perf_counter() - started)


def async_appends_per_second(folder: Path, synchronous: str, workers: int, appends: int) -> float:
    """Appends per second of ``workers`` tasks on one ``AsyncClient``, on a fresh store."""
    store = folder / f"python-concurrent-{synchronous}.db"
    _remove_store(store)
    try:
        return asyncio.run(_async_appends(store, synchronous, workers, appends))
    finally:
        _remove_store(store)


def concurrency_figures(rust: RustBench, plan: Plan, results: Results) -> None:
    """16 Rust threads and 16 AsyncClient tasks, NORMAL and FULL, interleaved per repeat."""
    workers, appends = plan.concurrent_workers, plan.concurrent_appends
    results.facts["concurrent.config"] = {"workers": workers, "appends": appends}
    for _ in range(plan.repeats):
        native = rust.measure("concurrent-appends", workers=workers, appends=appends, repeats=1)
        results.merge_rust("concurrent", native)
        for synchronous in SYNCHRONOUS:
            rate = async_appends_per_second(rust.data_dir, synchronous, workers, appends)
            results.add(f"python_concurrent.appends_per_s@{synchronous}", "ops/s", rate)


@contextmanager
def serving(argv: list[str], port: int) -> Iterator[str]:
    """Runs a server process (``argv``, listening on ``port``) until the block ends; yields
    its base URL once it answers."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(BENCH_DIR), str(EXAMPLES_DIR), env.get("PYTHONPATH", "")]
    )
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=BENCH_DIR
    )
    base_url = f"http://{HOST}:{port}"
    try:
        _wait_until_ready(process, port)
        yield base_url
    finally:
        stop(process)


def _wait_until_ready(process: subprocess.Popen[bytes], port: int) -> None:
    import http.client

    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"a server exited at start-up: {stderr}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"a server did not answer within {READY_TIMEOUT_SECONDS}s")


def service_argv(serve_py: Path, store: Path, port: int) -> list[str]:
    """The example service as ``make run`` serves it, without the access log."""
    return [
        sys.executable,
        str(serve_py.resolve()),
        "--host",
        HOST,
        "--port",
        str(port),
        "--store",
        str(store.resolve()),
        "--no-access-log",
    ]


def hypercorn_argv(store: Path, port: int) -> list[str]:
    """The same app under hypercorn."""
    module = "attrflow_bench.hypercorn_service"
    return [sys.executable, "-m", module, HOST, str(port), str(store.resolve())]


def floor_argv(port: int) -> list[str]:
    """The bare ASGI floor under uvicorn with uvloop and httptools."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "attrflow_bench.asgi_floor:app",
        "--host",
        HOST,
        "--port",
        str(port),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--log-level",
        "warning",
    ]


PAGE_PATH = f"{ROUTES}/subscribers?pageToken={ARCHIVED_PAGE}"
CONNECTIONS = 16


def http_floor_figures(rust: RustBench, serve_py: Path, plan: Plan, results: Results) -> None:
    """The archived page on the service, on hypercorn and on the floor; register p99."""
    store = rust.data_dir / "http-floor.db"
    rust.populate(store, plan.client_history)
    seconds = plan.http_seconds
    for _ in range(plan.repeats):
        port = free_port()
        with serving(service_argv(serve_py, store, port), port) as url:
            page = http_load.run_wrk(url + PAGE_PATH, "GET", None, CONNECTIONS, seconds)
            register = http_load.run_wrk(
                f"{url}{ROUTES}/register", "POST", http_load.REGISTER_BODY, CONNECTIONS, seconds
            )
        results.add("http16.service_page_per_s", "req/s", page.requests_per_second)
        results.add("http16.service_page_p99_ms", "ms", page.p99_ms)
        results.add("http16.register_per_s", "req/s", register.requests_per_second)
        results.add("http16.register_p99_ms", "ms", register.p99_ms)
        results.add("http16.register_errors", "requests", float(register.errors))
        port = free_port()
        with serving(hypercorn_argv(store, port), port) as url:
            page = http_load.run_wrk(url + PAGE_PATH, "GET", None, CONNECTIONS, seconds)
        results.add("http16.hypercorn_page_per_s", "req/s", page.requests_per_second)
        port = free_port()
        with serving(floor_argv(port), port) as url:
            floor = http_load.run_wrk(url + PAGE_PATH, "GET", None, CONNECTIONS, seconds)
        results.add("http16.floor_per_s", "req/s", floor.requests_per_second)


def _remove_store(store: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)


RATIOS = (
    ("AsyncClient register", "python_async.register_per_s", "native.register_per_s"),
    ("AsyncClient archived page", "python_async.page_per_s", "native.page_per_s"),
    ("Client register", "python_sync.register_per_s", "native.register_per_s"),
    ("Client archived page", "python_sync.page_per_s", "native.page_per_s"),
    (
        "16 tasks against 16 threads, NORMAL",
        "python_concurrent.appends_per_s@normal",
        "concurrent.appends_per_s@normal",
    ),
    (
        "16 tasks against 16 threads, FULL",
        "python_concurrent.appends_per_s@full",
        "concurrent.appends_per_s@full",
    ),
    ("HTTP archived page against the floor", "http16.service_page_per_s", "http16.floor_per_s"),
)
"""The ratios the Python-speed targets name: (label, Python series, baseline series)."""


def main(argv: list[str] | None = None) -> None:
    """Measures the client rates, the concurrency and the HTTP floor alone; prints each
    series' median and each target's ratio (median of the per-repeat ratios)."""
    parser = argparse.ArgumentParser(description="attrflow's Python-speed benchmarks")
    parser.add_argument("--bench-bin", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=FULL.repeats)
    parser.add_argument("--calls", type=int, default=FULL.client_calls)
    args = parser.parse_args(argv)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    plan = replace(FULL, repeats=args.repeats, client_calls=args.calls)
    rust = RustBench(args.bench_bin.resolve(), args.data_dir.resolve())
    results = Results()
    phases.client_figures(rust, plan, results)
    concurrency_figures(rust, plan, results)
    http_floor_figures(rust, EXAMPLES_DIR / "serve.py", plan, results)
    results.save(args.data_dir / "python-speed.json")
    for name, values in sorted(results.series.items()):
        print(f"{name}: median {statistics.median(values):,.1f} {results.units[name]}")
    for label, python, baseline in RATIOS:
        ratios = [a / b for a, b in zip(results.values(python), results.values(baseline))]
        print(f"{label}: {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
