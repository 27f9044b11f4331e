"""Starting a flow again under its ID, written as Dex's own tests do
(``sdk-python/tests/integ/test_basic_runtime_sync.py`` and ``_async.py``:
``test_basic_workflow`` and ``test_basic_workflow_abnormal_exit_reuse``), with the flows'
Steps replaced by what an RPC-only flow has: the run ends with ``stop_flow`` instead of
completing or failing by itself. Dex's decision table (its flow options page) is the
rule: DISALLOW refuses a closed flow with ``FlowAlreadyStartedError``,
ALLOW_IF_PREVIOUS_FAILED starts a new run (of another flow type here) after a failed one,
the default starts one after any closed run, ALLOW_TERMINATE_IF_RUNNING replaces a running
one; a new run holds only its own initial values."""

from __future__ import annotations

import asyncio

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    Client,
    Context,
    Flow,
    FlowAlreadyStartedError,
    FlowStatus,
    IdReusePolicy,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    StopFlowOptions,
    StopType,
    rpc,
)


class BasicFlow(Flow[None]):
    counter = Attribute("counter", int)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc(lock_attributes=(counter.lock(),))
    def increase(self, context: Context) -> RPCResult[int]:
        count = (self.counter.get(context) or 0) + 1
        self.counter.set(context, count)
        return RPCResult(count)


class AbnormalExitFlow(Flow[None]):
    reason = Attribute("reason", str)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.reason)

    @rpc
    def read_reason(self, context: Context) -> RPCResult[str]:
        return RPCResult(self.reason.get(context))


def test_basic_workflow(client: Client) -> None:
    flow = BasicFlow()
    flow_id = "basic"
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.DISALLOW)
    client.start_flow(flow, flow_id, None, options)
    assert client.invoke_rpc(flow.increase, flow_id) == 1
    client.stop_flow(flow_id)
    with pytest.raises(FlowAlreadyStartedError) as refused:
        client.start_flow(flow, flow_id, None, options)
    assert refused.value.status is FlowStatus.CANCELED
    assert refused.value.operation == "start_flow"
    assert client.describe_flow(flow_id).status is FlowStatus.CANCELED
    assert client.get_attribute(flow_id, flow.counter) == 1


def test_basic_workflow_abnormal_exit_reuse(client: Client) -> None:
    abnormal = AbnormalExitFlow()
    basic = BasicFlow()
    flow_id = "abnormal-exit-reuse"
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED)
    first_run = client.start_flow(
        abnormal, flow_id, None, options.with_attribute(abnormal.reason, "crash")
    )
    client.stop_flow(flow_id, StopFlowOptions(StopType.FAIL, "abnormal exit"))
    failed = client.describe_flow(flow_id)
    assert failed.status is FlowStatus.FAILED
    second_run = client.start_flow(basic, flow_id, None, options)
    assert second_run != first_run
    assert client.invoke_rpc(basic.increase, flow_id) == 1
    info = client.describe_flow(flow_id)
    assert (info.run_id, info.flow_type, info.status) == (
        second_run,
        "BasicFlow",
        FlowStatus.RUNNING,
    )
    assert client.get_attribute(flow_id, basic.counter) == 1


def test_allow_if_previous_failed_refuses_after_a_cancel(client: Client) -> None:
    flow = BasicFlow()
    run_id = client.start_flow(flow, "canceled", None)
    client.stop_flow("canceled")
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED)
    with pytest.raises(FlowAlreadyStartedError, match="after a canceled one") as refused:
        client.start_flow(flow, "canceled", None, options)
    assert (refused.value.run_id, refused.value.status) == (run_id, FlowStatus.CANCELED)


@pytest.mark.parametrize("policy", [IdReusePolicy.DEFAULT, IdReusePolicy.ALLOW_IF_NOT_RUNNING])
def test_the_default_starts_a_new_run_once_the_flow_is_stopped(
    client: Client, policy: IdReusePolicy
) -> None:
    flow = BasicFlow()
    options = StartFlowOptions(id_reuse_policy=policy)
    first_run = client.start_flow(flow, "reused", None, options)
    assert client.invoke_rpc(flow.increase, "reused") == 1
    with pytest.raises(FlowAlreadyStartedError) as running:
        client.start_flow(flow, "reused", None, options)
    assert running.value.status is FlowStatus.RUNNING
    client.stop_flow("reused", StopFlowOptions(StopType.TERMINATE))
    second_run = client.start_flow(flow, "reused", None, options.with_attribute(flow.counter, 40))
    assert second_run != first_run
    assert client.invoke_rpc(flow.increase, "reused") == 41
    assert client.describe_flow("reused").status is FlowStatus.RUNNING


def test_allow_terminate_if_running_replaces_a_running_flow(client: Client) -> None:
    flow = BasicFlow()
    first_run = client.start_flow(flow, "replaced", None)
    assert client.invoke_rpc(flow.increase, "replaced") == 1
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING)
    second_run = client.start_flow(flow, "replaced", None, options)
    assert second_run != first_run
    assert client.invoke_rpc(flow.increase, "replaced") == 1
    assert client.describe_flow("replaced").run_id == second_run


def test_async_basic_workflow_abnormal_exit_reuse(store_url: str) -> None:
    async def scenario() -> None:
        abnormal = AbnormalExitFlow()
        basic = BasicFlow()
        async with AsyncClient(store_url) as client:
            flow_id = "abnormal-exit-reuse"
            options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED)
            await client.start_flow(abnormal, flow_id, None, options)
            await client.stop_flow(flow_id, StopFlowOptions(StopType.FAIL))
            failed = await client.describe_flow(flow_id)
            assert failed.status is FlowStatus.FAILED
            await client.start_flow(basic, flow_id, None, options)
            assert await client.invoke_rpc(basic.increase, flow_id) == 1
            disallow = StartFlowOptions(id_reuse_policy=IdReusePolicy.DISALLOW)
            with pytest.raises(FlowAlreadyStartedError):
                await client.start_flow(basic, flow_id, None, disallow)

    asyncio.run(scenario())
