"""clear_session leaves no item readable, drops the archived chunks wholly before it (their
storage reclaimed), and the session is usable again afterwards."""

from __future__ import annotations

import asyncio

import pytest

from attrflow import Client, PageTrimmedError
from attrflow.flows.app_log import AppLog
from attrflow.integrations.openai_agents import SESSION_LOG, AttrflowSession


def item(n: int) -> dict[str, object]:
    return {"role": "assistant", "content": [{"type": "output_text", "text": f"réponse {n}"}]}


def test_clear_leaves_nothing_and_the_session_goes_on(store_url: str) -> None:
    async def run() -> None:
        async with AttrflowSession("s-clear", store_url) as session:
            await session.add_items([item(n) for n in range(350)])
            await session.clear_session()
            assert await session.get_items() == []
            assert await session.get_items(10) == []
            assert await session.pop_item() is None
            await session.add_items([item(1000), item(1001)])
            assert await session.get_items() == [item(1000), item(1001)]
            assert await session.pop_item() == item(1001)
            await session.clear_session()
            await session.clear_session()
            assert await session.get_items() == []

    asyncio.run(run())
    with Client(store_url) as client:
        log = AppLog(client, "s-clear")
        # The chunks holding the cleared items are gone; only the open one remains.
        newest = log.page(SESSION_LOG)
        assert newest.next_page_token == ""
        with pytest.raises(PageTrimmedError):
            log.page(SESSION_LOG, "00000000000000000001")
