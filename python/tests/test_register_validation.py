"""RegisterSubscriber rejects empty fields and fields over their byte limit with the core's
message and writes nothing."""

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
            RegisterSubscriberInput("s" * 4097, "a@example.com"),
            'record field "subscriberId" is 4097 bytes; the limit is 4096 bytes',
        ),
        (
            RegisterSubscriberInput("s-1", "é" * 2049),
            'record field "deliveryAddress" is 4098 bytes; the limit is 4096 bytes',
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
