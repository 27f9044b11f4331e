"""The core's retry policy for calls that met a held lock.

attrflow's RPC locks never queue: a call that finds a lock held fails at once with
``RpcLockConflictError``, which is safe to retry. :class:`RetryPolicy` is the Rust core's
one policy for that (the same the Kotlin and Swift clients use): at most ``max_attempts``
calls, a pause before each retry drawn at random below a bound that doubles from
``first_delay`` up to ``max_delay`` seconds ("full jitter"), and no new call once
``budget`` seconds have passed. :meth:`RetryPolicy.pause_before` says how long to wait
before retry ``n``, or ``None`` to give up, so sync and async callers share the rule::

    >>> policy = RetryPolicy(max_attempts=3, first_delay=0.01, max_delay=0.04, budget=1.0)
    >>> 0.0 <= policy.pause_before(0, 0.0) <= 0.01
    True
    >>> policy.pause_before(2, 0.0) is None
    True
"""

from __future__ import annotations

from attrflow._native import RetryPolicy

__all__ = ["RetryPolicy"]
