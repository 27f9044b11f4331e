"""The core rejects a bad Python flow definition when it is registered, with a typed error
naming what is wrong; names with ``/`` are rejected as soon as they are declared."""

from __future__ import annotations

import re

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    FlowDefinitionError,
    InvalidInputError,
    PersistenceSchema,
    RPCResult,
    StepList,
    rpc,
)
from attrflow.flows import chunked_subscriber as builtin

state = Attribute("state", int)
chunks = AttributeMap("chunks", str)
undeclared = Attribute("undeclared", int)
undeclared_map = AttributeMap("undeclared_map", str)


def flow_locking(*locks: object, loads: tuple[object, ...] = ()) -> Flow:
    class Locking(Flow):
        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(state, chunks)

        @rpc(name="R", lock_attributes=locks, load_attribute_map_instances=loads)  # type: ignore[arg-type]
        def r(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

    return Locking()


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        (flow_locking(undeclared.lock()), 'declares no Attribute or AttributeMap "undeclared"'),
        (
            flow_locking(loads=(undeclared_map.load("a"),)),
            'declares no Attribute or AttributeMap "undeclared_map"',
        ),
        (flow_locking(chunks), 'lock on AttributeMap "chunks" needs an instance'),
        (
            flow_locking(state.lock(), state.lock()),
            'RPC "R" of flow type "Locking" declares the lock "state" twice',
        ),
    ],
)
def test_bad_locks_and_loads_are_rejected_at_registration(client: Client, flow: Flow, message: str):
    with pytest.raises(FlowDefinitionError, match=message):
        client.register_flow(flow)


def test_duplicate_names_are_rejected(client: Client):
    class TwiceDeclared(Flow):
        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(state, Attribute("state", str))

        @rpc(name="R")
        def r(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

    with pytest.raises(FlowDefinitionError, match='declares "state" twice'):
        client.register_flow(TwiceDeclared())

    class TwoRpcsOneName(Flow):
        @rpc(name="R")
        def first(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

        @rpc(name="R")
        def second(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

    with pytest.raises(FlowDefinitionError, match='declares RPC "R" twice'):
        client.register_flow(TwoRpcsOneName())


def test_a_flow_type_of_ones_own_takes_a_builtin_flow_types_name(client: Client):
    class ChunkedSubscriberFlow(Flow[None]):
        @rpc(name="R")
        def r(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

    client.register_flow(ChunkedSubscriberFlow())
    # In this client the name is now taken: the built-in wrapper of that name is refused.
    with pytest.raises(FlowDefinitionError, match="already registered by"):
        client.register_flow(builtin.ChunkedSubscriberFlow())


def test_slashes_are_rejected_where_names_are_declared():
    with pytest.raises(FlowDefinitionError, match="must not contain '/'"):
        Attribute("a/b", int)
    with pytest.raises(FlowDefinitionError, match="must not contain '/'"):
        AttributeMap("a/b", int)
    with pytest.raises(InvalidInputError, match="must not contain '/'"):
        rpc(name="A/B")(lambda self, context: None)
    with pytest.raises(InvalidInputError, match="must not contain '/'"):
        chunks.lock("a/b")


def test_steps_and_bad_handler_signatures_are_rejected(client: Client):
    class WithSteps(Flow):
        def get_steps(self) -> StepList:
            return StepList(("step",))

        @rpc(name="R")
        def r(self, context: Context) -> RPCResult[None]:
            return RPCResult(None)

    with pytest.raises(FlowDefinitionError, match="RPC-only"):
        client.register_flow(WithSteps())
    with pytest.raises(TypeError, match=r"takes \(self, context\) or \(self, context, input\)"):
        rpc(name="R")(lambda self: None)  # type: ignore[arg-type, return-value]


def test_the_same_flow_type_registers_once(client: Client):
    class Once(Flow):
        @rpc(name="R")
        def r(self, context: Context) -> RPCResult[str]:
            return RPCResult(context.flow_id)

    client.register_flow(Once())
    client.register_flow(Once())
    flow = Once()
    client.start_flow(flow, "once")
    assert client.invoke_rpc(flow.r, "once") == "once"


def test_a_flow_type_name_that_is_not_a_str_is_refused_where_it_is_declared():
    for bad in (5, ""):
        with pytest.raises(FlowDefinitionError, match="must be a non-empty str"):

            class Named(Flow):
                flow_type = bad  # type: ignore[assignment]

    with pytest.raises(FlowDefinitionError, match="must not contain '/'"):

        class Slashed(Flow, flow_type="a/b"):
            pass


def test_types_the_codec_does_not_take_and_async_handlers_are_refused_at_registration(
    client: Client,
):
    class SetValued(Flow):
        tags = Attribute("tags", set)

        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(self.tags)

    class IntKeyed(Flow):
        @rpc(name="Count")
        def count(self, context: Context, by_id: dict[int, str]) -> RPCResult[int]:
            return RPCResult(len(by_id))

    class Asynchronous(Flow):
        @rpc(name="Wait")  # type: ignore[arg-type]
        async def wait(self, context: Context) -> RPCResult[int]:
            return RPCResult(1)

    cases: list[tuple[Flow, str]] = [
        (SetValued(), "flow type 'SetValued': Attribute 'tags': type set is not supported"),
        (IntKeyed(), "the input of RPC Count: type dict[int, str] is not supported"),
        (Asynchronous(), "RPC Wait of flow type 'Asynchronous' is declared async"),
    ]
    for flow, message in cases:
        with pytest.raises(FlowDefinitionError, match=re.escape(message)):
            client.register_flow(flow)
