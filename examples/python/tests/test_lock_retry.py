"""retry_on retries only the named error, with bounded, growing, jittered pauses."""

from __future__ import annotations

import pytest

from attrflow_examples.lock_retry import Backoff, retry_on


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


def upper_bound(bound: float) -> float:
    """The largest pause full jitter may draw, to make the budget arithmetic exact."""
    return bound


BACKOFF = Backoff(first_delay=0.01, max_delay=0.08, budget=1.0)


@pytest.mark.asyncio
async def test_a_call_that_succeeds_is_called_once() -> None:
    time, call = FakeTime(), FlakyCall(0)
    assert (
        await retry_on(ConflictError, call, BACKOFF, sleep=time.sleep, clock=time.clock) == "done"
    )
    assert (call.calls, time.pauses) == (1, [])


@pytest.mark.asyncio
async def test_conflicts_are_retried_until_the_call_succeeds() -> None:
    time, call = FakeTime(), FlakyCall(5)
    result = await retry_on(
        ConflictError, call, BACKOFF, sleep=time.sleep, clock=time.clock, jitter=upper_bound
    )
    assert result == "done"
    assert call.calls == 6
    assert time.pauses == [0.01, 0.02, 0.04, 0.08, 0.08]


@pytest.mark.asyncio
async def test_the_last_conflict_is_raised_once_the_budget_is_spent() -> None:
    time, call = FakeTime(), FlakyCall(10_000)
    with pytest.raises(ConflictError):
        await retry_on(
            ConflictError, call, BACKOFF, sleep=time.sleep, clock=time.clock, jitter=upper_bound
        )
    assert sum(time.pauses) <= BACKOFF.budget
    # 0.01 + 0.02 + 0.04 + 11 * 0.08 = 0.95; one more 0.08 pause would pass the budget.
    assert call.calls == len(time.pauses) + 1 == 15


@pytest.mark.asyncio
async def test_other_errors_are_not_retried() -> None:
    time, call = FakeTime(), FlakyCall(1, ValueError("bad input"))
    with pytest.raises(ValueError, match="bad input"):
        await retry_on(ConflictError, call, BACKOFF, sleep=time.sleep, clock=time.clock)
    assert (call.calls, time.pauses) == (1, [])


@pytest.mark.asyncio
async def test_pauses_are_drawn_at_random_below_the_bound() -> None:
    time, call = FakeTime(), FlakyCall(200)
    seen: list[float] = []

    def record_jitter(bound: float) -> float:
        seen.append(bound)
        return bound / 2

    backoff = Backoff(first_delay=0.001, max_delay=0.004, budget=10.0)
    await retry_on(
        ConflictError, call, backoff, sleep=time.sleep, clock=time.clock, jitter=record_jitter
    )
    assert seen[:4] == [0.001, 0.002, 0.004, 0.004]
    assert time.pauses == [bound / 2 for bound in seen]


@pytest.mark.asyncio
async def test_the_default_jitter_stays_within_the_bound() -> None:
    time, call = FakeTime(), FlakyCall(50)
    backoff = Backoff(first_delay=0.01, max_delay=0.08, budget=1000.0)
    await retry_on(ConflictError, call, backoff, sleep=time.sleep, clock=time.clock)
    assert len(time.pauses) == 50
    bounds = [backoff.bound(retry) for retry in range(len(time.pauses))]
    assert all(0.0 <= pause <= bound for pause, bound in zip(time.pauses, bounds))


def test_a_bound_never_exceeds_max_delay_even_after_many_retries() -> None:
    assert BACKOFF.bound(10_000) == BACKOFF.max_delay


@pytest.mark.parametrize(
    ("first_delay", "max_delay", "budget"),
    [(0.0, 1.0, 1.0), (0.5, 0.1, 1.0), (0.1, 1.0, -1.0)],
)
def test_a_nonsensical_backoff_is_refused(
    first_delay: float, max_delay: float, budget: float
) -> None:
    with pytest.raises(ValueError, match="Backoff needs"):
        Backoff(first_delay=first_delay, max_delay=max_delay, budget=budget)
