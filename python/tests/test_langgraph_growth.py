"""A real StateGraph whose add_messages list grows one message a step costs storage linear in
the messages: the SQLite file's growth from step 100 to 200 is about that from 0 to 100,
not three times it (a saver copying the list each step grows quadratically)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from attrflow.integrations.langgraph import AttrflowSaver


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _graph(saver: AttrflowSaver) -> Any:
    def step(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"message {len(state['messages'])} " + "x" * 200)]}

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


def _used_bytes(path: Path) -> int:
    # Read-only, after the store closed: its pages then hold everything committed.
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def test_storage_grows_linearly_with_messages(tmp_path: Path) -> None:
    path = tmp_path / "attrflow.db"
    config = {"configurable": {"thread_id": "growth"}}
    sizes = []
    for _ in range(3):
        with AttrflowSaver.from_store(str(path)) as saver:
            graph = _graph(saver)
            if sizes:
                for _ in range(100):
                    graph.invoke({"messages": []}, config)
            state = graph.get_state(config)
        sizes.append(_used_bytes(path))
    assert len(state.values["messages"]) == 200
    first, second = sizes[1] - sizes[0], sizes[2] - sizes[1]
    print(f"bytes: {sizes}; growth 0-100: {first}, 100-200: {second}")
    assert second < 1.5 * first
