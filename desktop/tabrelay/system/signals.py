"""Stopping on SIGTERM and SIGINT, within a bound whatever state the app is in.

The handlers are Python-level (``signal.signal``), not the event loop's: they run in the main
thread between two bytecodes even when the loop is busy, ask the loop to stop, and start a
deadline. A stop that has not finished when it passes (a stuck shutdown, a loop that never
yields) ends the process, so a service manager or a person's ``kill`` is never ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

STOP_DEADLINE = 4.5  # seconds from the signal to the process being gone
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals(
    loop: asyncio.AbstractEventLoop,
    stop: Callable[[], None],
    *,
    deadline: float = STOP_DEADLINE,
    exit_now: Callable[[int], Any] = os._exit,
) -> Callable[[], None]:
    """Call ``stop`` on the loop at SIGTERM or SIGINT, and exit if stopping takes too long.

    Returns a function that puts the previous handlers back. The deadline stays set once a
    signal came: the rest of the way out (threads a shutdown waits for) is bounded too.
    """
    timer: list[threading.Timer] = []

    def overdue() -> None:
        # Straight to stderr: a logging handler's lock may be held by the stuck main thread.
        with contextlib.suppress(OSError):
            os.write(
                2, f"tabrelay: not stopped {deadline:g} s after the signal; exiting\n".encode()
            )
        exit_now(1)

    def handle(signum: int, frame: FrameType | None) -> None:
        if not timer:
            logger.info("stopping on %s", signal.Signals(signum).name)
            timer.append(threading.Timer(deadline, overdue))
            timer[0].daemon = True
            timer[0].start()
        loop.call_soon_threadsafe(stop)

    previous = {sig: signal.signal(sig, handle) for sig in SIGNALS}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
