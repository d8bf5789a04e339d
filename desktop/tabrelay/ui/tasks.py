"""Coroutines started from Qt slots: kept alive until done, their failures reported in one place.

A slot cannot await; it hands its coroutine here. Expected failures (``TabrelayError``) go to
``on_error`` (the UI shows the title and message); anything else goes to ``on_crash`` (the
crash hook logs it and shows it). ``close`` cancels whatever is still running at quit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from tabrelay.errors import TabrelayError

T = TypeVar("T")


class BackgroundTasks:
    def __init__(
        self,
        *,
        on_error: Callable[[TabrelayError], None],
        on_crash: Callable[[BaseException], None],
    ) -> None:
        self._on_error = on_error
        self._on_crash = on_crash
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def start(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        on_done: Callable[[T], None] | None = None,
        on_error: Callable[[TabrelayError], None] | None = None,
    ) -> asyncio.Task[T]:
        """Run ``coro``; hand its result to ``on_done`` or its ``TabrelayError`` to a handler."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def finished(done: asyncio.Task[T]) -> None:
            self._tasks.discard(done)
            if done.cancelled():
                return
            error = done.exception()
            if isinstance(error, TabrelayError):
                (on_error or self._on_error)(error)
            elif error is not None:
                self._on_crash(error)
            elif on_done is not None:
                on_done(done.result())

        task.add_done_callback(finished)
        return task

    async def idle(self) -> None:
        """Wait until every task started so far has finished (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
