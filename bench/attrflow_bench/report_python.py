"""Section 3b of BENCHMARKS.md: Python concurrency and the HTTP floor."""

from __future__ import annotations

from collections.abc import Callable

from attrflow_bench.notes import note
from attrflow_bench.results import Results

TableRows = list[tuple[str, str]]


def section(results: Results, table: Callable[[TableRows, Results], str]) -> list[str]:
    """The section's lines, tables drawn by ``table`` (the report's own)."""
    lines = ["## 3b. Python under concurrency, and HTTP against a bare-ASGI floor", ""]
    config = results.facts.get("concurrent.config")
    if config:
        lines += [
            f"{config['workers']} workers at once, each registering {config['appends']}",
            "subscribers on its own archive (no two contend for a lock), on a fresh SQLite",
            "store per figure: Rust threads in the benchmark binary against asyncio tasks",
            "sharing one `AsyncClient` (its calls run on the native module's worker threads).",
            "At FULL each commit waits for its own fsync on both sides, so that ratio follows",
            "the disk's fsync latency during each side's turn more than either side's code.",
            "",
            table(
                [
                    ("Rust, 16 threads, NORMAL", "concurrent.appends_per_s@normal"),
                    (
                        "Python AsyncClient, 16 tasks, NORMAL",
                        "python_concurrent.appends_per_s@normal",
                    ),
                    ("Rust, 16 threads, FULL", "concurrent.appends_per_s@full"),
                    ("AsyncClient, 16 tasks, FULL", "python_concurrent.appends_per_s@full"),
                ],
                results,
            ),
            "",
        ]
    if "http16.floor_per_s" in results.series:
        lines += [
            "wrk with 16 connections on loopback, every server without its access log, taking",
            "turns repeat by repeat: the service's archived page as `make run` serves it",
            "(uvicorn with uvloop and httptools), the same app under hypercorn (the server it",
            "replaced), and the floor: a bare ASGI app answering a constant 10 KB JSON body (the",
            "size of the page) under uvicorn with uvloop and httptools. Then the service's",
            "register (FULL store, the service's default), where 16 connections contend for",
            "the one `current` chunk.",
            "",
            table(
                [
                    ("floor: constant 10 KB JSON", "http16.floor_per_s"),
                    ("service archived page (uvicorn)", "http16.service_page_per_s"),
                    ("service archived page: p99", "http16.service_page_p99_ms"),
                    ("same app under hypercorn", "http16.hypercorn_page_per_s"),
                    ("service register", "http16.register_per_s"),
                    ("service register: p99", "http16.register_p99_ms"),
                    ("service register: errors", "http16.register_errors"),
                ],
                results,
            ),
            "",
        ]
    lines += note("3b-python")
    return lines
