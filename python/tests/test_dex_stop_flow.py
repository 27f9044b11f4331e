"""``stop_flow`` and ``describe_flow``, written as Dex's own RPC tests use them
(``sdk-python/tests/integ/test_rpc_runtime.py``: an RPC-only flow started, served, then
``await environment.client.stop_flow(flow_id)``, or ``stop_flow(flow_id,
StopFlowOptions(StopType.FAIL, reason))``), on ``AsyncClient`` and ``Client``: a stopped
flow refuses RPCs with ``FlowNotActiveError``, keeps its values, and ``describe_flow``
reports how it ended."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    Client,
    Context,
    DexServiceError,
    ErrorSubStatus,
    Flow,
    FlowAlreadyStartedError,
    FlowInfo,
    FlowNotActiveError,
    FlowNotFoundError,
    FlowStatus,
    FlowStoppedError,
    IdReusePolicy,
    PersistenceSchema,
    RpcLockConflictError,
    RPCResult,
    StartFlowOptions,
    StopFlowOptions,
    StopType,
    rpc,
)


class NoStateFlow(Flow[None]):
    counter = Attribute("counter", int)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc
    def invoke(self, context: Context, input: str) -> RPCResult[int]:
        return RPCResult(100)

    @rpc(lock_attributes=(counter.lock(),))
    def increase_counter(self, context: Context) -> None:
        self.counter.set(context, self.counter.get(context) + 1)

    @rpc
    def get_counter(self, context: Context) -> RPCResult[int]:
        return RPCResult(self.counter.get(context))


def flow_status_or_none(client: Client, flow_id: str) -> FlowStatus | None:
    try:
        return client.describe_flow(flow_id).status
    except DexServiceError as error:
        if error.sub_status is ErrorSubStatus.FLOW_NOT_EXISTS:
            return None
        raise


def test_locking_rpc_serializes_successful_updates_then_stops(store_url: str) -> None:
    async def scenario() -> None:
        flow = NoStateFlow()
        async with AsyncClient(store_url) as client:
            flow_id = "rpc-lock"
            await client.start_flow(flow, flow_id, None)

            async def increase() -> bool:
                try:
                    await client.invoke_rpc(flow.increase_counter, flow_id)
                    return True
                except RpcLockConflictError:
                    return False

            results = await asyncio.gather(*(increase() for _ in range(100)))
            succeeded = sum(results)
            assert succeeded > 0
            assert await client.invoke_rpc(flow.get_counter, flow_id) == succeeded
            await client.stop_flow(flow_id)

            info = await client.describe_flow(flow_id)
            assert info.status is FlowStatus.CANCELED
            with pytest.raises(FlowStoppedError) as refused:
                await client.invoke_rpc(flow.get_counter, flow_id)
            assert refused.value.status is FlowStatus.CANCELED
            assert refused.value.operation == "invoke_rpc"
            assert await client.get_attribute(flow_id, flow.counter) == succeeded

    asyncio.run(scenario())


def test_stop_with_options_records_how_and_why(client: Client) -> None:
    flow = NoStateFlow()
    run_id = client.start_flow(flow, "failing", None)
    before = client.describe_flow("failing")
    assert before == FlowInfo(
        "failing", run_id, "NoStateFlow", FlowStatus.RUNNING, before.started_at
    )
    assert abs(before.started_at - datetime.now(timezone.utc)) < timedelta(minutes=10)
    assert before.closed_at is None
    assert before.reason is None

    client.stop_flow("failing", StopFlowOptions(StopType.FAIL, "hardcoded-value"))
    after = client.describe_flow("failing")
    assert (after.run_id, after.status, after.reason) == (
        run_id,
        FlowStatus.FAILED,
        "hardcoded-value",
    )
    assert after.closed_at is not None
    assert after.closed_at >= before.started_at
    assert flow_status_or_none(client, "failing") is FlowStatus.FAILED
    assert flow_status_or_none(client, "never-started") is None

    with pytest.raises(FlowNotActiveError, match=r"was stopped \(failed\)") as again:
        client.stop_flow("failing", StopFlowOptions(StopType.TERMINATE))
    assert again.value.operation == "stop_flow"
    assert isinstance(again.value, FlowStoppedError)
    assert again.value.status is FlowStatus.FAILED
    disallow = StartFlowOptions(id_reuse_policy=IdReusePolicy.DISALLOW)
    with pytest.raises(FlowAlreadyStartedError, match="stopped: failed") as restart:
        client.start_flow(flow, "failing", None, disallow)
    assert restart.value.status is FlowStatus.FAILED
    with pytest.raises(FlowNotActiveError):
        client.invoke_rpc(flow.invoke, "failing", "rpc-input")


def test_every_stop_type_has_its_status(client: Client) -> None:
    flow = NoStateFlow()
    for stop, status in [
        (StopType.CANCEL, FlowStatus.CANCELED),
        (StopType.TERMINATE, FlowStatus.TERMINATED),
        (StopType.FAIL, FlowStatus.FAILED),
    ]:
        flow_id = f"stopped-{stop.value}"
        client.start_flow(flow, flow_id, None)
        client.stop_flow(flow_id, StopFlowOptions(type=stop))
        assert client.describe_flow(flow_id).status is status


def test_another_client_sees_the_stop(store_url: str) -> None:
    flow = NoStateFlow()
    with Client(store_url) as first, Client(store_url) as second:
        first.start_flow(flow, "shared", None)
        assert second.invoke_rpc(flow.invoke, "shared", "x") == 100
        first.stop_flow("shared")
        with pytest.raises(FlowNotActiveError):
            second.invoke_rpc(flow.invoke, "shared", "x")
        assert second.describe_flow("shared").status is FlowStatus.CANCELED


def test_bad_arguments_are_refused(client: Client) -> None:
    with pytest.raises(FlowNotActiveError) as missing:
        client.stop_flow("never-started")
    assert not isinstance(missing.value, FlowStoppedError)
    assert missing.value.operation == "stop_flow"
    with pytest.raises(FlowNotFoundError):
        client.describe_flow("never-started")
    with pytest.raises(TypeError, match="must be a StopType"):
        StopFlowOptions("fail")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="options must be StopFlowOptions"):
        client.stop_flow("x", "fail")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="flow_id must be a str"):
        client.describe_flow(7)  # type: ignore[arg-type]
