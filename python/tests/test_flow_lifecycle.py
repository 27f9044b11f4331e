"""Starting flows: run IDs, starting twice, idempotent starts, unknown flows and types."""

from __future__ import annotations

import uuid

import pytest
from archive_support import Archive

from attrflow import (
    Client,
    Flow,
    FlowAlreadyStartedError,
    FlowNotFoundError,
    InvalidInputError,
    RPCInvokeOptions,
    StartFlowOptions,
)
from attrflow.flow import core_rpc
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
)


def test_start_returns_a_run_id(client: Client, flow: ChunkedSubscriberFlow) -> None:
    run_id = client.start_flow(flow, FLOW_ID)
    assert uuid.UUID(run_id)


def test_starting_twice_fails_without_ignore(client: Client, flow: ChunkedSubscriberFlow) -> None:
    run_id = client.start_flow(flow, FLOW_ID)
    with pytest.raises(FlowAlreadyStartedError) as raised:
        client.start_flow(flow, FLOW_ID)
    assert raised.value.flow_id == FLOW_ID
    assert raised.value.run_id == run_id
    assert str(raised.value) == f'flow "{FLOW_ID}" is already started (run ID {run_id})'


def test_ignore_already_started_returns_the_same_run(
    client: Client, flow: ChunkedSubscriberFlow
) -> None:
    ignore = StartFlowOptions(ignore_already_started=True)
    first = client.start_flow(flow, FLOW_ID, options=ignore)
    assert client.start_flow(flow, FLOW_ID, options=ignore) == first
    assert client.start_flow(flow, FLOW_ID, None, ignore) == first


def test_a_second_start_keeps_the_data(archive: Archive) -> None:
    archive.register(1)
    archive.client.start_flow(
        archive.flow, FLOW_ID, options=StartFlowOptions(ignore_already_started=True)
    )
    assert [s.sequence for s in archive.page("current").subscribers] == [1]


def test_an_unknown_flow_is_not_found(client: Client, flow: ChunkedSubscriberFlow) -> None:
    with pytest.raises(FlowNotFoundError) as raised:
        client.invoke_rpc(
            flow.register_subscriber, "nobody-started-me", RegisterSubscriberInput("a", "b")
        )
    assert str(raised.value) == 'flow "nobody-started-me" not found'
    assert raised.value.flow_id == "nobody-started-me"
    assert isinstance(raised.value, LookupError)


def test_start_input_must_be_none(client: Client, flow: ChunkedSubscriberFlow) -> None:
    with pytest.raises(ValueError, match=r"^Flow without a start Step requires None input$"):
        client.start_flow(flow, FLOW_ID, "input")  # type: ignore[arg-type]
    with pytest.raises(FlowNotFoundError):
        client.invoke_rpc(flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("a", "b"))


def test_a_core_flow_type_the_core_lacks_is_invalid_input(client: Client) -> None:
    class NotInTheCore(Flow[None]):
        echo = core_rpc("Echo", str, str)

    with pytest.raises(InvalidInputError, match='flow type "NotInTheCore" is not built in'):
        client.start_flow(NotInTheCore(), "some-flow")


def test_run_id_names_the_current_run(client: Client, flow: ChunkedSubscriberFlow) -> None:
    run_id = client.start_flow(flow, FLOW_ID)
    token = GetSubscriberPageInput("current")
    load = RPCInvokeOptions(load_attribute_map_instances=(flow.subscriber_chunks.load("current"),))
    page = client.invoke_rpc(flow.get_subscriber_page, FLOW_ID, token, run_id=run_id, options=load)
    assert page.subscribers == []
    with pytest.raises(InvalidInputError, match="has no run"):
        client.invoke_rpc(
            flow.get_subscriber_page, FLOW_ID, token, run_id="other-run", options=load
        )
    with pytest.raises(FlowNotFoundError):
        client.invoke_rpc(flow.get_subscriber_page, "missing", token, run_id=run_id, options=load)
