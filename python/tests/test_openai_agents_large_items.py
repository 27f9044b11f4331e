"""Real agent items fit: a 100 KB tool output round-trips exactly through AttrflowSession on
both stores, ``max_item_bytes`` takes larger ones, and an item over the session's limit is
an ItemTooLargeError naming its place, size and the limit, with nothing of its batch stored.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("agents")

from attrflow import InvalidInputError
from attrflow.integrations.openai_agents import (
    DEFAULT_MAX_ITEM_BYTES,
    AttrflowSession,
    ItemTooLargeError,
)

QUESTION = {"role": "user", "content": "Summarise the log, s'il vous plaît"}


def tool_output(size: int) -> dict[str, object]:
    """A function call output of about ``size`` bytes as JSON (its text has lines, quotes,
    tabs and non-ASCII characters)."""
    line = 'ligne «café» — "ok"\tß→✓\n'
    per_line = len(json.dumps(line, ensure_ascii=False)[1:-1].encode())
    text = line * (size // per_line)
    return {"type": "function_call_output", "call_id": "call_1", "output": text}


def json_bytes(item: object) -> int:
    return len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_100_kb_tool_output_round_trips_exactly(store_url: str) -> None:
    big = tool_output(100_000)
    items = [QUESTION, big, {"role": "assistant", "content": "done"}]

    async def run() -> None:
        async with AttrflowSession("s-large", store_url) as session:
            await session.add_items(items[:1])
            await session.add_items(items[1:])
            # Many after it, so the large item is read back from an archived chunk too.
            await session.add_items([{"role": "user", "content": f"m{n}"} for n in range(30)])
        async with AttrflowSession("s-large", store_url) as again:
            assert (await again.get_items())[:3] == items
            assert (await again.get_items(33))[1] == big
            for _ in range(31):
                await again.pop_item()
            assert await again.pop_item() == big

    asyncio.run(run())


def test_an_item_over_the_limit_is_refused_naming_it_and_nothing_is_stored(
    store_url: str,
) -> None:
    too_big = tool_output(140_000)

    async def run() -> None:
        async with AttrflowSession("s-over", store_url) as session:
            await session.add_items([QUESTION])
            with pytest.raises(ItemTooLargeError) as raised:
                await session.add_items([QUESTION, too_big])
            assert (raised.value.index, raised.value.limit) == (1, DEFAULT_MAX_ITEM_BYTES)
            assert raised.value.size == json_bytes(too_big)
            assert str(raised.value).startswith(
                f"item 1 of session 's-over' is {json_bytes(too_big)} bytes as JSON; the "
                "session takes items of up to 128000 bytes"
            )
            assert isinstance(raised.value, InvalidInputError)
            assert await session.get_items() == [QUESTION]

    asyncio.run(run())


def test_max_item_bytes_sizes_the_log_for_larger_items(store_url: str) -> None:
    huge = tool_output(600_000)

    async def run() -> None:
        async with AttrflowSession("s-huge", store_url, max_item_bytes=700_000) as session:
            assert session.max_item_bytes == 700_000
            await session.add_items([QUESTION, huge, huge, QUESTION])
            assert await session.get_items() == [QUESTION, huge, huge, QUESTION]

    asyncio.run(run())


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "100"])
def test_a_bad_max_item_bytes_is_refused(tmp_path: object, bad: object) -> None:
    with pytest.raises(InvalidInputError, match="max_item_bytes"):
        AttrflowSession("s", f"{tmp_path}/never.db", max_item_bytes=bad)  # type: ignore[arg-type]
