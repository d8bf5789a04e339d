"""How large the reliability suites run (issue 8): scaled down in ``make test``, full size under
``make bench``, which runs them with ``TABRELAY_FULL_SIZE=1`` (tests/bench/bench_reliability.py).
"""

from __future__ import annotations

import os

FULL_SIZE = os.environ.get("TABRELAY_FULL_SIZE") == "1"
FUZZ_FACTOR = 10  # at full size, each property-based test tries this many times the examples


def examples(count: int) -> int:
    """Hypothesis examples for a fuzz test: ``count`` in make test, ten times that at full size."""
    return count * FUZZ_FACTOR if FULL_SIZE else count
