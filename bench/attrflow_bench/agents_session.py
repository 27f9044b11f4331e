"""AttrflowSession beside the OpenAI Agents SDK's own SQLiteSession, in one run: add_items
throughput (two items a call, as a turn adds), get_items(limit=20) throughput, get_items
latency at the full size over at 100 items, and add_items from many tasks at once.

    python -m attrflow_bench.agents_session [--smoke] [--items N] [--data-dir DIR]

Alone it prints its figures as JSON; ``make bench`` runs it as section 9 (:func:`figures`,
:func:`render`), both sessions on SQLite files of the run's data folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.memory import SQLiteSession
from attrflow.integrations.openai_agents import AttrflowSession

from attrflow_bench.results import Results

PREFIX = "agents"
FULL_ITEMS = 10_000
SMOKE_ITEMS = 300
RATIOS = ("add_items_per_s", "get20_per_s", "concurrent_add_items_per_s", "get20_latency_ratio")

READS = 200
TASKS = 50


def item(n: int) -> dict[str, Any]:
    return {"role": "user" if n % 2 else "assistant", "content": f"message {n} " + "x" * 200}


async def measure(session: Any, items: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    start = time.perf_counter()
    for n in range(0, 100, 2):
        await session.add_items([item(n), item(n + 1)])
    start_read = time.perf_counter()
    for _ in range(READS):
        await session.get_items(20)
    figures["get20_latency_100_us"] = (time.perf_counter() - start_read) / READS * 1e6
    start = time.perf_counter()
    for n in range(100, items, 2):
        await session.add_items([item(n), item(n + 1)])
    figures["add_items_per_s"] = (items - 100) / (time.perf_counter() - start)
    start_read = time.perf_counter()
    for _ in range(READS):
        await session.get_items(20)
    elapsed = time.perf_counter() - start_read
    figures["get20_per_s"] = READS / elapsed
    figures["get20_latency_full_us"] = elapsed / READS * 1e6
    figures["get20_latency_ratio"] = (
        figures["get20_latency_full_us"] / figures["get20_latency_100_us"]
    )
    start = time.perf_counter()
    await asyncio.gather(
        *(session.add_items([item(t), item(t + 1)]) for t in range(0, 2 * TASKS * 10, 2))
    )
    figures["concurrent_add_items_per_s"] = 2 * TASKS * 10 / (time.perf_counter() - start)
    assert len(await session.get_items(30)) == 30
    return figures


async def run(items: int, folder: Path) -> dict[str, Any]:
    ours = AttrflowSession("bench", str(folder / "attrflow.db"))
    theirs = SQLiteSession("bench", str(folder / "sdk.db"))
    try:
        result: dict[str, Any] = {"items": items, "attrflow": await measure(ours, items)}
        result["SQLiteSession"] = await measure(theirs, items)
    finally:
        ours.close()
        theirs.close()
    result["ratios"] = {
        key: result["attrflow"][key] / result["SQLiteSession"][key]
        for key in ("add_items_per_s", "get20_per_s", "concurrent_add_items_per_s")
    }
    return result


def figures(smoke: bool, data_dir: Path, results: Results) -> None:
    """Measures this section (one repeat) into ``results``."""
    items = SMOKE_ITEMS if smoke else FULL_ITEMS
    folder = data_dir / "agents-session"
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob("*.db*"):
        leftover.unlink()
    measured = asyncio.run(run(items, folder))
    results.facts[f"{PREFIX}.items"] = items
    for who in ("attrflow", "SQLiteSession"):
        for key, value in measured[who].items():
            unit = "us" if key.endswith("_us") else ("x" if key.endswith("ratio") else "/s")
            results.add(f"{PREFIX}.{who}.{key}", unit, value)


def render(results: Results) -> list[str]:
    """This section of BENCHMARKS.md (empty when the run did not measure it)."""
    if f"{PREFIX}.attrflow.add_items_per_s" not in results.series:
        return []
    items = results.facts[f"{PREFIX}.items"]
    lines = [
        "## 9. Agent memory: `AttrflowSession` against the SDK's `SQLiteSession`",
        "",
        f"One session of {items:,} items on an SQLite file each, in one process and one run: "
        "`add_items` of two items a call (a turn), `get_items(limit=20)`, its latency at "
        f"{items:,} items over its latency at 100, and `add_items` from {TASKS} tasks at once. "
        "Targets: throughput ≥ 1× of SQLiteSession; the latency ratio ≤ 1.2×.",
        "",
        "| figure | AttrflowSession | SQLiteSession | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for key in RATIOS:
        ours = results.values(f"{PREFIX}.attrflow.{key}")[-1]
        theirs = results.values(f"{PREFIX}.SQLiteSession.{key}")[-1]
        lines.append(f"| `{key}` | {ours:,.2f} | {theirs:,.2f} | {ours / theirs:.2f}× |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="300 items")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args(argv)
    items = 300 if args.smoke else args.items
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.data_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(json.dumps(asyncio.run(run(items, folder)), indent=1))


if __name__ == "__main__":
    main()
