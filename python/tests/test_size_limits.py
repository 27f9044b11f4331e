"""Input over the core's byte limits raises InvalidInputError naming the limit and the size,
and nothing is stored."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)

MAX_RECORD_FIELD_BYTES = 4096
MAX_FLOW_ID_BYTES = 256


@pytest.mark.parametrize(
    ("subscriber", "message"),
    [
        (
            RegisterSubscriberInput("s" * (MAX_RECORD_FIELD_BYTES + 1), "a@example.com"),
            'record field "subscriberId" is 4097 bytes; the limit is 4096 bytes',
        ),
        (
            RegisterSubscriberInput("s-1", "é" * (MAX_RECORD_FIELD_BYTES // 2 + 1)),
            'record field "deliveryAddress" is 4098 bytes; the limit is 4096 bytes',
        ),
    ],
)
def test_a_record_field_over_its_limit_is_invalid_input_and_stores_nothing(
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


def test_a_field_at_its_limit_is_stored(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    subscriber_id = "s" * MAX_RECORD_FIELD_BYTES
    stored = client.invoke_rpc(
        flow.register_subscriber, FLOW_ID, RegisterSubscriberInput(subscriber_id, "a@example.com")
    )
    assert stored.subscriber_id == subscriber_id


def test_a_flow_id_over_its_limit_is_invalid_input(
    client: Client, flow: ChunkedSubscriberFlow
) -> None:
    flow_id = "f" * (MAX_FLOW_ID_BYTES + 1)
    with pytest.raises(InvalidInputError, match="257 bytes long; the limit is 256"):
        client.start_flow(flow, flow_id, None, StartFlowOptions(ignore_already_started=True))
