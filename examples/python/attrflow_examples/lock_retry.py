"""Retrying calls that fail fast on a held lock, by the core's retry policy.

attrflow's RPC locks never queue: a call that finds a lock held fails at once with a
retryable error. A service retries such a call for a short while before it gives up and
tells its own caller to come back later, so that ordinary contention never reaches the
client. How long and how often is one :class:`attrflow.retry.RetryPolicy`, the core's
(bounded attempts and time, pauses drawn at random below a doubling bound); this module
only awaits its pauses, so the event loop keeps serving other requests meanwhile.

Example::

    subscriber = await retry_on(
        RpcLockConflictError,
        lambda: client.invoke_rpc(flow.register_subscriber, FLOW_ID, request),
        SERVICE_RETRY,
    )
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from attrflow.retry import RetryPolicy

T = TypeVar("T")

SERVICE_RETRY = RetryPolicy(max_attempts=10_000, first_delay=0.005, max_delay=0.25, budget=2.0)
"""The service's budget: pauses below 5 ms doubling to 250 ms, no new try after 2 s."""


async def retry_on(
    error_type: type[BaseException],
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Awaits ``call()``, calling it again after each ``error_type`` while ``policy`` allows.

    Once the policy gives up, the last ``error_type`` error is raised. Other errors
    propagate at once. ``sleep`` and ``clock`` are the real ones unless a test replaces
    them.
    """
    start = clock()
    retry = 0
    while True:
        try:
            return await call()
        except error_type:
            pause = policy.pause_before(retry, clock() - start)
            if pause is None:
                raise
        await sleep(pause)
        retry += 1
