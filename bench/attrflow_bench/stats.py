"""Medians and spreads of per-repeat values, and paired ratios."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """One figure over its repeats: median, quartiles, extremes and count."""

    median: float
    p25: float
    p75: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        """The summary of ``values`` (at least one)."""
        if not values:
            raise ValueError("a summary needs at least one value")
        ordered = sorted(values)
        if len(ordered) == 1:
            p25 = p75 = ordered[0]
        else:
            p25, _, p75 = statistics.quantiles(ordered, n=4, method="inclusive")
        return cls(
            median=statistics.median(ordered),
            p25=p25,
            p75=p75,
            low=ordered[0],
            high=ordered[-1],
            count=len(ordered),
        )


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Repeat-by-repeat ratios of two series measured side by side."""
    if len(numerators) != len(denominators):
        raise ValueError(f"cannot pair {len(numerators)} values with {len(denominators)}")
    return [n / d for n, d in zip(numerators, denominators) if d > 0]
