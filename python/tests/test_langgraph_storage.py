"""The LangGraph saver on a real graph: a growing message list costs storage linear in its
messages, and values round-trip."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langgraph_support import run

from attrflow.integrations.langgraph import AttrflowSaver


def _stored_bytes(path: Path) -> int:
    """Bytes the SQLite store holds in live pages (the file less its free pages)."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * page_size)


def test_message_list_storage_grows_linearly(tmp_path: Path) -> None:
    sizes = {}
    for steps in (100, 200, 400):
        path = tmp_path / f"linear-{steps}.db"
        with AttrflowSaver.from_store(str(path)) as saver:
            state = run(saver, "t", steps)
            assert [m.content for m in state["messages"]] == [
                f"step {n}" for n in range(1, steps + 1)
            ]
        sizes[steps] = _stored_bytes(path)
    first = sizes[200] - sizes[100]
    second = sizes[400] - sizes[200]
    # Linear: 200 more steps cost about twice what 100 more did; quadratic would be 4x.
    print(f"stored bytes by steps: {sizes}")
    assert second < 2.6 * first, sizes
    assert os.path.getsize(tmp_path / "linear-400.db") > 0


def test_latest_checkpoint_reads_the_whole_history(store_url: str) -> None:
    with AttrflowSaver.from_store(store_url) as saver:
        run(saver, "thread/with spaces ü", 30)
        latest = saver.get_tuple({"configurable": {"thread_id": "thread/with spaces ü"}})
        assert latest is not None
        messages = latest.checkpoint["channel_values"]["messages"]
        assert [m.content for m in messages] == [f"step {n}" for n in range(1, 31)]
        listed = list(saver.list({"configurable": {"thread_id": "thread/with spaces ü"}}, limit=3))
        assert len(listed) == 3
        assert listed[0].config == latest.config
        ids = [t.config["configurable"]["checkpoint_id"] for t in listed]
        assert ids == sorted(ids, reverse=True)
        older = list(
            saver.list(
                {"configurable": {"thread_id": "thread/with spaces ü"}},
                before=listed[-1].config,
                limit=2,
            )
        )
        assert len(older) == 2
        assert all(t.config["configurable"]["checkpoint_id"] < ids[-1] for t in older)
