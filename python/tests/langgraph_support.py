"""A LangGraph ``StateGraph`` with an ``add_messages`` channel that appends one message a
step, shared by the LangGraph saver tests (and run as a child process by the crash test:
``python langgraph_support.py STORE THREAD STEPS``)."""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class ChatState(TypedDict):
    """The graph's state: the message list, merged by ``add_messages``."""

    messages: Annotated[list[AnyMessage], add_messages]


def build_graph(saver: BaseCheckpointSaver[Any], steps: int, pause: float = 0.0) -> Any:
    """A graph whose one node adds message ``step N`` until there are ``steps``."""

    def step(state: ChatState) -> dict[str, Any]:
        if pause:
            time.sleep(pause)
        number = len(state["messages"]) + 1
        return {"messages": [AIMessage(content=f"step {number}", id=f"m-{number}")]}

    def more(state: ChatState) -> str:
        return "step" if len(state["messages"]) < steps else END

    graph = StateGraph(ChatState)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", more)
    return graph.compile(checkpointer=saver)


def run(saver: BaseCheckpointSaver[Any], thread: str, steps: int, pause: float = 0.0) -> Any:
    """Runs (or resumes, when the thread has a checkpoint) the graph to ``steps``."""
    graph = build_graph(saver, steps, pause)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 10 * steps + 10}
    started = graph.get_state(config).values
    return graph.invoke(None if started else {"messages": []}, config)


if __name__ == "__main__":
    from attrflow.integrations.langgraph import AttrflowSaver

    with AttrflowSaver.from_store(sys.argv[1]) as child_saver:
        run(child_saver, sys.argv[2], int(sys.argv[3]), pause=0.01)
