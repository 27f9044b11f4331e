"""Retrying calls that fail fast on a held lock, with bounded, jittered exponential backoff.

attrflow's RPC locks never queue: a call that finds a lock held fails at once with a
retryable error. A service retries such a call for a short while before it gives up and
tells its own caller to come back later, so that ordinary contention never reaches the
client. The pauses grow exponentially and are drawn at random below that bound ("full
jitter"), so callers that collided once do not collide again in lock step.

Example::

    subscriber = await retry_on(
        RpcLockConflictError,
        lambda: client.invoke_rpc(flow.register_subscriber, FLOW_ID, request),
        Backoff(),
    )
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """How long to keep retrying, and how the pauses between attempts grow.

    Attributes:
        first_delay: Upper bound of the first pause, in seconds.
        max_delay: Upper bound of any single pause, in seconds.
        budget: Total time, in seconds, after which no further attempt is started.
    """

    first_delay: float = 0.005
    max_delay: float = 0.25
    budget: float = 2.0

    def __post_init__(self) -> None:
        if self.first_delay <= 0 or self.max_delay < self.first_delay or self.budget < 0:
            raise ValueError(
                "Backoff needs 0 < first_delay <= max_delay and budget >= 0, got "
                f"first_delay={self.first_delay}, max_delay={self.max_delay}, "
                f"budget={self.budget}"
            )

    def bound(self, retry: int) -> float:
        """The upper bound of the pause before retry number ``retry`` (counted from 0)."""
        # Past about 60 doublings every float bound is max_delay anyway; stop before the
        # power overflows.
        return min(self.max_delay, self.first_delay * 2.0 ** min(retry, 60))


async def retry_on(
    error_type: type[BaseException],
    call: Callable[[], Awaitable[T]],
    backoff: Backoff,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    jitter: Callable[[float], float] = lambda bound: random.uniform(0.0, bound),
) -> T:
    """Awaits ``call()``, calling it again after each ``error_type`` until the budget is spent.

    Other errors propagate at once. When a retry would start after ``backoff.budget``
    seconds, the last ``error_type`` error is raised. ``sleep``, ``clock`` and ``jitter``
    are the real ones unless a test replaces them.
    """
    deadline = clock() + backoff.budget
    retry = 0
    while True:
        try:
            return await call()
        except error_type:
            pause = jitter(backoff.bound(retry))
            if clock() + pause > deadline:
                raise
        await sleep(pause)
        retry += 1
