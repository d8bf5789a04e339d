"""Small statistics for benchmark samples."""

from __future__ import annotations


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at ``fraction`` (0..1) of the sorted samples, nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]
