"""RPC handles: read from a flow instance they know the flow type, the core RPC name and
the input and output types, as a bound ``@rpc`` method does in the Dex SDK."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from attrflow import Client, Flow
from attrflow.flow import BoundRpc, RpcDefinition, RpcDescriptor, core_rpc
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    Subscriber,
    SubscriberPage,
)


def test_handles_carry_the_core_rpc_names_and_types(flow: ChunkedSubscriberFlow) -> None:
    register = flow.register_subscriber
    assert isinstance(register, BoundRpc)
    assert register.__self__ is flow
    assert register.__name__ == "register_subscriber"
    assert register.definition == RpcDefinition(
        "RegisterSubscriber", RegisterSubscriberInput, Subscriber
    )
    assert flow.get_subscriber_page.definition == RpcDefinition(
        "GetSubscriberPage", GetSubscriberPageInput, SubscriberPage
    )
    assert flow.register_subscriber == flow.register_subscriber
    assert flow.register_subscriber != ChunkedSubscriberFlow().register_subscriber


def test_the_class_lists_its_rpcs() -> None:
    assert isinstance(ChunkedSubscriberFlow.register_subscriber, RpcDescriptor)
    assert sorted(ChunkedSubscriberFlow.rpc_definitions()) == [
        "ChangeSubscriberChunkSize",
        "GetSubscriberPage",
        "RegisterSubscriber",
        "RegisterSubscriberOnce",
        "RegisterSubscribers",
        "SetSubscriberIdempotencyWindow",
    ]


def test_core_rpcs_are_not_called_directly(flow: ChunkedSubscriberFlow) -> None:
    with pytest.raises(TypeError, match=r"client\.invoke_rpc"):
        flow.register_subscriber(RegisterSubscriberInput("a", "b"))


def test_invoke_rpc_takes_only_handles_of_flow_instances(client: Client) -> None:
    with pytest.raises(TypeError, match="RPC of a flow instance"):
        client.invoke_rpc(ChunkedSubscriberFlow.register_subscriber, FLOW_ID)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RPC of a flow instance"):
        client.invoke_rpc(print, FLOW_ID)  # type: ignore[arg-type]


def test_flow_types_default_to_the_class_name() -> None:
    class Plain(Flow):
        pass

    class Named(Flow, flow_type="OtherName"):
        pass

    class Declared(Flow):
        flow_type = "DeclaredName"

    assert Plain.flow_type == "Plain"
    assert Named().flow_type == "OtherName"
    assert Declared.flow_type == "DeclaredName"
    assert ChunkedSubscriberFlow.flow_type == "ChunkedSubscriberFlow"


@dataclass
class Ping:
    text: str


def test_a_flow_type_the_core_does_not_know_is_refused(client: Client) -> None:
    class Echo(Flow):
        echo = core_rpc("Echo", Ping, Ping)

    from attrflow import InvalidInputError

    with pytest.raises(InvalidInputError, match='flow type "Echo" is not built in'):
        client.invoke_rpc(Echo().echo, "echo-flow", Ping("hi"))
