"""Bad input to AttrflowSession raises a typed error naming what was wrong, and stores
nothing: an item that is not JSON, an item over the core's record limits, a session ID
that is not a valid flow ID, a closed store."""

from __future__ import annotations

import asyncio

import pytest

from attrflow import InvalidInputError, StorageError, ValueMappingError
from attrflow.integrations.openai_agents import AttrflowSession, InvalidSessionIdError

GOOD = {"role": "user", "content": "kept"}


def stored(store_url: str, session_id: str) -> list[object]:
    async def read() -> list[object]:
        async with AttrflowSession(session_id, store_url) as session:
            return await session.get_items()

    return asyncio.run(read())


def test_an_item_that_is_not_json_stores_nothing(store_url: str) -> None:
    async def run() -> None:
        async with AttrflowSession("s-bad-json", store_url) as session:
            await session.add_items([GOOD])
            with pytest.raises(ValueMappingError, match="object"):
                await session.add_items([GOOD, {"role": "user", "content": object()}])

    asyncio.run(run())
    assert stored(store_url, "s-bad-json") == [GOOD]


@pytest.mark.parametrize("content", ["x" * 140_000, ["y" * 50_000] * 3])
def test_an_oversized_item_stores_nothing(store_url: str, content: object) -> None:
    async def run() -> None:
        async with AttrflowSession("s-big", store_url) as session:
            await session.add_items([GOOD])
            with pytest.raises(InvalidInputError, match="takes items of up to 128000 bytes"):
                await session.add_items([GOOD, {"role": "user", "content": content}])

    asyncio.run(run())
    assert stored(store_url, "s-big") == [GOOD]


@pytest.mark.parametrize("session_id", ["", "a/b", "user:1", "x$", "tab\there", "s" * 257])
def test_an_invalid_session_id_is_refused_by_name(tmp_path: object, session_id: str) -> None:
    with pytest.raises(InvalidSessionIdError) as raised:
        AttrflowSession(session_id, f"{tmp_path}/never.db")
    assert raised.value.session_id == session_id
    assert f"session ID {session_id!r}" in str(raised.value)
    assert isinstance(raised.value, InvalidInputError)


def test_a_closed_store_raises_and_stores_nothing(store_url: str) -> None:
    async def run() -> None:
        session = AttrflowSession("s-closed", store_url)
        await session.add_items([GOOD])
        session.close()
        with pytest.raises(StorageError, match="closed"):
            await session.add_items([GOOD])
        with pytest.raises(StorageError, match="closed"):
            await session.get_items()

    asyncio.run(run())
    assert stored(store_url, "s-closed") == [GOOD]
