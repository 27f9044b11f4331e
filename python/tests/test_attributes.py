"""Attribute and AttributeMap handles and their lock and load selectors."""

from __future__ import annotations

import pytest

from attrflow import Attribute, AttributeMap, InvalidInputError
from attrflow.flows.chunked_subscriber import (
    ChunkedSubscriberFlow,
    SubscriberArchiveState,
    SubscriberChunk,
)


def test_the_archive_declares_its_attribute_and_map(flow: ChunkedSubscriberFlow) -> None:
    assert flow.archive_state == Attribute("subscriber_archive_state", SubscriberArchiveState)
    assert flow.subscriber_chunks == AttributeMap("subscriber_chunks", SubscriberChunk)
    assert flow.archive_state.type is SubscriberArchiveState
    assert ChunkedSubscriberFlow.attribute_definitions() == {
        "subscriber_archive_state": flow.archive_state,
        "subscriber_chunks": flow.subscriber_chunks,
    }


def test_selectors_name_physical_instances(flow: ChunkedSubscriberFlow) -> None:
    load = flow.subscriber_chunks.load("00000000000000000101")
    assert load.physical_name == "subscriber_chunks/00000000000000000101"
    assert load.instance == "00000000000000000101"
    assert load.attribute_map is flow.subscriber_chunks
    assert flow.subscriber_chunks.lock("current").physical_name == "subscriber_chunks/current"
    assert flow.archive_state.lock().physical_name == "subscriber_archive_state"
    assert load == flow.subscriber_chunks.load("00000000000000000101")


@pytest.mark.parametrize("instance", ["", "a/b"])
def test_bad_instance_keys_are_invalid_input(flow: ChunkedSubscriberFlow, instance: str) -> None:
    with pytest.raises(InvalidInputError, match="instance key"):
        flow.subscriber_chunks.load(instance)
    with pytest.raises(InvalidInputError, match="instance key"):
        flow.subscriber_chunks.lock(instance)


def test_instance_keys_must_be_str(flow: ChunkedSubscriberFlow) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        flow.subscriber_chunks.load(1)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", " ", "a/b"])
def test_bad_definition_names_are_invalid_input(name: str) -> None:
    with pytest.raises(InvalidInputError, match="Attribute name"):
        Attribute(name, int)
    with pytest.raises(InvalidInputError, match="AttributeMap name"):
        AttributeMap(name, int)
