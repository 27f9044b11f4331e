"""retry_on retries only the named error, with the core policy's bounded, growing,
jittered pauses."""

from __future__ import annotations

import pytest
from attrflow import InvalidInputError
from attrflow.retry import RetryPolicy

from attrflow_examples.lock_retry import SERVICE_RETRY, retry_on


class ConflictError(Exception):
    """Stands in for a lock conflict."""


class FakeTime:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


class FlakyCall:
    """Fails with ``error`` the first ``failures`` times, then returns ``"done"``."""

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.failures = failures
        self.error = error or ConflictError("held")
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return "done"


POLICY = RetryPolicy(max_attempts=1_000, first_delay=0.01, max_delay=0.08, budget=1.0)


def bound(retry: int) -> float:
    """The bound of POLICY's pause before retry ``retry``."""
    return min(0.08, 0.01 * 2**retry)


@pytest.mark.asyncio
async def test_a_call_that_succeeds_is_called_once() -> None:
    time, call = FakeTime(), FlakyCall(0)
    assert await retry_on(ConflictError, call, POLICY, sleep=time.sleep, clock=time.clock) == "done"
    assert (call.calls, time.pauses) == (1, [])


@pytest.mark.asyncio
async def test_conflicts_are_retried_with_pauses_below_the_doubling_bound() -> None:
    time, call = FakeTime(), FlakyCall(5)
    result = await retry_on(ConflictError, call, POLICY, sleep=time.sleep, clock=time.clock)
    assert result == "done"
    assert call.calls == 6
    assert len(time.pauses) == 5
    assert all(0.0 <= pause <= bound(n) + 1e-9 for n, pause in enumerate(time.pauses))


@pytest.mark.asyncio
async def test_the_last_conflict_is_raised_once_the_budget_is_spent() -> None:
    time, call = FakeTime(), FlakyCall(1_000_000)
    with pytest.raises(ConflictError):
        await retry_on(ConflictError, call, POLICY, sleep=time.sleep, clock=time.clock)
    assert sum(time.pauses) <= POLICY.budget
    assert call.calls == len(time.pauses) + 1


@pytest.mark.asyncio
async def test_the_last_conflict_is_raised_once_the_attempts_are_spent() -> None:
    time, call = FakeTime(), FlakyCall(100)
    policy = RetryPolicy(max_attempts=4, first_delay=0.01, max_delay=0.08, budget=100.0)
    with pytest.raises(ConflictError):
        await retry_on(ConflictError, call, policy, sleep=time.sleep, clock=time.clock)
    assert (call.calls, len(time.pauses)) == (4, 3)


@pytest.mark.asyncio
async def test_other_errors_are_not_retried() -> None:
    time, call = FakeTime(), FlakyCall(1, ValueError("bad input"))
    with pytest.raises(ValueError, match="bad input"):
        await retry_on(ConflictError, call, POLICY, sleep=time.sleep, clock=time.clock)
    assert (call.calls, time.pauses) == (1, [])


def test_the_service_budget_is_one_core_policy() -> None:
    assert (SERVICE_RETRY.first_delay, SERVICE_RETRY.max_delay, SERVICE_RETRY.budget) == (
        0.005,
        0.25,
        2.0,
    )


@pytest.mark.parametrize(
    ("max_attempts", "first_delay", "max_delay", "budget"),
    [(1, 0.0, 1.0, 1.0), (1, 0.5, 0.1, 1.0), (1, 0.1, 1.0, -1.0), (0, 0.1, 1.0, 1.0)],
)
def test_a_nonsensical_policy_is_refused(
    max_attempts: int, first_delay: float, max_delay: float, budget: float
) -> None:
    with pytest.raises(InvalidInputError, match="retry policy"):
        RetryPolicy(max_attempts, first_delay, max_delay, budget)
