"""``AttributeMap.get_all_instance_keys(context)`` and ``get_map_size(context)`` in an RPC
handler, in the idiom of Dex's ``test_map_introspection_tracks_buffered_changes``
(``sdk-python/tests/test_contracts.py``), which calls them on an invocation context holding
two instances, then sets one and deletes another: the keys are decoded and sorted and
include the handler's buffered changes. Dex builds that context by hand; here an RPC loads
the instances (per call, as ``RPCInvokeOptions`` loads them) and runs the same steps."""

from __future__ import annotations

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    PersistenceSchema,
    RPCInvokeOptions,
    RPCResult,
    StartFlowOptions,
    WorkerInvocationError,
    rpc,
)

attributes = AttributeMap("items", str)
owner = Attribute("owner", str)
special = "special key"


class MapFlow(Flow[None]):
    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(attributes, owner)

    @rpc
    def introspect(self, context: Context) -> RPCResult[list[str]]:
        seen = [",".join(attributes.get_all_instance_keys(context))]
        attributes.set(context, "a", "added")
        attributes.delete(context, "z")
        seen.append(",".join(attributes.get_all_instance_keys(context)))
        seen.append(str(attributes.get_map_size(context)))
        return RPCResult(seen)

    @rpc
    def size(self, context: Context) -> RPCResult[int]:
        return RPCResult(attributes.get_map_size(context))


def loading(*instances: str) -> RPCInvokeOptions:
    return RPCInvokeOptions(
        load_attribute_map_instances=tuple(attributes.load(i) for i in instances)
    )


def test_map_introspection_tracks_buffered_changes(client: Client) -> None:
    flow = MapFlow()
    options = (
        StartFlowOptions()
        .with_attribute(attributes, special, "initial")
        .with_attribute(attributes, "z", "remove")
    )
    client.start_flow(flow, "map-introspection", None, options)
    seen = client.invoke_rpc(
        flow.introspect, "map-introspection", options=loading(special, "z", "never-set")
    )
    assert seen == [f"{special},z", f"a,{special}", "2"]
    # The buffered changes were committed with the RPC.
    assert client.invoke_rpc(flow.size, "map-introspection", options=loading("a", "z")) == 1
    # An instance the call did not load is not listed.
    assert client.invoke_rpc(flow.size, "map-introspection") == 0


def test_only_a_declared_map_has_keys(client: Client) -> None:
    other = AttributeMap("other", str)

    class Undeclared(Flow[None]):
        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(attributes)

        @rpc
        def count(self, context: Context) -> RPCResult[int]:
            return RPCResult(other.get_map_size(context))

    flow = Undeclared()
    client.start_flow(flow, "undeclared", None)
    # A handler's mistake reaches the caller as Dex reports a handler's failure.
    with pytest.raises(WorkerInvocationError, match='declares no AttributeMap "other"'):
        client.invoke_rpc(flow.count, "undeclared")
