"""``wait_for_flow``, written as Dex's own tests call it
(``sdk-python/tests/integ/test_basic_runtime_sync.py``, ``test_empty_input_workflow``:
``wait_for_flow(flow_id, WAIT_TIMEOUT).completions`` of a closed flow, and
``FlowNotFoundError`` for a missing one), with the run closed by ``stop_flow``, the only way
an RPC-only flow closes: the wait returns once the stop commits, with the run's status,
failure category and reason, and raises ``LongPollTimeoutError`` while the flow runs. A wait
is for the run the flow had when it began: a start with ``ALLOW_TERMINATE_IF_RUNNING`` that
replaces it ends the wait with that run ``TERMINATED``."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from attrflow import (
    AsyncClient,
    Client,
    Context,
    Flow,
    FlowErrorType,
    FlowNotFoundError,
    FlowResult,
    FlowStatus,
    IdReusePolicy,
    LongPollTimeoutError,
    RPCResult,
    StartFlowOptions,
    StopFlowOptions,
    StopType,
    rpc,
)

WAIT_TIMEOUT = timedelta(seconds=30)


class EmptyInputFlow(Flow[None]):
    @rpc
    def ping(self, context: Context) -> RPCResult[str]:
        return RPCResult("pong")


def test_empty_input_workflow(client: Client) -> None:
    flow = EmptyInputFlow()
    flow_id = "empty-input"
    client.start_flow(flow, flow_id, None)
    client.stop_flow(flow_id)
    assert not client.wait_for_flow(flow_id, WAIT_TIMEOUT).completions
    with pytest.raises(FlowNotFoundError):
        client.wait_for_flow("missing", timedelta(seconds=1)).single_output(int)


def test_a_wait_returns_when_the_flow_is_stopped(client: Client) -> None:
    flow = EmptyInputFlow()
    client.start_flow(flow, "waited", None)
    with ThreadPoolExecutor(max_workers=1) as executor:
        waiting = executor.submit(client.wait_for_flow, "waited", WAIT_TIMEOUT)
        assert client.invoke_rpc(flow.ping, "waited") == "pong"
        client.stop_flow("waited", StopFlowOptions(StopType.FAIL, "operator gave up"))
        result = waiting.result(timeout=60)
    assert result == FlowResult(
        FlowStatus.FAILED, (), FlowErrorType.CLIENT_API_FAILED, "operator gave up"
    )
    assert result.is_terminal
    with pytest.raises(ValueError, match="Expected exactly one Step output, found 0"):
        result.single_output(str)


def test_a_wait_ends_when_its_run_is_replaced(client: Client) -> None:
    flow = EmptyInputFlow()
    client.start_flow(flow, "replaced", None)
    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING)
    with ThreadPoolExecutor(max_workers=1) as executor:
        waiting = executor.submit(client.wait_for_flow, "replaced", WAIT_TIMEOUT)
        with pytest.raises(LongPollTimeoutError):
            client.wait_for_flow("replaced", timedelta(milliseconds=200))
        second_run = client.start_flow(flow, "replaced", None, options)
        result = waiting.result(timeout=60)
    assert result == FlowResult(
        FlowStatus.TERMINATED, (), None, "replaced by a new run (ALLOW_TERMINATE_IF_RUNNING)"
    )
    assert client.describe_flow("replaced").run_id == second_run
    assert client.invoke_rpc(flow.ping, "replaced") == "pong"


def test_a_running_flow_times_out(client: Client) -> None:
    client.start_flow(EmptyInputFlow(), "still-running", None)
    closed_in_time = r"did not reach a closed run within 0\.2 s"
    with pytest.raises(LongPollTimeoutError, match=closed_in_time) as timed_out:
        client.wait_for_flow("still-running", timedelta(milliseconds=200))
    assert (timed_out.value.operation, timed_out.value.flow_id) == (
        "wait_for_flow",
        "still-running",
    )
    client.stop_flow("still-running", StopFlowOptions(StopType.TERMINATE))
    terminated = client.wait_for_flow("still-running")
    assert (terminated.status, terminated.error_type, terminated.error_message) == (
        FlowStatus.TERMINATED,
        None,
        None,
    )
    with pytest.raises(TypeError, match=r"timeout must be a datetime\.timedelta"):
        client.wait_for_flow("still-running", 5)  # type: ignore[arg-type]


def test_async_wait_for_flow(store_url: str) -> None:
    async def scenario() -> None:
        flow = EmptyInputFlow()
        async with AsyncClient(store_url) as client:
            await client.start_flow(flow, "async-waited", None)
            waiting = asyncio.create_task(client.wait_for_flow("async-waited", WAIT_TIMEOUT))
            assert await client.invoke_rpc(flow.ping, "async-waited") == "pong"
            await client.stop_flow("async-waited")
            result = await waiting
            assert (result.status, result.completions) == (FlowStatus.CANCELED, ())
            with pytest.raises(FlowNotFoundError):
                await client.wait_for_flow("missing", timedelta(seconds=1))

    asyncio.run(scenario())
