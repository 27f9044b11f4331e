"""The whole ``make bench`` driver at its smallest sizes, so it keeps working between full
runs: every part runs (Redis Streams and wrk only where installed), the raw figures hold
one value per repeat, and the report names every target."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
BINARY = Path(os.environ.get("ATTRFLOW_BENCH_BIN", ROOT / "target" / "debug" / "attrflow-bench"))


def _postgres_available() -> bool:
    """Whether the PostgreSQL section runs (it needs the server's binaries)."""
    return shutil.which("initdb") is not None or bool(
        list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    )


def test_the_smoke_run_writes_every_figure_and_target(tmp_path: Path) -> None:
    assert BINARY.is_file(), (
        f"build the benchmark binary first: cargo build -p attrflow-bench ({BINARY})"
    )
    out = tmp_path / "BENCHMARKS.md"
    data = tmp_path / "data"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--smoke",
            "--bench-bin",
            str(BINARY),
            "--data-dir",
            str(data),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    results = json.loads((data / "results.json").read_text())
    expected = [
        "fsync.append_fsync_us",
        "growth.chunked_register_us@150",
        "growth.naive_append_us@150",
        "durable.attrflow_appends_per_s@full",
        "durable.raw_appends_per_s@normal",
        "native.register_per_s",
        "python_sync.page_per_s",
        "python_async.register_per_s",
        "concurrent.appends_per_s@full",
        "python_concurrent.appends_per_s@normal",
        "verifiable.appends_per_s@on",
        "verifiable.on_over_off",
        "verifiable.proof_us@1000",
        "verifiable.switch_on_s@1000",
    ]
    if shutil.which("wrk"):
        expected += ["http.register.c1.p50_ms", "http.page.c2.p99_ms"]
        expected += ["http16.floor_per_s", "http16.service_page_per_s", "http16.register_p99_ms"]
    if shutil.which("redis-server"):
        expected += ["redis.xadd_per_s@full", "attrflow.current_page_us@normal"]
        expected += [
            "concurrency.redis.one_flow.appends_per_s",
            "concurrency.redis_benchmark.many_flows.appends_per_s",
            "concurrency.native.grouped.many_flows.appends_per_s",
            "concurrency.native.grouped.many_flows.written_per_append",
            "concurrency.native.delayed.single_append_us",
            "concurrency.async.one_flow.appends_per_s",
            "tailing.in_process_p99_us",
            "tailing.cross_process_p50_us",
            "tailing.redis_p99_us",
            "tailing.trim.trim_ms@1000",
        ]
    if shutil.which("redis-server") and _postgres_available():
        expected += [
            "pg.grouped.one_flow.appends_per_s",
            "pg.per_call.many_flows.appends_per_s",
            "pg.redis.one_flow.appends_per_s",
            "pg.redis_benchmark.many_flows.appends_per_s",
        ]
    for name in expected:
        assert len(results["series"][name]) == 2, name
        assert all(value > 0 for value in results["series"][name]), name
    assert results["series"]["memory.peak_rss_mib"][0] > 0
    assert not list(data.glob("*.db*")), "the run leaves no stores behind"

    report = out.read_text()
    for key in ("| 1 |", "| 2-full |", "| 2-normal |", "| 3-sync-page |", "| 5 |"):
        assert key in report
    for key in ("| 3-concurrent-full |", "| 3-http-page |"):
        assert key in report
    assert "## Closing note" in report
    assert "## 11. Verifiable logs" in report
    if shutil.which("redis-server"):
        assert "## 8. Tailing and trimming" in report
    if shutil.which("redis-server") and _postgres_available():
        assert "## 7. PostgreSQL" in report
        for note in sorted((BENCH / "notes").glob("*.md")):
            first_line = note.read_text(encoding="utf-8").splitlines()[0]
            assert first_line in report, f"bench/notes/{note.name} is kept in the report"
    assert (tmp_path / "BENCHMARKS-append-growth.png").is_file()

    again = tmp_path / "again" / "BENCHMARKS.md"
    again.parent.mkdir()
    rendered = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--from-results",
            str(data / "results.json"),
            "--out",
            str(again),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert rendered.returncode == 0, rendered.stderr
    assert again.read_text() == report, "a saved run renders to the same report"
