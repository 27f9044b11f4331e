"""Store work runs with the GIL released and off the event loop: while one asyncio task's
append is blocked inside the core, the loop keeps running other tasks' calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

from archive_support import IN_PROCESS_CONFLICT, store_write_lock, subscriber_input

from attrflow import AsyncClient, RpcLockConflictError
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow, Subscriber


def test_the_event_loop_runs_while_a_call_is_blocked_in_the_core(store_path: Path) -> None:
    flow = ChunkedSubscriberFlow()

    async def main() -> tuple[Subscriber, list[str], int]:
        patient = AsyncClient(f"sqlite:{store_path}?busy_timeout_ms=120000")
        hasty = AsyncClient(f"sqlite:{store_path}?busy_timeout_ms=0")
        await patient.start_flow(flow, FLOW_ID)
        seen: list[str] = []
        ticks = 0
        with store_write_lock(store_path):
            blocked = asyncio.create_task(
                patient.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(1))
            )
            for _ in range(120_000):  # a bound against hanging, not a timing check
                ticks += 1
                try:
                    await hasty.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(2))
                except RpcLockConflictError as conflict:
                    seen.append(str(conflict))
                if seen and IN_PROCESS_CONFLICT in seen[-1]:
                    break
                await asyncio.sleep(0.001)
            assert not blocked.done()
        subscriber = await blocked
        await patient.close()
        await hasty.close()
        return subscriber, seen, ticks

    subscriber, seen, ticks = asyncio.run(main())
    assert IN_PROCESS_CONFLICT in seen[-1]
    assert ticks >= 1
    assert subscriber.sequence == 1
