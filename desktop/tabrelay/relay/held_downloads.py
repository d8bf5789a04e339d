"""The downloads a browser's extension holds for the app's word (issue 26; docs/protocol.md,
``download``): one ``HeldDownloads`` per connected browser, its one owner.

An extension that lists ``downloads.hold`` is asked, as it connects, to hold every download
Chrome begins until the app says ``downloads.decide``. Who says it:

- nobody's action is under way on the browser (``acting``): the download is the person's own,
  or the page's, and goes on at once;
- an agent's action is under way: the download waits until that action's aftermath claims it
  by its address (``claim``) and decides it (``decide``: allowed, or cancelled, after the
  person was asked or not: ``tools/acting/download.py``'s to say); what no action claimed goes
  on once the last action under way has ended — or is cancelled, when one of them failed or
  was cancelled before its aftermath could claim (fail closed).

The request to hold and the answers sent in the background are this owner's tasks, cancelled
with the connection (the extension then cancels what it still holds: it fails closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

from tabrelay.errors import BrowserError
from tabrelay.protocol.constants import MAX_HELD_URL_LENGTH
from tabrelay.protocol.messages import HeldDownload

logger = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]


class HeldDownloads:
    """The held downloads of one browser connection."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.holding = False  # the extension said it holds downloads for this connection
        self._acting = 0  # actions under way on this browser (their aftermath may claim)
        self._spoiled = False  # one of them ended before its aftermath could claim
        self._waiting: dict[int, HeldDownload] = {}  # arrived while acting, unclaimed
        self._news = asyncio.Event()  # set (and replaced) when one arrives
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Ask the extension (one that lists ``downloads.hold``) to hold downloads."""
        self._spawn(self._hold())

    async def _hold(self) -> None:
        try:
            await self._send("downloads.hold", {})
        except BrowserError as error:
            logger.warning("the browser does not hold downloads for Tabrelay: %s", error.message)
        else:
            self.holding = True

    def arrived(self, download: HeldDownload) -> None:
        """The extension holds ``download``: it goes on at once unless an action may claim it."""
        if self._acting == 0:
            self._spawn(self._answer(download.id, allow=True))
            return
        self._waiting[download.id] = download
        news, self._news = self._news, asyncio.Event()
        news.set()

    @contextlib.contextmanager
    def acting(self) -> Iterator[None]:
        """An action is under way (its aftermath included): downloads wait to be claimed. One
        that failed or was cancelled before its aftermath claimed what it began has the
        downloads no action claimed cancelled, not let go, when the last action ends."""
        self._acting += 1
        ended = False
        try:
            yield
            ended = True
        finally:
            self._acting -= 1
            self._spoiled = self._spoiled or not ended
            if self._acting == 0:
                waiting, self._waiting = self._waiting, {}
                allow, self._spoiled = not self._spoiled, False
                for download_id in waiting:
                    self._spawn(self._answer(download_id, allow=allow))

    async def claim(self, url: str, *, timeout: float) -> HeldDownload | None:
        """The held download of ``url`` (where it started or ended), taken out of the waiting
        ones: the claimer must ``decide`` it. ``None`` when none arrives within ``timeout``."""
        cut = url[:MAX_HELD_URL_LENGTH]
        deadline = time.monotonic() + timeout
        while True:
            for download in self._waiting.values():
                if cut in (download.url, download.final_url):
                    return self._waiting.pop(download.id)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._news.wait()

    async def decide(self, download_id: int, *, allow: bool) -> None:
        """Tell the extension: the download goes on, or is cancelled.

        Raises:
            BrowserError: the extension did not take the answer (disconnected, or it no longer
                holds the download).
        """
        await self._send("downloads.decide", {"id": download_id, "allow": allow})

    def close(self) -> None:
        """The connection ended: nothing more is answered (the extension cancels what it
        held)."""
        self.holding = False
        for task in self._tasks:
            task.cancel()
        self._waiting.clear()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, download_id: int, *, allow: bool) -> None:
        try:
            await self.decide(download_id, allow=allow)
        except BrowserError as error:
            logger.warning("a held download was not answered: %s", error.message)
