"""Sections 6 and 7 judge attrflow against Redis driven two ways: the Rust threads against
redis-benchmark (Redis's own C client), the ``AsyncClient`` tasks against redis-py. The
report shows both ratios and lists every target these sections miss among the missed ones,
with its profile."""

from __future__ import annotations

from attrflow_bench import concurrency, pg_concurrency
from attrflow_bench.findings import FINDINGS
from attrflow_bench.results import Results


def _section_6(rust: float, tasks: float, c_driven: float, py_driven: float) -> Results:
    results = Results()
    results.facts["concurrency.appenders"] = 16
    results.facts["concurrency.seconds"] = 3.0
    for shape in concurrency.SHAPES:
        for mode in ("grouped", "per_call", "delayed"):
            prefix = f"concurrency.native.{mode}.{shape}"
            results.add(f"{prefix}.appends_per_s", "ops/s", rust)
            results.add(f"{prefix}.conflicts_per_1000", "count", 0.0)
        results.add(f"concurrency.async.{shape}.appends_per_s", "ops/s", tasks)
        results.add(f"concurrency.async.{shape}.conflicts_per_1000", "count", 0.0)
        results.add(f"concurrency.redis_benchmark.{shape}.appends_per_s", "ops/s", c_driven)
        results.add(f"concurrency.redis.{shape}.appends_per_s", "ops/s", py_driven)
    for mode in ("grouped", "per_call"):
        results.add(f"concurrency.native.{mode}.single_append_us", "us", 200.0)
    return results


def _row(table: list[str], who: str, shape: str) -> list[str]:
    """The cells after ``who`` and ``shape`` of the table row they start."""
    for line in table:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[:2] == [who, shape]:
            return cells[2:]
    raise AssertionError(f"no row for {who} on {shape}")


def test_the_rust_threads_are_judged_against_redis_benchmark_and_the_tasks_against_redis_py() -> (
    None
):
    # Twice the redis-py figure but below twice redis-benchmark's: the Rust target is missed.
    results = _section_6(rust=40_000, tasks=18_000, c_driven=30_000, py_driven=17_000)
    assert concurrency.missed(results) == ["6-rust-one-flow", "6-rust-16-flows"]
    table = concurrency.render(results)
    rust = _row(table, "Rust threads, group commit", "one flow")
    assert rust[1:3] == ["1.33 (2×, **missed**)", "2.35"]
    tasks = _row(table, "`AsyncClient` tasks, group commit", "16 flows")
    assert tasks[1:3] == ["0.60", "1.06 (1×, met)"]
    c_driven = _row(table, "Redis XADD, redis-benchmark (C), 16 connections", "one flow")
    assert c_driven[:3] == ["30,000 (30,000–30,000)", "1.00", "1.76"]
    py_driven = _row(table, "Redis XADD, redis-py, 16 asyncio clients", "16 flows")
    assert py_driven[:3] == ["17,000 (17,000–17,000)", "0.57", "1.00"]
    assert all(key in FINDINGS for key in concurrency.missed(results))

    met = _section_6(rust=61_000, tasks=16_000, c_driven=30_000, py_driven=17_000)
    assert concurrency.missed(met) == ["6-async-one-flow", "6-async-16-flows"]
    assert all(key in FINDINGS for key in concurrency.missed(met))


def test_a_run_without_redis_benchmark_figures_judges_no_rust_target() -> None:
    # Results saved before Redis was driven by redis-benchmark still render.
    results = _section_6(rust=40_000, tasks=18_000, c_driven=30_000, py_driven=17_000)
    for shape in concurrency.SHAPES:
        del results.series[f"concurrency.redis_benchmark.{shape}.appends_per_s"]
    assert concurrency.missed(results) == []
    table = concurrency.render(results)
    assert _row(table, "Rust threads, group commit", "one flow")[1:3] == ["—", "2.35"]
    assert not any("redis-benchmark (C), 16 connections |" in line for line in table)


def test_the_postgresql_goals_missed_are_listed_with_their_profile() -> None:
    results = Results()
    results.add("pg.grouped.one_flow.appends_per_s", "ops/s", 3_000)
    results.add("pg.grouped.many_flows.appends_per_s", "ops/s", 6_000)
    assert pg_concurrency.missed(results) == ["7-pg-16-archives"]
    assert "7-pg-16-archives" in FINDINGS
    assert pg_concurrency.missed(Results()) == []
