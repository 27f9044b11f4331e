"""Flow IDs are checked by the core: empty ones and reserved characters are invalid input."""

from __future__ import annotations

import pytest

from attrflow import Client, InvalidInputError, _native
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow, RegisterSubscriberInput

BAD_FLOW_IDS = ["a/b", "a:b", "a$b", "", "a\nb"]


@pytest.mark.parametrize("flow_id", BAD_FLOW_IDS)
def test_start_rejects_a_bad_flow_id(
    client: Client, flow: ChunkedSubscriberFlow, flow_id: str
) -> None:
    with pytest.raises(InvalidInputError, match="flow ID"):
        client.start_flow(flow, flow_id)


@pytest.mark.parametrize("flow_id", BAD_FLOW_IDS)
def test_invoke_rejects_a_bad_flow_id(
    client: Client, flow: ChunkedSubscriberFlow, flow_id: str
) -> None:
    with pytest.raises(InvalidInputError, match="flow ID"):
        client.invoke_rpc(flow.register_subscriber, flow_id, RegisterSubscriberInput("a", "b"))


def test_the_messages_name_the_problem() -> None:
    with pytest.raises(InvalidInputError, match=r"^flow ID must not be empty$"):
        _native.validate_flow_id("")
    with pytest.raises(
        InvalidInputError, match=r"""^flow ID "a:b" contains reserved character ':'$"""
    ):
        _native.validate_flow_id("a:b")
    _native.validate_flow_id("chunked-subscriber-archive")  # accepted: no error


def test_a_flow_id_must_be_a_str(client: Client, flow: ChunkedSubscriberFlow) -> None:
    with pytest.raises(TypeError, match="flow_id must be a str"):
        client.start_flow(flow, 7)  # type: ignore[arg-type]
