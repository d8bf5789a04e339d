"""A heartbeat on the event loop, and a thread that breaks a loop that stopped turning.

``LoopWatch`` ticks on the loop every ``interval`` seconds and records the largest gap between
ticks: a test asserts it stays small while something is cancelled, timed out or flooded. A loop
that spins without ever yielding would hang the test instead of failing it, so a thread watches
the ticks too and, after ``freeze_after`` seconds without one, raises ``LoopFrozen`` in the main
thread (through a SIGUSR1 handler), wherever the loop is stuck.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import signal
import threading
import time
from types import FrameType, TracebackType
from typing import Any


class LoopFrozen(Exception):
    """The event loop did not tick for longer than the watch allows."""


class LoopWatch:
    def __init__(self, *, interval: float = 0.01, freeze_after: float = 3.0) -> None:
        self.interval = interval
        self.freeze_after = freeze_after
        self.max_gap = 0.0
        self.frozen = False
        self._last = time.monotonic()
        self._ticker: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="loop-watch", daemon=True)
        self._previous: Any = None

    @property
    def max_gap_ms(self) -> float:
        return self.max_gap * 1000

    async def __aenter__(self) -> LoopWatch:
        self._previous = signal.signal(signal.SIGUSR1, self._interrupted)
        self._last = time.monotonic()
        self._ticker = asyncio.create_task(self._tick())
        self._thread.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        signal.signal(signal.SIGUSR1, self._previous)  # type: ignore[arg-type]

    def reset(self) -> None:
        """Forget the gaps so far (after a deliberate stall, such as a slow setup step)."""
        self.max_gap = 0.0
        self._last = time.monotonic()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            now = time.monotonic()
            self.max_gap = max(self.max_gap, now - self._last - self.interval)
            self._last = now

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            if time.monotonic() - self._last > self.freeze_after and not self.frozen:
                self.frozen = True
                _thread.interrupt_main(signal.SIGUSR1)

    def _interrupted(self, signum: int, frame: FrameType | None) -> None:
        raise LoopFrozen(f"the event loop did not tick for {self.freeze_after:g} s")
