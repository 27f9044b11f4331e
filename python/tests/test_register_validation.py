"""RegisterSubscriber rejects empty fields and a record over its log's byte limit with the
core's message and writes nothing."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)


@pytest.mark.parametrize(
    ("subscriber", "message"),
    [
        (RegisterSubscriberInput("", "a@example.com"), "subscriberId is required"),
        (RegisterSubscriberInput("a", ""), "deliveryAddress is required"),
        (RegisterSubscriberInput("", ""), "subscriberId is required"),
        (
            RegisterSubscriberInput("s" * 10_500, "a@example.com"),
            "record is 10566 bytes as JSON; the limit of a log with chunks of 100 records is "
            "10474 bytes (a smaller chunk size allows larger records: 99 or less for this one)",
        ),
        (
            RegisterSubscriberInput("s-1", "é" * 5250),
            "record is 10556 bytes as JSON; the limit of a log with chunks of 100 records is "
            "10474 bytes (a smaller chunk size allows larger records: 99 or less for this one)",
        ),
    ],
)
def test_an_empty_field_is_required(
    archive: Archive,
    client: Client,
    flow: ChunkedSubscriberFlow,
    subscriber: RegisterSubscriberInput,
    message: str,
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        client.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber)
    assert str(raised.value) == message
    assert archive.page("current").subscribers == []
    assert archive.register(1).sequence == 1


def test_an_input_of_the_wrong_shape_is_rejected_by_the_core(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    with pytest.raises(InvalidInputError, match="invalid input for RPC RegisterSubscriber"):
        client.invoke_rpc(flow.register_subscriber, FLOW_ID)
