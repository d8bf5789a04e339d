"""Stopping on a signal: the loop is asked to stop, and a stop that hangs ends the process."""

from __future__ import annotations

import asyncio
import os
import signal

from tabrelay.system.signals import stop_on_signals


async def test_a_signal_asks_the_loop_to_stop_and_a_hung_stop_exits_after_the_deadline() -> None:
    loop = asyncio.get_running_loop()
    asked = asyncio.Event()
    exited: list[int] = []
    gone = asyncio.Event()

    def exit_now(code: int) -> None:
        exited.append(code)
        loop.call_soon_threadsafe(gone.set)

    restore = stop_on_signals(loop, asked.set, deadline=0.2, exit_now=exit_now)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        async with asyncio.timeout(5):
            await asked.wait()  # the app's stop was requested on the loop
            assert exited == []
            await gone.wait()  # ...and never finished: the deadline ends the process
        assert exited == [1]
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
