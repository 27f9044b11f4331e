"""Real agent messages fit the LangGraph saver: a thread with a 100 KB message round-trips
exactly on both stores, a value over the saver's limit is refused with nothing stored, and
``list()`` with no config lists every checkpoint of every thread."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph_support import run
from typing_extensions import TypedDict

from attrflow.errors import InvalidInputError
from attrflow.integrations.langgraph import MAX_VALUE_BYTES, AttrflowSaver


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def long_text(size: int) -> str:
    """About ``size`` bytes of UTF-8 text: lines, quotes, tabs and non-ASCII characters."""
    line = 'ligne «café» — "ok"\tß→✓\n'
    return line * (size // len(line.encode()))


def tool_graph(saver: AttrflowSaver, output: str) -> Any:
    """A graph whose node answers each question with a tool message holding ``output``
    and an assistant message."""

    def tool(state: ChatState) -> dict[str, Any]:
        n = len(state["messages"])
        return {
            "messages": [
                ToolMessage(content=output, tool_call_id=f"call-{n}", id=f"tool-{n}"),
                AIMessage(content=f"answer {n}", id=f"ai-{n}"),
            ]
        }

    graph = StateGraph(ChatState)
    graph.add_node("tool", tool)
    graph.add_edge(START, "tool")
    graph.add_edge("tool", END)
    return graph.compile(checkpointer=saver)


def test_a_thread_with_a_100_kb_message_round_trips(store_url: str) -> None:
    output = long_text(100_000)
    config: RunnableConfig = {"configurable": {"thread_id": "large"}}
    with AttrflowSaver.from_store(store_url) as saver:
        graph = tool_graph(saver, output)
        for turn in range(3):
            graph.invoke({"messages": [HumanMessage(content=f"q{turn}", id=f"q-{turn}")]}, config)
    with AttrflowSaver.from_store(store_url) as again:
        messages = tool_graph(again, output).get_state(config).values["messages"]
        kinds = [type(m).__name__ for m in messages]
        assert kinds == ["HumanMessage", "ToolMessage", "AIMessage"] * 3
        assert all(m.content == output for m in messages if isinstance(m, ToolMessage))
        assert len(list(again.list(config))) >= 3


def test_a_message_over_the_limit_is_refused_and_nothing_is_stored(store_url: str) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "over"}}
    with AttrflowSaver.from_store(store_url) as saver:
        graph = tool_graph(saver, long_text(MAX_VALUE_BYTES))
        with pytest.raises(InvalidInputError, match=f"the limit is {MAX_VALUE_BYTES}"):
            graph.invoke({"messages": [HumanMessage(content="q", id="q")]}, config)
        # The input step's checkpoint was stored before the node ran; nothing of the
        # refused step was.
        state = graph.get_state(config).values
        assert [m.content for m in state.get("messages", [])] == ["q"]


def test_list_without_a_config_lists_every_thread(store_url: str) -> None:
    # Ten fresh threads: a step's put and its tasks' put_writes run on background threads at
    # once, and each first put of a thread once lost its index entry to a racing put_writes.
    threads = [f"t{n}" for n in range(10)]
    with AttrflowSaver.from_store(store_url) as saver:
        for thread in threads:
            run(saver, thread, 2)
        listed = list(saver.list(None))
        assert {t.config["configurable"]["thread_id"] for t in listed} == set(threads)
        for thread in threads:
            mine = list(saver.list({"configurable": {"thread_id": thread}}))
            assert len(mine) == 4, thread  # the input, the first step and two messages
            assert [t for t in listed if t.config["configurable"]["thread_id"] == thread] == mine
        assert len(listed) == 4 * len(threads)
        assert len(list(saver.list(None, limit=2))) == 2
