"""A running core on its own event loop in a thread.

Property-based tests (hypothesis) run each example synchronously, often with a fresh event loop
of their own; this keeps one app running across examples, reached over real sockets.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from support.harness import RelayHarness, running_core
from tabrelay.config.paths import Paths

T = TypeVar("T")


class CoreThread:
    def __init__(
        self,
        home: Path,
        *,
        ready: Callable[[RelayHarness], Awaitable[Any]] | None = None,
        **core_options: Any,
    ) -> None:
        self._core_options = core_options
        self.loop = asyncio.new_event_loop()
        self.started: Future[RelayHarness] = Future()
        self._ready = ready
        self._stop: asyncio.Event | None = None
        self.home = home
        self.extra: Any = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),))

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            paths = Paths.resolve({"TABRELAY_HOME": str(self.home)})
            async with running_core(paths, **self._core_options) as relay:
                if self._ready is not None:
                    self.extra = await self._ready(relay)
                self.started.set_result(relay)
                await self._stop.wait()
        except BaseException as exc:
            if not self.started.done():
                self.started.set_exception(exc)
            raise

    def __enter__(self) -> CoreThread:
        self.thread.start()
        self.started.result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)

    @property
    def harness(self) -> RelayHarness:
        return self.started.result()

    def call(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` on the core's loop from another thread and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)  # type: ignore[arg-type]

    async def on_core(self, coro: Awaitable[T]) -> T:
        """The same, awaited from another event loop (a hypothesis example's own)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]
        return await asyncio.wrap_future(future)
