"""Small statistics for benchmark samples, and the shape of a result row."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

Row = dict[str, Any]


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at ``fraction`` (0..1) of the sorted samples, nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def row(name: str, value: float, unit: str, **extra: Any) -> Row:
    """A result row; ``target`` (text) and ``met`` (bool) when there is a target."""
    return {"name": name, "value": value, "unit": unit, **extra}


def verdict(
    name: str, value: float, unit: str, limit: float, *, target: str | None = None, **extra: Any
) -> Row:
    """A row with a target of ``value <= limit``."""
    shown = target or f"≤ {limit:.3g} {unit}".rstrip()
    return row(name, value, unit, target=shown, met=value <= limit, group="targets", **extra)


async def timed(
    action: Callable[[int], Awaitable[Any]],
    samples: int,
    *,
    warmup: int = 0,
    before: Callable[[], None] | None = None,
    after: Callable[[float], None] | None = None,
) -> list[float]:
    """Run ``action(i)`` ``warmup`` times untimed, then ``samples`` times; milliseconds."""
    for i in range(warmup):
        await action(-1 - i)
    times = []
    for i in range(samples):
        if before is not None:
            before()
        started = time.perf_counter()
        await action(i)
        ms = (time.perf_counter() - started) * 1000
        times.append(ms)
        if after is not None:
            after(ms)
    return times
