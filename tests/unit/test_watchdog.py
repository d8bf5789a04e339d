"""The loop watch the cancellation tests rely on: it sees a stall, says where the loop was, and
counts the garbage collector's pauses apart from the code's (tests/support/watchdog.py)."""

from __future__ import annotations

import asyncio
import gc
import time

from support.watchdog import LoopFrozen, LoopWatch


def blocking_call_under_test(seconds: float) -> None:
    time.sleep(seconds)


async def test_a_blocking_call_is_a_gap_and_the_watch_says_where_the_loop_was() -> None:
    async with LoopWatch() as watch:
        await asyncio.sleep(0.05)
        blocking_call_under_test(0.2)
        await asyncio.sleep(0.05)
    assert 150 < watch.max_gap_ms < 1000
    assert "blocking_call_under_test" in watch.stalled_in


async def test_a_collection_is_counted_apart_from_the_gap() -> None:
    heap = [[{} for _ in range(10)] for _ in range(100_000)]  # cycles-capable objects to walk
    async with LoopWatch() as watch:
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        gc.collect()
        took = time.perf_counter() - started
        await asyncio.sleep(0.05)
    assert took > 0.01, "the heap was too small to measure a collection"
    assert watch.max_collection >= took * 0.9
    assert watch.max_gap_ms < 10 + 0.5 * took * 1000
    del heap


async def test_a_stall_after_reset_is_measured_from_the_reset() -> None:
    async with LoopWatch() as watch:
        blocking_call_under_test(0.15)
        await asyncio.sleep(0.05)
        watch.reset()
        assert watch.max_gap == 0 and watch.stalled_in == ""
        await asyncio.sleep(0.05)
    assert watch.max_gap_ms < 100


async def test_a_loop_that_never_yields_is_broken_with_loop_frozen() -> None:
    broken_after = None
    async with LoopWatch(freeze_after=0.3) as watch:
        await asyncio.sleep(0.02)
        started = time.monotonic()
        try:
            while time.monotonic() < started + 5:  # spins without awaiting
                pass
        except LoopFrozen:
            broken_after = time.monotonic() - started
    assert watch.frozen
    assert broken_after is not None and broken_after < 2
