"""An RPC that declares no locks takes the map-instance locks its caller adds per call, as
Dex's hash-partitioned controller relies on: while one call holds a partition's lock, a
second call naming the same partition fails at once with a lock conflict."""

from __future__ import annotations

import threading

import pytest
from archive_support import IN_PROCESS_CONFLICT

from attrflow import (
    AttributeMap,
    Client,
    Context,
    Flow,
    PersistenceSchema,
    RPCInvokeOptions,
    RpcLockConflictError,
    RPCResult,
    StepList,
    rpc,
)

buckets = AttributeMap("buckets", int)
entered = threading.Event()
release = threading.Event()


class Buckets(Flow[None]):
    def get_steps(self) -> StepList[None]:
        return StepList.empty()

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(buckets)

    @rpc(name="Hold")
    def hold(self, context: Context, input: str) -> RPCResult[str]:
        entered.set()
        release.wait()
        buckets.set(context, input, 1)
        return RPCResult(input)

    @rpc(name="Touch")
    def touch(self, context: Context, input: str) -> RPCResult[str]:
        buckets.set(context, input, 2)
        return RPCResult(input)


def locking(instance: str) -> RPCInvokeOptions:
    return RPCInvokeOptions(lock_attribute_map_instances=(buckets.lock(instance),))


def test_a_per_call_lock_on_an_rpc_without_locks_excludes_other_calls(store_url: str) -> None:
    flow = Buckets()
    entered.clear()
    release.clear()
    with Client(store_url) as client:
        client.start_flow(flow, "buckets")
        holder = threading.Thread(
            target=client.invoke_rpc,
            args=(flow.hold, "buckets", "partition-963"),
            kwargs={"options": locking("partition-963")},
        )
        holder.start()
        # Never left waiting if the lock were not taken: the holder is let go in a while.
        safety = threading.Timer(60, release.set)
        safety.start()
        try:
            assert entered.wait(timeout=60)
            with pytest.raises(RpcLockConflictError, match=IN_PROCESS_CONFLICT):
                client.invoke_rpc(
                    flow.touch, "buckets", "partition-963", options=locking("partition-963")
                )
        finally:
            release.set()
            holder.join()
            safety.cancel()
        assert (
            client.invoke_rpc(
                flow.touch, "buckets", "partition-963", options=locking("partition-963")
            )
            == "partition-963"
        )
