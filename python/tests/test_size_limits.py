"""Input up to the core's byte limits is stored; a flow ID over its limit raises
InvalidInputError naming the limit and the size (records over theirs:
test_register_validation.py)."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)

RECORD_LIMIT_AT_CHUNK_SIZE_100 = 10_474
MAX_FLOW_ID_BYTES = 256


def test_a_field_as_long_as_its_record_allows_is_stored(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    # No field has a limit of its own: the record's (`{"sequence":1,"subscriberId":…,
    # "deliveryAddress":"a@example.com"}`, 66 bytes besides the ID) bounds it.
    subscriber_id = "s" * (RECORD_LIMIT_AT_CHUNK_SIZE_100 - 66)
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
