"""``client.set_attribute(flow_id, attribute, value)`` and ``client.wait_for_attribute_equal``,
written as Dex's own persistence tests use them
(``sdk-python/tests/integ/test_persistence_runtime.py``, ``test_set_indexed_attributes`` and
``test_set_data_attributes``; ``test_persistence_runtime_async.py``,
``test_async_wait_for_attribute_equal``): the flow's Attributes declared in ``__init__``, each
written and read back with ``get_attribute``, a wait submitted to a thread or a task
returning once the awaited value is written, on ``Client`` and ``AsyncClient``. attrflow's
flows are RPC-only, so where Dex's flow waits on a Channel and completes a Step, here an RPC
or ``get_attribute`` reads what was written. Dex's flow also declares search indexes, which
attrflow has not (its Attributes take ``index=None``).

Beyond Dex's tests: a written value is what the flow's RPCs read, ``None`` deletes it, a
value of the wrong type raises ``ValueMappingError``, the built-in flow types are written only
by their RPCs, a stopped flow raises ``FlowNotActiveError``, and a wait compares numbers by
value and names what it waited for when its time runs out."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    AttributeMap,
    Client,
    Context,
    ErrorSubStatus,
    Flow,
    FlowNotActiveError,
    FlowNotFoundError,
    FlowStoppedError,
    InvalidInputError,
    LongPollTimeoutError,
    PersistenceSchema,
    RPCResult,
    ValueMappingError,
    rpc,
)
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)

WAIT_TIMEOUT = timedelta(seconds=30)


def unique_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


@dataclass
class ModelInput:
    value: int = 0


class SetAttributesFlow(Flow[None]):
    def __init__(self) -> None:
        self.data = Attribute("data", str)
        self.data_map = AttributeMap("data-map", str)
        self.model = Attribute("data-model", ModelInput)
        self.keyword = Attribute("CustomKeywordField", str)
        self.text = Attribute("CustomTextField", str)
        self.decimal = Attribute("CustomDoubleField", float)
        self.integer = Attribute("CustomIntField", int)
        self.bool = Attribute("CustomBoolField", bool)
        self.keywords = Attribute[tuple[str, ...]]("CustomKeywordArrayField", tuple[str, ...])
        self.datetime = Attribute("CustomDatetimeField", datetime)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(
            self.data,
            self.data_map,
            self.model,
            self.keyword,
            self.text,
            self.decimal,
            self.integer,
            self.bool,
            self.keywords,
            self.datetime,
        )

    @rpc
    def read_data(self, context: Context) -> RPCResult[str]:
        return RPCResult(self.data.get(context))

    @rpc
    def read_model(self, context: Context) -> RPCResult[ModelInput]:
        return RPCResult(self.model.get(context))


def test_set_indexed_attributes(client: Client) -> None:
    flow = SetAttributesFlow()
    keywords = ("keyword-1", "keyword-2")
    timestamp = datetime(
        2024,
        11,
        13,
        0,
        0,
        1,
        731455,
        tzinfo=timezone.utc,
    )
    flow_id = unique_id("set-indexed-attributes")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.keyword, "keyword-1")
    client.set_attribute(flow_id, flow.text, "text-1")
    client.set_attribute(flow_id, flow.decimal, 1.0)
    client.set_attribute(flow_id, flow.integer, 1)
    client.set_attribute(flow_id, flow.bool, True)
    client.set_attribute(flow_id, flow.keywords, keywords)
    client.set_attribute(flow_id, flow.datetime, timestamp)
    assert client.get_attribute(flow_id, flow.keyword) == "keyword-1"
    assert client.get_attribute(flow_id, flow.text) == "text-1"
    assert client.get_attribute(flow_id, flow.decimal) == 1.0
    assert client.get_attribute(flow_id, flow.integer) == 1
    assert client.get_attribute(flow_id, flow.bool) is True
    assert client.get_attribute(flow_id, flow.keywords) == keywords
    assert client.get_attribute(flow_id, flow.datetime) == timestamp


def test_async_set_attribute(store_url: str) -> None:
    async def scenario() -> None:
        flow = SetAttributesFlow()
        async with AsyncClient(store_url) as client:
            flow_id = unique_id("async-set-attribute")
            await client.start_flow(flow, flow_id, None)
            await client.set_attribute(flow_id, flow.data, "ready")
            await client.set_attribute(flow_id, flow.data_map, "special key", "mapped")
            assert await client.invoke_rpc(flow.read_data, flow_id) == "ready"
            assert await client.get_attribute(flow_id, flow.data_map, "special key") == "mapped"
            # Many writes at once, of different values, all land.
            await asyncio.gather(
                *(
                    client.set_attribute(flow_id, flow.data_map, f"key-{n}", f"value-{n}")
                    for n in range(20)
                )
            )
            for n in range(20):
                assert await client.get_attribute(flow_id, flow.data_map, f"key-{n}") == (
                    f"value-{n}"
                )
            await client.stop_flow(flow_id)
            with pytest.raises(FlowNotActiveError):
                await client.set_attribute(flow_id, flow.data, "closed")

    asyncio.run(scenario())


def test_a_stopped_flow_is_not_written(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("persistence")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.data, "input")
    client.stop_flow(flow_id)
    with pytest.raises(FlowNotActiveError):
        client.set_attribute(flow_id, flow.data, "closed")
    assert client.get_attribute(flow_id, flow.data) == "input"


def test_none_deletes_the_value(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("deleted")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.integer, 5)
    client.set_attribute(flow_id, flow.data_map, "one", "x")
    client.set_attribute(flow_id, flow.integer, None)
    client.set_attribute(flow_id, flow.data_map, "one", None)
    assert client.get_attribute(flow_id, flow.integer) is None
    assert client.get_attribute(flow_id, flow.data_map, "one") is None


def test_errors_name_what_was_wrong_and_write_nothing(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("checked")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.integer, 1)
    with pytest.raises(ValueMappingError, match="Attribute CustomIntField"):
        client.set_attribute(flow_id, flow.integer, "one")  # type: ignore[misc]
    with pytest.raises(ValueMappingError, match="ModelInput"):
        client.set_attribute(flow_id, flow.model, {"value": 1})  # type: ignore[misc]
    with pytest.raises(TypeError, match="\\(flow_id, attribute_map, instance, value\\)"):
        client.set_attribute(flow_id, flow.data_map, "only-a-value")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="only an AttributeMap takes an instance"):
        client.set_attribute(flow_id, flow.data, "one", "value")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="not str"):
        client.set_attribute(flow_id, "data", "value")  # type: ignore[call-overload]
    with pytest.raises(InvalidInputError, match='declares no Attribute or AttributeMap "other"'):
        client.set_attribute(flow_id, Attribute("other", str), "value")
    with pytest.raises(InvalidInputError, match='has no run "run-0"'):
        client.set_attribute(flow_id, flow.integer, 2, run_id="run-0")
    with pytest.raises(FlowNotFoundError) as missing:
        client.set_attribute("never-started", flow.integer, 2)
    assert missing.value.operation == "set_attribute"
    assert client.get_attribute(flow_id, flow.integer) == 1


def test_a_built_in_flow_is_written_only_by_its_rpcs(client: Client) -> None:
    flow = ChunkedSubscriberFlow()
    client.start_flow(flow, FLOW_ID)
    client.invoke_rpc(
        flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s-1", "s-1@example.com")
    )
    with pytest.raises(InvalidInputError, match="keeps its values whole through its own RPCs"):
        client.set_attribute(FLOW_ID, flow.subscriber_chunks, "current", None)
    with pytest.raises(InvalidInputError, match="keeps its values whole through its own RPCs"):
        client.set_attribute(FLOW_ID, flow.archive_state, None)
    # The archive goes on as its RPCs left it.
    second = client.invoke_rpc(
        flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s-2", "s-2@example.com")
    )
    assert second.sequence == 2


def test_a_client_that_has_not_used_the_type_says_so(store_url: str) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("elsewhere")
    with Client(store_url) as starter:
        starter.start_flow(flow, flow_id, None)
    with Client(store_url) as other:
        with pytest.raises(InvalidInputError, match="which is not registered here"):
            other.set_attribute(flow_id, flow.data, "x")
        other.register_flow(SetAttributesFlow())
        other.set_attribute(flow_id, flow.data, "x")
        assert other.get_attribute(flow_id, flow.data) == "x"


def test_set_data_attributes(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("set-data-attributes")
    client.start_flow(flow, flow_id, None)
    with pytest.raises(LongPollTimeoutError):
        client.wait_for_attribute_equal(flow_id, flow.data, "never", timedelta(seconds=1))
    with ThreadPoolExecutor(max_workers=1) as executor:
        waiting = executor.submit(
            client.wait_for_attribute_equal,
            flow_id,
            flow.data,
            "query-start",
            WAIT_TIMEOUT,
        )
        client.set_attribute(flow_id, flow.data, "query-start")
        waiting.result(timeout=WAIT_TIMEOUT.total_seconds())
    with ThreadPoolExecutor(max_workers=1) as executor:
        waiting = executor.submit(
            client.wait_for_attribute_equal,
            flow_id,
            flow.data_map,
            "one",
            "mapped-value",
            WAIT_TIMEOUT,
        )
        client.set_attribute(flow_id, flow.data_map, "one", "mapped-value")
        waiting.result(timeout=WAIT_TIMEOUT.total_seconds())
    with pytest.raises(ValueError, match="only string, boolean, or number values"):
        client.wait_for_attribute_equal(flow_id, flow.model, ModelInput(value=8), WAIT_TIMEOUT)
    with pytest.raises(ValueError, match="only string, boolean, or number values"):
        client.wait_for_attribute_equal(flow_id, Attribute("bytes", bytes), b"value", WAIT_TIMEOUT)
    with pytest.raises(ValueError, match="only string, boolean, or number values"):
        client.wait_for_attribute_equal(flow_id, Attribute("null", type(None)), None, WAIT_TIMEOUT)
    client.set_attribute(flow_id, flow.model, ModelInput(value=7))
    assert client.get_attribute(flow_id, flow.data) == "query-start"
    assert client.get_attribute(flow_id, flow.data_map, "one") == ("mapped-value")
    assert client.get_attribute(flow_id, flow.model).value == 7


def test_rpcs_read_what_was_written(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("rpc-reads")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.data, "query-start")
    assert client.invoke_rpc(flow.read_data, flow_id) == "query-start"
    client.set_attribute(flow_id, flow.model, ModelInput(value=7))
    assert client.invoke_rpc(flow.read_model, flow_id) == ModelInput(value=7)


def test_async_wait_for_attribute_equal(store_url: str) -> None:
    async def scenario() -> None:
        flow = SetAttributesFlow()
        timeout = timedelta(seconds=30)
        async with AsyncClient(store_url) as client:
            flow_id = unique_id("async-wait-for-attribute")
            await client.start_flow(flow, flow_id, None)
            with pytest.raises(LongPollTimeoutError):
                await client.wait_for_attribute_equal(
                    flow_id, flow.data, "never", timedelta(seconds=1)
                )
            waiting = asyncio.create_task(
                client.wait_for_attribute_equal(flow_id, flow.data, "ready", timeout)
            )
            await client.set_attribute(flow_id, flow.data, "ready")
            await waiting
            waiting_map = asyncio.create_task(
                client.wait_for_attribute_equal(
                    flow_id, flow.data_map, "special key", "mapped", timeout
                )
            )
            await client.set_attribute(flow_id, flow.data_map, "special key", "mapped")
            await waiting_map
            with pytest.raises(ValueError, match="only string, boolean, or number values"):
                await client.wait_for_attribute_equal(
                    flow_id, flow.model, ModelInput(value=1), timeout
                )

    asyncio.run(scenario())


def test_wait_by_name_numbers_and_errors(client: Client) -> None:
    flow = SetAttributesFlow()
    flow_id = unique_id("checked")
    client.start_flow(flow, flow_id, None)
    client.set_attribute(flow_id, flow.decimal, 2.0)
    # By name, as Dex's client takes them; a float Attribute equals an int of its value.
    client.wait_for_attribute_equal(flow_id, flow.decimal, expected=2, timeout=timedelta(seconds=0))
    with pytest.raises(LongPollTimeoutError) as timed_out:
        client.wait_for_attribute_equal(flow_id, flow.decimal, 2.5, timedelta(seconds=0))
    assert timed_out.value.sub_status is ErrorSubStatus.LONG_POLL_TIMEOUT
    assert timed_out.value.operation == "wait_for_attribute_equal"
    assert "Attribute CustomDoubleField = 2.5" in str(timed_out.value)
    with pytest.raises(TypeError, match="timeout missing"):
        client.wait_for_attribute_equal(flow_id, flow.data, "x")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"timeout must be a datetime\.timedelta"):
        client.wait_for_attribute_equal(flow_id, flow.data, "x", 5)  # type: ignore[call-overload]
    with pytest.raises(InvalidInputError, match="timeout must be from 0 to 60 seconds"):
        client.wait_for_attribute_equal(flow_id, flow.data, "x", timedelta(minutes=5))
    with pytest.raises(FlowNotFoundError):
        client.wait_for_attribute_equal("never-started", flow.data, "x", WAIT_TIMEOUT)
    client.stop_flow(flow_id)
    with pytest.raises(FlowStoppedError):
        client.wait_for_attribute_equal(flow_id, flow.data, "x", WAIT_TIMEOUT)
