"""``client.get_attribute(flow_id, attribute)``, written as Dex's own RPC tests use it
(``sdk-python/tests/integ/test_rpc_runtime.py``: ``assert await
environment.client.get_attribute(flow_id, flow.data) == expected_value`` after the RPCs ran),
on ``AsyncClient`` and ``Client``: the committed value decoded as declared, ``None`` when
unset, and typed errors for a missing flow, a wrong run or a misnamed value."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass
from typing import Callable

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    FlowNotFoundError,
    InvalidInputError,
    PersistenceSchema,
    RPCResult,
    rpc,
)


@dataclass
class Order:
    order_id: str
    quantity: int


class RpcFlow(Flow[None]):
    RPC_OUTPUT = 100
    HARDCODED_VALUE = "hardcoded-value"
    data = Attribute("rpc-data", str)
    keyword = Attribute("rpc-keyword", str)
    integer = Attribute("rpc-integer", int)
    orders = AttributeMap("rpc-orders", Order)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.data, self.keyword, self.integer, self.orders)

    @rpc
    def function_one(self, context: Context, input: str) -> RPCResult[int]:
        self.data.set(context, input)
        self.keyword.set(context, input)
        self.integer.set(context, self.RPC_OUTPUT)
        return RPCResult(self.RPC_OUTPUT)

    @rpc
    def procedure_zero(self, context: Context) -> None:
        self.data.set(context, self.HARDCODED_VALUE)
        self.keyword.set(context, self.HARDCODED_VALUE)
        self.integer.set(context, self.RPC_OUTPUT)

    @rpc
    def place_order(self, context: Context, input: Order) -> None:
        self.orders.set(context, input.order_id, input)

    @rpc
    def fail(self, context: Context, input: str) -> None:
        self.data.set(context, "never stored")
        raise ValueError(input)


async def assert_rpc_completion(
    client: AsyncClient, flow: RpcFlow, flow_id: str, expected_value: str
) -> None:
    assert await client.get_attribute(flow_id, flow.data) == expected_value
    assert await client.get_attribute(flow_id, flow.keyword) == expected_value
    assert await client.get_attribute(flow_id, flow.integer) == RpcFlow.RPC_OUTPUT


@pytest.mark.parametrize(
    ("method_name", "argument", "expected_value"),
    [
        ("function_one", "rpc-input", "rpc-input"),
        ("procedure_zero", None, RpcFlow.HARDCODED_VALUE),
    ],
)
def test_rpc_writes_read_back_through_the_async_client(
    store_url: str, method_name: str, argument: str | None, expected_value: str
) -> None:
    async def scenario() -> None:
        flow = RpcFlow()
        async with AsyncClient(store_url) as client:
            flow_id = f"rpc-{method_name}"
            await client.start_flow(flow, flow_id, None)
            assert await client.get_attribute(flow_id, flow.data) is None
            method = getattr(flow, method_name)
            if argument is None:
                await client.invoke_rpc(method, flow_id)
            else:
                await client.invoke_rpc(method, flow_id, argument)
            await assert_rpc_completion(client, flow, flow_id, expected_value)

    asyncio.run(scenario())


def test_a_map_instance_decodes_into_its_dataclass(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "orders", None)
        client.invoke_rpc(flow.place_order, "orders", Order("o-1", 3))
        assert client.get_attribute("orders", flow.orders, "o-1") == Order("o-1", 3)
        assert client.get_attribute("orders", flow.orders, "o-2") is None
        run_id = client.start_flow(flow, "other", None)
        assert client.get_attribute("other", flow.orders, "o-1") is None
        assert client.get_attribute("other", flow.integer, run_id=run_id) is None


def test_a_failed_rpc_leaves_nothing_to_read(client: Client) -> None:
    flow = RpcFlow()
    client.start_flow(flow, "failing", None)
    client.invoke_rpc(flow.function_one, "failing", "kept")
    with pytest.raises(Exception, match="discarded"):
        client.invoke_rpc(flow.fail, "failing", "discarded")
    assert client.get_attribute("failing", flow.data) == "kept"


def test_errors_name_what_was_wrong(client: Client) -> None:
    flow = RpcFlow()
    client.start_flow(flow, "checked", None)
    with pytest.raises(FlowNotFoundError) as missing:
        client.get_attribute("never-started", flow.data)
    assert missing.value.operation == "get_attribute"
    assert missing.value.flow_id == "never-started"
    with pytest.raises(InvalidInputError, match='has no run "run-0"'):
        client.get_attribute("checked", flow.data, run_id="run-0")
    with pytest.raises(TypeError, match="takes \\(flow_id, attribute_map, instance\\)"):
        client.get_attribute("checked", flow.orders)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="only an AttributeMap takes an instance"):
        client.get_attribute("checked", flow.data, "x")  # type: ignore[call-overload]
    with pytest.raises(InvalidInputError, match="must not contain '/'"):
        client.get_attribute("checked", flow.orders, "a/b")
    with pytest.raises(InvalidInputError, match='declares no Attribute or AttributeMap "other"'):
        client.get_attribute("checked", Attribute("other", str))
    with pytest.raises(TypeError, match="not str"):
        client.get_attribute("checked", "rpc-data")  # type: ignore[call-overload]


def test_another_process_reads_a_flow_it_never_used(
    store_url: str, run_python: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    flow = RpcFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "shared", None)
        client.invoke_rpc(flow.place_order, "shared", Order("o-9", 9))
    script = """
import sys
from dataclasses import dataclass
from attrflow import AttributeMap, Client

@dataclass
class Order:
    order_id: str
    quantity: int

with Client(sys.argv[1]) as client:
    print(client.get_attribute("shared", AttributeMap("rpc-orders", Order), "o-9"))
"""
    done = run_python(script, store_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Order(order_id='o-9', quantity=9)"
