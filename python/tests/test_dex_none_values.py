"""``None`` for a typed value, as Dex's Python SDK maps it (JSON ``null`` whatever the declared
type), in the idiom of Dex's own RPC test flow (``sdk-python/tests/integ/rpc_flow.py`` and
``test_rpc_runtime.py``): ``self.data.set(context, None)``, ``invoke_rpc(flow.set_data,
flow_id, cast(str, None))``, ``RPCResult(self.data.get(context))`` of an unset ``str``
Attribute. Before, such an output failed the caller's decoding *after* the RPC's writes had
committed, so a caller retrying what it was told had failed applied it twice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    ValueMappingError,
    codec,
    rpc,
)


class RpcFlow(Flow[None]):
    RPC_OUTPUT = 100
    data = Attribute("rpc-data", str)
    count = Attribute("rpc-count", int)
    items = AttributeMap("rpc-items", str)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.data, self.count, self.items)

    @rpc
    def function_one(self, context: Context, input: str) -> RPCResult[int]:
        self.data.set(context, None)  # type: ignore[arg-type]
        self.data.set(context, input)
        return RPCResult(self.RPC_OUTPUT)

    @rpc
    def set_data(self, context: Context, input: str) -> None:
        self.data.set(context, input)

    @rpc
    def get_data(self, context: Context) -> RPCResult[str]:
        return RPCResult(self.data.get(context))

    @rpc(lock_attributes=(count.lock(),))
    def count_and_get_data(self, context: Context) -> RPCResult[str]:
        self.count.set(context, self.count.get(context) + 1)
        return RPCResult(self.data.get(context))

    @rpc
    def get_count(self, context: Context) -> RPCResult[int]:
        return RPCResult(self.count.get(context))

    @rpc(load_attribute_map_instances=(items.load("order-1"),))
    def clear_item(self, context: Context) -> RPCResult[bool]:
        self.items.set(context, "order-1", None)  # type: ignore[arg-type]
        return RPCResult(self._has_item(context))

    @rpc(load_attribute_map_instances=(items.load("order-1"),))
    def has_item(self, context: Context) -> RPCResult[bool]:
        return RPCResult(self._has_item(context))

    def _has_item(self, context: Context) -> bool:
        try:
            self.items.get(context, "order-1")
        except KeyError:
            return False
        return True


@pytest.fixture
def started(store_url: str) -> Iterator[tuple[Client, RpcFlow]]:
    flow = RpcFlow()
    with Client(store=store_url) as client:
        client.start_flow(flow, "rpc-flow", None)
        yield client, flow


def test_an_unset_str_attribute_returned_from_an_rpc_is_none(
    started: tuple[Client, RpcFlow],
) -> None:
    client, flow = started
    assert client.invoke_rpc(flow.get_data, "rpc-flow") is None


def test_an_rpc_returning_none_commits_and_its_caller_gets_none_once(
    started: tuple[Client, RpcFlow],
) -> None:
    client, flow = started
    assert client.invoke_rpc(flow.count_and_get_data, "rpc-flow") is None
    assert client.invoke_rpc(flow.get_count, "rpc-flow") == 1, "applied once, answered as applied"


def test_none_input_stores_null_which_reads_as_unset(started: tuple[Client, RpcFlow]) -> None:
    client, flow = started
    client.invoke_rpc(flow.set_data, "rpc-flow", "before")
    assert client.invoke_rpc(flow.get_data, "rpc-flow") == "before"
    client.invoke_rpc(flow.set_data, "rpc-flow", cast(str, None))
    assert client.invoke_rpc(flow.get_data, "rpc-flow") is None


def test_setting_none_then_a_value_in_one_rpc_keeps_the_value(
    started: tuple[Client, RpcFlow],
) -> None:
    client, flow = started
    assert client.invoke_rpc(flow.function_one, "rpc-flow", "kept") == RpcFlow.RPC_OUTPUT
    assert client.invoke_rpc(flow.get_data, "rpc-flow") == "kept"


def test_a_map_instance_set_to_none_is_deleted(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store=store_url) as client:
        options = StartFlowOptions().with_attribute(flow.items, "order-1", "stored")
        client.start_flow(flow, "rpc-flow", None, options)
        assert client.invoke_rpc(flow.has_item, "rpc-flow") is True
        assert client.invoke_rpc(flow.clear_item, "rpc-flow") is False, "a staged delete"
        assert client.invoke_rpc(flow.has_item, "rpc-flow") is False


def test_a_none_initial_value_starts_the_attribute_unset(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store=store_url) as client:
        options = StartFlowOptions().with_attribute(flow.data, cast(str, None))
        client.start_flow(flow, "rpc-flow", None, options)
        assert client.invoke_rpc(flow.get_data, "rpc-flow") is None


@dataclass
class Note:
    label: str


def test_only_the_whole_value_may_be_none_its_fields_stay_strict() -> None:
    assert codec.to_json(None, Note) == "null"
    assert codec.from_json("null", Note) is None
    with pytest.raises(ValueMappingError, match="label: expected str, got null"):
        codec.from_json('{"label": null}', Note)
    with pytest.raises(ValueMappingError, match="expected str, got int"):
        codec.from_json("5", str)
