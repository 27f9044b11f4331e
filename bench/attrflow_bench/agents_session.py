"""AttrflowSession beside the OpenAI Agents SDK's own SQLiteSession, in one run: add_items
throughput (two items a call, as a turn adds), get_items(limit=20) throughput, get_items
latency at the full size over at 100 items, and add_items from many tasks at once.

    python -m attrflow_bench.agents_session [--smoke] [--items N] [--data-dir DIR]

Not yet a section of ``make bench``: it prints its figures as JSON.
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
        result = {"items": items, "attrflow": await measure(ours, items)}
        result["SQLiteSession"] = await measure(theirs, items)
    finally:
        ours.close()
        theirs.close()
    result["ratios"] = {
        key: result["attrflow"][key] / result["SQLiteSession"][key]
        for key in ("add_items_per_s", "get20_per_s", "concurrent_add_items_per_s")
    }
    return result


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
