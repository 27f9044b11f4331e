"""pop_item removes and returns the newest item wherever it is stored, by a removal record:
repeated pops cross chunk boundaries, racing pops remove distinct items, and an export of
the log shows every item and the records that removed them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from attrflow import AsyncClient
from attrflow.integrations.openai_agents import SESSION_LOG, AttrflowSession


def item(n: int) -> dict[str, object]:
    return {"role": "user", "content": f"message {n} — ünïcödé"}


def test_pops_cross_chunk_boundaries(store_url: str) -> None:
    async def run() -> None:
        items = [item(n) for n in range(250)]
        async with AttrflowSession("s-pop", store_url) as session:
            assert await session.pop_item() is None
            await session.add_items(items)
            popped = [await session.pop_item() for _ in range(160)]
            assert popped == items[:89:-1]
            assert await session.get_items() == items[:90]
            assert await session.get_items(5) == items[85:90]
            await session.add_items([item(1000)])
            assert await session.pop_item() == item(1000)
            assert await session.pop_item() == item(89)
        async with AttrflowSession("s-pop", store_url) as again:
            assert await again.get_items() == items[:89]
            for n in range(88, -1, -1):
                assert await again.pop_item() == item(n)
            assert await again.pop_item() is None
            assert await again.get_items() == []

    asyncio.run(run())


def test_racing_pops_remove_distinct_items(store_url: str) -> None:
    async def run() -> None:
        items = [item(n) for n in range(40)]
        async with AsyncClient(store_url) as client:
            await AttrflowSession("s-race", client=client).add_items(items)
            # Separate sessions over one client: each pop reads, then claims its item.
            sessions = [AttrflowSession("s-race", client=client) for _ in range(10)]
            popped = await asyncio.gather(*(s.pop_item() for s in sessions))
            reader = AttrflowSession("s-race", client=client)
            contents = [str(p["content"]) for p in popped if p is not None]
            assert sorted(contents) == sorted(str(i["content"]) for i in items[30:])
            assert await reader.get_items() == items[:30]

    asyncio.run(run())


def test_an_export_shows_the_removed_item_and_its_removal(store_url: str, tmp_path: Path) -> None:
    async def run() -> None:
        async with AttrflowSession("s-export", store_url) as session:
            await session.add_items([item(1), item(2)])
            assert await session.pop_item() == item(2)

    asyncio.run(run())
    exported = subprocess.run(
        [
            sys.executable,
            "-m",
            "attrflow.cli",
            "--store",
            store_url,
            "export",
            "s-export",
            "--log",
            SESSION_LOG,
        ],
        # From a folder holding no attrflow source, so the installed package is run.
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    records = [json.loads(line) for line in exported.splitlines()]
    assert [r["record"] for r in records][:2] == [{"item": item(1)}, {"item": item(2)}]
    assert records[2]["record"]["removed"] == records[1]["sequence"]
    assert len(records) == 3
