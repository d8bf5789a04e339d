"""The downloads a browser's extension holds for the app's word (issue 26; docs/protocol.md,
``download``): one ``HeldDownloads`` per connected browser, its one owner.

An extension that lists ``downloads.hold`` is asked, as it connects, to hold every download
Chrome begins until the app says ``downloads.decide``. Who says it:

- nobody's action is under way on the browser (``acting``): the download is the person's own,
  or the page's, and goes on at once;
- an agent's action is under way: the download waits. That action's aftermath may claim it by
  its address (``claim``) and decide it (``tools/acting/download.py``: the person asked about
  it, or not). What no aftermath claimed is settled by the last action under way when it
  began, as that action ends: asked about through it (``settle``), or cancelled when that
  action failed or was cancelled (fail closed).

Every answer is sent by a task of this owner's (``decide`` waits for it shielded: a caller
cancelled meanwhile does not take the answer back); they end with the connection, and the
extension then cancels what it still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from tabrelay.errors import BrowserDisconnected, BrowserError
from tabrelay.protocol.constants import MAX_HELD_URL_LENGTH
from tabrelay.protocol.messages import HeldDownload

logger = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]
# What an action that ends makes of a download it saw begin and nobody claimed: whether it
# goes on (asking the person first, as its call's approval must).
Settle = Callable[[HeldDownload], Awaitable[bool]]
MAX_WAITING = 100  # held downloads waiting at once; more are cancelled
GONE = (
    "the browser disconnected while the person was being asked about its download; the "
    "extension cancels a download it held then (or removes its file, if Chrome completed it)"
)


class HeldDownloads:
    """The held downloads of one browser connection."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.holding = False  # the extension said it holds downloads for this connection
        self._actions: list[set[int]] = []  # per action under way: the downloads it saw begin
        self._waiting: dict[int, HeldDownload] = {}  # arrived while acting, unclaimed
        self._news = asyncio.Event()  # set (and replaced) when one arrives
        self._tasks: set[asyncio.Task[Any]] = set()
        self._asking: set[asyncio.Task[Any]] = set()  # calls asking the person about one
        self._withdrawn: set[asyncio.Task[Any]] = set()  # of those, cancelled by ``close``

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

    def arrived(self, download: HeldDownload) -> bool:
        """The extension holds ``download``: it goes on at once unless an action under way may
        claim it. ``False`` when this connection never asked to hold (the frame is refused)."""
        if not self.holding:
            return False
        if not self._actions:
            self.decide_later(download.id, allow=True)
        elif len(self._waiting) >= MAX_WAITING:
            self.decide_later(download.id, allow=False)
        else:
            self._waiting[download.id] = download
            for seen in self._actions:
                seen.add(download.id)
            news, self._news = self._news, asyncio.Event()
            news.set()
        return True

    @contextlib.asynccontextmanager
    async def acting(self, settle: Settle) -> AsyncIterator[None]:
        """An action is under way (its aftermath included): downloads wait to be claimed. As
        it ends, what it saw begin that no aftermath claimed and no other action under way saw
        too goes on if ``settle`` says so, and is cancelled if not — or at once, when the
        action failed or was cancelled."""
        seen: set[int] = set()
        self._actions.append(seen)
        try:
            yield
        except BaseException:
            for download in self._left(seen):
                self.decide_later(download.id, allow=False)
            raise
        left = self._left(seen)
        for at, download in enumerate(left):
            try:
                allow = await settle(download)
            except BaseException:
                for rest in left[at:]:
                    self.decide_later(rest.id, allow=False)
                raise
            await self.decide(download.id, allow=allow)

    def _left(self, seen: set[int]) -> list[HeldDownload]:
        """What only this action (which ends) still has to settle, taken out of the waiting:
        the downloads it saw begin, unclaimed, that no other action under way saw."""
        self._actions = [s for s in self._actions if s is not seen]
        others: set[int] = set().union(*self._actions)
        return [
            self._waiting.pop(i) for i in sorted(seen) if i in self._waiting and i not in others
        ]

    async def claim(self, url: str, *, timeout: float) -> HeldDownload | None:
        """The held download of ``url`` (where it started or ended), taken out of the waiting
        ones: the claimer must ``decide`` it. ``None`` when none arrives within ``timeout``
        (or the connection ends)."""
        cut = url[:MAX_HELD_URL_LENGTH]
        deadline = time.monotonic() + timeout
        while self.holding:
            for download in self._waiting.values():
                if cut in (download.url, download.final_url):
                    return self._waiting.pop(download.id)
            left = deadline - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._news.wait()
        return None

    async def decide(self, download_id: int, *, allow: bool) -> None:
        """Tell the extension: the download goes on, or is cancelled. Sent by a task of this
        owner's: a caller cancelled meanwhile does not take the answer back.

        Raises:
            BrowserError: the extension did not take the answer (disconnected, or it no longer
                holds the download).
        """
        await asyncio.shield(self._spawn(self._decide(download_id, allow=allow)))

    async def _decide(self, download_id: int, *, allow: bool) -> None:
        await self._send("downloads.decide", {"id": download_id, "allow": allow})

    @contextlib.asynccontextmanager
    async def asking(self) -> AsyncIterator[None]:
        """The calling task asks the person about a held download: if the connection ends
        meanwhile, the question is withdrawn (the task is cancelled) and ``BrowserDisconnected``
        raised in its place; the extension undoes what it held, so nothing is left to decide.

        Raises:
            BrowserDisconnected: the connection ended (before, or while the person decided).
        """
        task = asyncio.current_task()
        assert task is not None
        if not self.holding:
            raise BrowserDisconnected(GONE)
        cancelling = task.cancelling()
        self._asking.add(task)
        try:
            yield
        except BaseException as ended:
            # The withdrawal's cancel is undone whatever the body made of it; only it ending
            # the wait (no other cancel pending) becomes the disconnection.
            withdrawn = task in self._withdrawn and task.uncancel() <= cancelling
            if withdrawn and isinstance(ended, asyncio.CancelledError):
                raise BrowserDisconnected(GONE) from None
            raise
        finally:
            self._asking.discard(task)
            self._withdrawn.discard(task)

    def decide_later(self, download_id: int, *, allow: bool) -> None:
        """``decide`` from where nothing may be awaited (a call being cancelled); nothing once
        the connection ended (the extension undid what it held)."""
        if self.holding:
            self._spawn(self._answer(download_id, allow=allow))

    def close(self) -> None:
        """The connection ended: nothing more is answered (the extension cancels what it
        held), and a claim waiting ends."""
        self.holding = False
        for task in self._tasks:
            task.cancel()
        for task in self._asking - self._withdrawn:
            self._withdrawn.add(task)
            task.cancel()
        self._waiting.clear()
        self._news.set()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(_ended)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _answer(self, download_id: int, *, allow: bool) -> None:
        try:
            await self._decide(download_id, allow=allow)
        except BrowserError as error:
            logger.warning("a held download was not answered: %s", error.message)


def _ended(task: asyncio.Task[Any]) -> None:
    """Its failure was the awaiting caller's to see (or nobody's, once the caller went)."""
    if not task.cancelled():
        task.exception()
