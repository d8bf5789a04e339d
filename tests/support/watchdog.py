"""A heartbeat on the event loop, and a thread that breaks a loop that stopped turning.

``LoopWatch`` ticks on the loop every ``interval`` seconds and records the largest gap between
ticks: a test asserts it stays small while something is cancelled, timed out or flooded. Time
the garbage collector held the interpreter is counted apart (``max_collection``), not in the
gap: a full collection of a test process's heap (pytest, every test module, the harness) takes
~100 ms on this machine whatever the code under test does. While the loop is late, the thread
samples where the main thread is, so a test that finds a long gap can say what filled it
(``stalled_in``). A loop that spins without ever yielding would hang the test instead of failing
it, so the thread also raises ``LoopFrozen`` in the main thread (through a SIGUSR1 handler) after
``freeze_after`` seconds without a tick, wherever the loop is stuck.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import gc
import signal
import sys
import threading
import time
import traceback
from types import FrameType, TracebackType
from typing import Any


class LoopFrozen(Exception):
    """The event loop did not tick for longer than the watch allows."""


class LoopWatch:
    def __init__(self, *, interval: float = 0.01, freeze_after: float = 3.0) -> None:
        self.interval = interval
        self.freeze_after = freeze_after
        self.max_gap = 0.0  # seconds, collections left out
        self.max_collection = 0.0  # seconds, the longest a collection held a gap
        self.stalled_in = ""  # the main thread's stack during the longest gap, if it was late
        self.frozen = False
        self._last = time.monotonic()
        self._collecting_since = 0.0
        self._collected = 0.0  # seconds of collection since the watch began
        self._sample: tuple[float, str] | None = None  # (the late tick's start, a stack)
        self._main = threading.main_thread().ident
        self._ticker: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="loop-watch", daemon=True)
        self._previous: Any = None

    @property
    def max_gap_ms(self) -> float:
        return self.max_gap * 1000

    async def __aenter__(self) -> LoopWatch:
        self._previous = signal.signal(signal.SIGUSR1, self._interrupted)
        gc.callbacks.append(self._collection)
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
        gc.callbacks.remove(self._collection)
        signal.signal(signal.SIGUSR1, self._previous)  # type: ignore[arg-type]

    def reset(self) -> None:
        """Forget the gaps so far (after a deliberate stall, such as a slow setup step)."""
        self.max_gap = self.max_collection = 0.0
        self.stalled_in = ""
        self._last = time.monotonic()

    async def _tick(self) -> None:
        while True:
            before = self._collected
            await asyncio.sleep(self.interval)
            now = time.monotonic()
            collected = self._collected - before
            gap = now - self._last - self.interval - collected
            self.max_collection = max(self.max_collection, collected)
            if gap > self.max_gap:
                self.max_gap = gap
                sample = self._sample
                self.stalled_in = sample[1] if sample and sample[0] == self._last else ""
            self._last = now

    def _collection(self, phase: str, info: dict[str, Any]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._collecting_since = now
        else:
            self._collected += now - self._collecting_since

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            last = self._last
            late = time.monotonic() - last
            if late > self.interval + 0.03 and (self._sample is None or self._sample[0] != last):
                frame = sys._current_frames().get(self._main or 0)
                self._sample = (last, "".join(traceback.format_stack(frame)) if frame else "")
            if late > self.freeze_after and not self.frozen:
                self.frozen = True
                _thread.interrupt_main(signal.SIGUSR1)

    def _interrupted(self, signum: int, frame: FrameType | None) -> None:
        raise LoopFrozen(f"the event loop did not tick for {self.freeze_after:g} s")
