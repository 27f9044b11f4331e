"""Dex's service errors as Dex code catches them: ``FlowNotActiveOrNotFoundError`` (and its
older name ``FlowNotActiveError``) for an RPC on a flow never started, all sharing
``DexServiceError`` with the failed ``operation``, the ``flow_id``, the ``detail`` and Dex's
``sub_status``."""

from __future__ import annotations

import asyncio

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
    FlowNotActiveError,
    FlowNotActiveOrNotFoundError,
    FlowNotFoundError,
    FlowStoppedError,
    PersistenceSchema,
    RpcLockConflictError,
    RPCResult,
    StorageError,
    ValueMappingError,
    WorkerInvocationError,
    rpc,
)


class RpcFlow(Flow[None]):
    data = Attribute("rpc-data", str)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.data)

    @rpc
    def get_data(self, context: Context) -> RPCResult[str]:
        return RPCResult(self.data.get(context))

    @rpc
    def fail(self, context: Context, input: str) -> None:
        raise ValueError(input)


def test_an_rpc_on_a_flow_never_started_is_not_active_or_not_found(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store_url) as client, pytest.raises(FlowNotActiveOrNotFoundError) as captured:
        client.invoke_rpc(flow.get_data, "missing-flow")
    error = captured.value
    assert error.operation == "invoke_rpc"
    assert error.flow_id == "missing-flow"
    assert error.detail == str(error)
    assert "missing-flow" in error.detail
    assert isinstance(error, FlowNotActiveError)
    assert isinstance(error, FlowNotFoundError)
    assert isinstance(error, DexServiceError)


def test_async_calls_name_their_operation_too(store_url: str) -> None:
    flow = RpcFlow()

    async def main() -> tuple[DexServiceError, DexServiceError]:
        async with AsyncClient(store_url) as client:
            with pytest.raises(FlowNotActiveOrNotFoundError) as missing:
                await client.invoke_rpc_json(flow.get_data, "missing-flow")
            await client.start_flow(flow, "rpc-flow", None)
            with pytest.raises(FlowAlreadyStartedError) as started:
                await client.start_flow(flow, "rpc-flow", None)
        return missing.value, started.value

    missing, started = asyncio.run(main())
    assert (missing.operation, missing.flow_id) == ("invoke_rpc_json", "missing-flow")
    assert (started.operation, started.flow_id) == ("start_flow", "rpc-flow")
    assert missing.sub_status is ErrorSubStatus.FLOW_NOT_EXISTS
    assert started.sub_status is ErrorSubStatus.FLOW_ALREADY_STARTED


def test_a_failing_handler_is_a_service_error_of_its_call(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "rpc-flow", None)
        with pytest.raises(DexServiceError) as captured:
            client.invoke_rpc(flow.fail, "rpc-flow", "refused")
    error = captured.value
    assert isinstance(error, WorkerInvocationError)
    assert (error.operation, error.flow_id) == ("invoke_rpc", "rpc-flow")
    assert (error.worker_error_type, error.worker_error_detail) == ("ValueError", "refused")


def test_rpc_user_error_preserves_worker_details(store_url: str) -> None:
    # As Dex's own test of the same name checks it, but for the gRPC status code.
    flow = RpcFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "rpc-error", None)
        with pytest.raises(DexServiceError) as captured:
            client.invoke_rpc(flow.fail, "rpc-error", "this is an error")
        failure = captured.value
        assert failure.sub_status is ErrorSubStatus.WORKER_API_ERROR
        assert isinstance(failure, WorkerInvocationError)
        assert "ValueError" in failure.worker_error_type
        assert "this is an error" in failure.worker_error_detail
        client.stop_flow("rpc-error")


def test_every_service_error_has_dex_sub_status() -> None:
    assert DexServiceError("x").sub_status is ErrorSubStatus.UNCATEGORIZED
    assert RpcLockConflictError("x").sub_status is ErrorSubStatus.WORKER_API_ERROR
    assert FlowStoppedError("x").sub_status is ErrorSubStatus.FLOW_NOT_EXISTS


def test_bad_input_is_no_service_error(store_url: str) -> None:
    flow = RpcFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "rpc-flow", None)
        with pytest.raises(ValueMappingError) as captured:
            client.invoke_rpc(flow.fail, "rpc-flow", 5)  # type: ignore[arg-type]
    assert not isinstance(captured.value, DexServiceError)


SERVER_READY_SECONDS = 5.0
POLL_INTERVAL_SECONDS = 0.01


async def server_is_ready(client: AsyncClient) -> bool:
    """As Dex's example tests wait for their service (``examples/python/tests/integ/
    conftest.py``), with the same ``except DexServiceError``."""
    deadline = asyncio.get_running_loop().time() + SERVER_READY_SECONDS
    while asyncio.get_running_loop().time() < deadline:
        try:
            return await client.health_check()
        except DexServiceError:
            await asyncio.sleep(POLL_INTERVAL_SECONDS)
    return False


def test_health_check_answers_and_a_closed_client_is_a_service_error(store_url: str) -> None:
    async def main() -> DexServiceError:
        async with AsyncClient(store_url) as client:
            assert await server_is_ready(client) is True
        with pytest.raises(DexServiceError) as closed:
            await client.health_check()
        return closed.value

    closed = asyncio.run(main())
    assert isinstance(closed, StorageError)
    assert closed.operation == "health_check"
    assert "closed" in closed.detail
    with Client(store_url) as client:
        assert client.health_check() is True
    with pytest.raises(StorageError):
        client.health_check()
