"""``RegisterSubscribers`` from Python: one call appends a batch across several chunk
boundaries, a batch with a bad subscriber stores nothing, and sizes are bounded."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import InvalidInputError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    MAX_BATCH_SIZE,
    NewSubscriber,
    RegisterSubscribersInput,
    Subscriber,
)


def batch(numbers: range) -> list[NewSubscriber]:
    return [
        NewSubscriber(f"subscriber-{n:03d}", f"subscriber-{n:03d}@example.com") for n in numbers
    ]


def register_batch(
    archive: Archive, subscribers: list[NewSubscriber], key: str = ""
) -> list[Subscriber]:
    output = archive.client.invoke_rpc(
        archive.flow.register_subscribers, FLOW_ID, RegisterSubscribersInput(subscribers, key)
    )
    return output.subscribers


def test_a_batch_crosses_several_chunk_boundaries(archive: Archive) -> None:
    archive.register(1)
    registered = register_batch(archive, batch(range(2, 352)))
    assert [s.sequence for s in registered] == list(range(2, 352))
    newest = archive.page("current")
    assert [s.sequence for s in newest.subscribers] == list(range(351, 300, -1))
    assert newest.next_page_token == "00000000000000000201"
    assert [s.sequence for s in archive.all_subscribers()] == list(range(351, 0, -1))


def test_a_batch_with_a_bad_subscriber_stores_nothing(archive: Archive) -> None:
    subscribers = batch(range(1, 251))
    subscribers[180].subscriber_id = ""
    with pytest.raises(InvalidInputError, match=r"^subscribers\[180\]: subscriberId is required$"):
        register_batch(archive, subscribers)
    assert archive.page("current").subscribers == []


def test_batch_sizes_are_bounded(archive: Archive) -> None:
    assert MAX_BATCH_SIZE == 1000
    with pytest.raises(
        InvalidInputError, match=f"^a batch holds at most {MAX_BATCH_SIZE} records, got 1001$"
    ):
        register_batch(archive, batch(range(1, MAX_BATCH_SIZE + 2)))
    with pytest.raises(InvalidInputError, match=r"^a batch needs at least one record$"):
        register_batch(archive, [])
    assert archive.page("current").subscribers == []
