"""Text Python can hold but UTF-8 cannot (a lone surrogate such as ``'a\\ud800'``) is
refused with ``InvalidInputError`` naming the text and where it is, never a bare
``UnicodeEncodeError``, wherever it is passed: an ID, a token, a key or a record field."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, RPCInvokeOptions
from attrflow.flows.app_log import AppendLogRecordInput, ChunkedLogFlow, GetLogPageInput
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)

BAD = "a\ud800"


def test_a_lone_surrogate_in_a_flow_id_is_invalid_input(client: Client) -> None:
    with pytest.raises(InvalidInputError, match="lone surrogate at index 1") as raised:
        client.start_flow(ChunkedSubscriberFlow(), BAD)
    assert "while processing 'flow_id'" in (raised.value.__notes__ or [])


def test_a_lone_surrogate_in_a_record_field_names_the_field(client: Client) -> None:
    flow = ChunkedLogFlow()
    client.start_flow(flow, "app")
    with pytest.raises(InvalidInputError, match=r"lone surrogate .* at \$\.record\.name"):
        client.invoke_rpc(
            flow.append_log_record,
            "app",
            AppendLogRecordInput("chat", {"name": BAD}),
            options=flow.append_options("chat"),
        )
    with pytest.raises(InvalidInputError, match=r"at a key in \$\.record"):
        client.invoke_rpc(
            flow.append_log_record,
            "app",
            AppendLogRecordInput("chat", {BAD: 1}),
            options=flow.append_options("chat"),
        )


def test_a_lone_surrogate_in_a_token_or_key_is_invalid_input(client: Client) -> None:
    flow = ChunkedLogFlow()
    client.start_flow(flow, "app")
    with pytest.raises(InvalidInputError, match="lone surrogate"):
        client.invoke_rpc(
            flow.get_log_page,
            "app",
            GetLogPageInput("chat", BAD),
            options=flow.page_options("chat", BAD),
        )
    with pytest.raises(InvalidInputError, match="lone surrogate"):
        client.invoke_rpc(
            flow.append_log_record,
            "app",
            AppendLogRecordInput("chat", 1),
            options=RPCInvokeOptions(lock_attribute_map_instances=(flow.log_states.lock(BAD),)),
        )


def test_a_lone_surrogate_in_a_subscriber_id_is_invalid_input(archive: Archive) -> None:
    with pytest.raises(InvalidInputError, match=r"at \$\.subscriberId"):
        archive.client.invoke_rpc(
            archive.flow.register_subscriber,
            FLOW_ID,
            RegisterSubscriberInput(BAD, "a@example.com"),
        )
