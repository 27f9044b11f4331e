"""Bad input to the LangGraph saver: a typed error naming what was wrong, nothing stored."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from langgraph.checkpoint.base import empty_checkpoint

from attrflow import Client
from attrflow.errors import AttrflowError, InvalidInputError
from attrflow.integrations.langgraph import MAX_VALUE_BYTES, AttrflowSaver


def _put(saver: AttrflowSaver, thread: object, value: object) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": value}
    checkpoint["channel_versions"] = {"messages": saver.get_next_version(None, None)}
    saver.put(
        {"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
        checkpoint,
        {},
        dict(checkpoint["channel_versions"]),
    )


def test_non_serialisable_value_is_refused_and_nothing_stored(store_url: str) -> None:
    with AttrflowSaver.from_store(store_url) as saver:
        with pytest.raises(InvalidInputError, match=r"channel 'messages'.*cannot be serialized"):
            _put(saver, "t", [object()])
        assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is None
        assert list(saver.list(None)) == []


def test_oversized_value_is_refused_and_nothing_stored(store_url: str) -> None:
    with AttrflowSaver.from_store(store_url) as saver:
        with pytest.raises(InvalidInputError, match=f"the limit is {MAX_VALUE_BYTES}"):
            _put(saver, "t", "x" * (MAX_VALUE_BYTES + 1))
        assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is None


@pytest.mark.parametrize("config", [{}, {"configurable": {}}, {"configurable": {"thread_id": ""}}])
def test_bad_config_names_the_thread_id(store_url: str, config: dict[str, object]) -> None:
    with AttrflowSaver.from_store(store_url) as saver:
        with pytest.raises(InvalidInputError, match=r"thread_id|configurable"):
            saver.get_tuple(config)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            _put(saver, 42, ["a"])
        assert list(saver.list(None)) == []


def test_closed_store_raises_a_typed_error(store_url: str) -> None:
    client = Client(store_url)
    saver = AttrflowSaver(client)
    client.close()
    with pytest.raises(AttrflowError, match="closed"):
        _put(saver, "t", ["a"])
    with pytest.raises(AttrflowError, match="closed"):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
