"""Whole-map loads, ``@rpc(load_attribute_maps=(attribute_map,))``, in the idiom of Dex's
``test_registry_validates_and_sorts_rpc_state_loads`` (``sdk-python/tests/test_contracts.py``),
which declares ``LoadedFlow(Flow[None])`` with a map loaded whole and one of its instances
loaded by name beside it (its Channel loads left out: attrflow has no Channels). Dex's test
checks the registered selectors (``("items/", "items/tenant-a")``); these run the RPC and
check what its handler sees: every instance of the map, readable and counted by
``get_all_instance_keys`` and ``get_map_size``."""

from __future__ import annotations

import threading

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    FlowDefinitionError,
    PersistenceSchema,
    RpcLockConflictError,
    RPCResult,
    StartFlowOptions,
    rpc,
)

attributes = AttributeMap("items", str)
archived = AttributeMap("items-archive", str)
tenants = Attribute("tenants", int)


class LoadedFlow(Flow[None]):
    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(attributes, archived, tenants)

    @rpc(
        load_attribute_maps=(attributes,),
        load_attribute_map_instances=(attributes.load("tenant-a"),),
    )
    def snapshot(self, context: Context) -> RPCResult[dict[str, str]]:
        return RPCResult(
            {key: attributes.get(context, key) for key in attributes.get_all_instance_keys(context)}
        )

    @rpc(load_attribute_maps=(attributes,))
    def count_tenants(self, context: Context) -> RPCResult[int]:
        count = attributes.get_map_size(context)
        tenants.set(context, count)
        return RPCResult(count)

    @rpc
    def add_tenant(self, context: Context, key: str) -> None:
        attributes.set(context, key, f"tenant {key}")


def start(client: Client, flow: LoadedFlow, flow_id: str) -> None:
    options = (
        StartFlowOptions()
        .with_attribute(attributes, "tenant-b", "B")
        .with_attribute(attributes, "tenant-a", "A")
        .with_attribute(archived, "tenant-z", "archived")
        .with_attribute(tenants, 0)
    )
    client.start_flow(flow, flow_id, None, options)


def test_a_map_loaded_whole_is_read_whole(client: Client) -> None:
    flow = LoadedFlow()
    start(client, flow, "loaded")
    assert client.invoke_rpc(flow.snapshot, "loaded") == {"tenant-a": "A", "tenant-b": "B"}
    client.invoke_rpc(flow.add_tenant, "loaded", "tenant-c")
    assert client.invoke_rpc(flow.count_tenants, "loaded") == 3
    assert client.get_attribute("loaded", tenants) == 3


def test_a_lock_free_writer_whose_map_changed_under_it_writes_nothing(client: Client) -> None:
    """``count_tenants`` takes no locks: a tenant added between its read and its commit
    fails it with ``RpcLockConflictError`` (Dex's retryable error) instead of storing a
    count that is already wrong."""
    raced = threading.Event()

    class RacedFlow(LoadedFlow):
        @rpc(load_attribute_maps=(attributes,))
        def count_tenants(self, context: Context) -> RPCResult[int]:
            count = attributes.get_map_size(context)
            if not raced.is_set():
                raced.set()
                adding = threading.Thread(
                    target=client.invoke_rpc, args=(flow.add_tenant, "raced", "late")
                )
                adding.start()
                adding.join()
            tenants.set(context, count)
            return RPCResult(count)

    flow = RacedFlow()
    start(client, flow, "raced")
    with pytest.raises(RpcLockConflictError, match="items/late"):
        client.invoke_rpc(flow.count_tenants, "raced")
    assert client.get_attribute("raced", tenants) == 0
    assert client.invoke_rpc(flow.count_tenants, "raced") == 3


def test_only_declared_maps_load_whole(client: Client) -> None:
    with pytest.raises(TypeError, match="load_attribute_maps takes AttributeMap"):
        rpc(load_attribute_maps=(tenants,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="load_attribute_maps takes AttributeMap"):
        rpc(load_attribute_maps=(attributes.load("tenant-a"),))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="load_attribute_maps must be a tuple or list"):
        rpc(load_attribute_maps=attributes)  # type: ignore[call-overload]

    undeclared = AttributeMap("undeclared", str)

    class Undeclared(Flow[None]):
        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(attributes)

        @rpc(load_attribute_maps=(undeclared,))
        def scan(self, context: Context) -> None:
            del context

    with pytest.raises(
        FlowDefinitionError, match='declares no Attribute or AttributeMap "undeclared"'
    ):
        client.start_flow(Undeclared(), "undeclared", None)

    class Twice(Flow[None]):
        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(attributes)

        @rpc(load_attribute_maps=(attributes, attributes))
        def scan(self, context: Context) -> None:
            del context

    with pytest.raises(FlowDefinitionError, match='declares the load "items/" twice'):
        client.start_flow(Twice(), "twice", None)
