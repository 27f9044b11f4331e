"""AttrflowSession keeps the SDK's items exactly, returns the newest ``limit`` oldest first
(``session_settings.limit`` when none is given), keeps many sessions apart in one store, and
a limited read reads only the chunks it needs."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.memory import SessionSettings

from attrflow import AsyncClient
from attrflow.integrations.openai_agents import AttrflowSession


def message(n: int) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "user" if n % 2 else "assistant",
        "content": [{"type": "input_text", "text": f"tour {n} — naïve café, 東京 🚀"}],
        "meta": {"n": n, "nested": [[n, None, True, 1.5], {"k": "v"}]},
    }


def test_items_round_trip_in_order(store_url: str) -> None:
    async def run() -> None:
        items = [message(n) for n in range(250)]
        async with AttrflowSession("s-round-trip", store_url) as session:
            await session.add_items(items[:3])
            await session.add_items(items[3:])
            assert await session.get_items() == items
            assert await session.get_items(20) == items[-20:]
            assert await session.get_items(1) == items[-1:]
            assert await session.get_items(0) == []
            assert await session.get_items(-1) == items
            assert await session.get_items(1000) == items
        async with AttrflowSession("s-round-trip", store_url) as again:
            assert await again.get_items() == items

    asyncio.run(run())


def test_session_settings_limit_is_the_default(store_url: str) -> None:
    async def run() -> None:
        items = [message(n) for n in range(30)]
        settings = SessionSettings(limit=5)
        async with AttrflowSession("s-settings", store_url, session_settings=settings) as session:
            await session.add_items(items)
            assert await session.get_items() == items[-5:]
            assert await session.get_items(7) == items[-7:]

    asyncio.run(run())


def test_many_sessions_share_one_store_apart(store_url: str) -> None:
    async def run() -> None:
        async with AsyncClient(store_url) as client:
            sessions = [AttrflowSession(f"user-{n}", client=client) for n in range(5)]
            await asyncio.gather(
                *(s.add_items([message(n), message(n + 100)]) for n, s in enumerate(sessions))
            )
            for n, session in enumerate(sessions):
                assert await session.get_items() == [message(n), message(n + 100)]
                session.close()  # a borrowed client stays open
            assert not client.closed

    asyncio.run(run())


def test_a_limited_read_reads_only_the_newest_chunks(store_url: str) -> None:
    async def run() -> None:
        # 125 chunks of 8 (the chunk size of the default max_item_bytes), the newest full.
        items = [message(n) for n in range(1000)]
        async with AsyncClient(store_url) as client:
            session = AttrflowSession("s-bounded", client=client)
            await session.add_items(items)

            async def pages_read(limit: int | None) -> int:
                before = client.metrics().calls
                assert await session.get_items(limit) == (
                    items if limit is None else items[-limit:]
                )
                return client.metrics().calls - before

            assert await pages_read(8) == 1
            assert await pages_read(20) == 3
            assert await pages_read(100) == 13
            assert await pages_read(None) == 125

    asyncio.run(run())
