"""Concurrent add_items on one session, from many tasks and from several processes, lose
and duplicate nothing, and each call's items stay contiguous and in order."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from attrflow import AsyncClient
from attrflow.integrations.openai_agents import AttrflowSession

CALLS = 30
PER_CALL = 3

WRITER = """
import asyncio, sys
from attrflow.integrations.openai_agents import AttrflowSession
store, name, calls, per_call = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
async def main():
    async with AttrflowSession("s-shared", store) as session:
        sys.stdin.readline()  # start together
        await asyncio.gather(*(session.add_items(
            [{"writer": name, "call": c, "part": p} for p in range(per_call)])
            for c in range(calls)))
asyncio.run(main())
"""


def assert_whole_calls(items: list[Any], writers: list[str]) -> None:
    expected = {(w, c, p) for w in writers for c in range(CALLS) for p in range(PER_CALL)}
    seen = [(i["writer"], i["call"], i["part"]) for i in items]
    assert len(seen) == len(expected)
    assert set(seen) == expected
    for start in range(0, len(seen), PER_CALL):
        call = seen[start : start + PER_CALL]
        assert call == [(call[0][0], call[0][1], p) for p in range(PER_CALL)]


def test_many_tasks_add_to_one_session(store_url: str) -> None:
    async def run() -> list[Any]:
        async with AsyncClient(store_url) as client:
            sessions = [AttrflowSession("s-shared", client=client) for _ in range(4)]
            await asyncio.gather(
                *(
                    sessions[c % 4].add_items(
                        [
                            {"writer": f"t{c % 4}", "call": c // 4, "part": p}
                            for p in range(PER_CALL)
                        ]
                    )
                    for c in range(4 * CALLS)
                )
            )
            return await sessions[0].get_items()

    assert_whole_calls(asyncio.run(run()), [f"t{n}" for n in range(4)])


def test_processes_add_to_one_session(store_url: str, tmp_path: Path) -> None:
    writers = ["left", "right", "middle"]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url, name, str(CALLS), str(PER_CALL)],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in writers
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err

    async def read() -> list[Any]:
        async with AttrflowSession("s-shared", store_url) as session:
            return await session.get_items()

    assert_whole_calls(asyncio.run(read()), writers)
