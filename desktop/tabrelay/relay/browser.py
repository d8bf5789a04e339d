"""One connected browser extension: its identity, its tabs, and the command channel to it.

``Browser.send_command`` sends a command with a fresh string id and awaits the answer; any
number run at once and are answered in any order. Pending commands live in one dict and all
fail together, at once, when the connection closes; so do the pings waiting for a pong. The
typed helpers below it are the relay methods of DESIGN §3. The socket itself belongs to
``session.py``, which reads it; this class only sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from tabrelay.errors import (
    BrowserDisconnected,
    BrowserError,
    CdpMethodBlocked,
    CommandFailed,
    CommandTimeout,
    TooManyPendingCommands,
)
from tabrelay.protocol.cdp import cdp_block_reason
from tabrelay.protocol.constants import (
    CARRIED_TAB,
    EXTENDED_METHODS,
    FEATURES,
    SEED_METHODS,
    ErrorCode,
)
from tabrelay.protocol.messages import (
    AppMessage,
    Command,
    CommandError,
    CommandResult,
    Hello,
    JsonObject,
    Ping,
    Status,
    TabEvent,
    TabInfo,
    encode,
)
from tabrelay.relay.freshness import Sent, TabFreshness, touched_tabs
from tabrelay.relay.held_downloads import HeldDownloads

logger = logging.getLogger(__name__)

DEFAULT_COMMAND_TIMEOUT = 30.0
DEFAULT_MAX_PENDING = 4096
PING_FRAME = encode(Ping().to_wire())


class Channel(Protocol):
    """What a browser needs of its connection (a websockets connection has both)."""

    async def send(self, message: str) -> None: ...
    async def close(self, code: int = 1000, reason: str = "") -> None: ...


class Browser:
    """A connected extension. Tabs are addressed as (browser id, tab id)."""

    def __init__(
        self,
        channel: Channel,
        *,
        browser_id: str,
        extension_id: str,
        hello: Hello | None,
        pairing_id: str | None = None,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        max_pending: int = DEFAULT_MAX_PENDING,
        on_change: Callable[[Browser], None] | None = None,
    ) -> None:
        self.id = browser_id
        self.extension_id = extension_id
        self.pairing_id = pairing_id  # the pairing whose credential this connection proved
        self.hello = hello
        self.command_timeout = command_timeout
        self.connected_at = time.time()
        self.last_activity = self.connected_at
        self.attached_tabs: frozenset[int] = frozenset()
        self.tabs: dict[int, TabInfo] = {}
        # Tab events are newer than any answer to a command sent before them: answers only
        # update a tab's cached state if no event about it arrived since the command left
        # (kept while commands are in flight: a closed tab's entry keeps an older answer from
        # bringing it back).
        self._events_seen = 0
        self._last_event: dict[int, int] = {}
        # Only an extension that pushes tab events (the Tabrelay protocol) keeps the cache current.
        self._freshness = TabFreshness(events=hello is not None)
        self._channel = channel
        self._max_pending = max_pending
        self._on_change = on_change
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[CommandResult]] = {}
        # Commands that timed out or were cancelled, by id → the tabs they may still change.
        self._lingering: dict[str, tuple[int, ...]] = {}
        self._pong: asyncio.Future[bool] | None = None  # the pings out wait for one pong
        self._closed_reason: str | None = None
        self.methods = frozenset(SEED_METHODS) | (
            frozenset(m for m in hello.capabilities if m in EXTENDED_METHODS)
            if hello
            else frozenset()
        )
        self.features = (
            frozenset(f for f in hello.capabilities if f in FEATURES) if hello else frozenset()
        )
        self.held = HeldDownloads(self.send_command)  # downloads waiting for the app's word

    # --- identity ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        if self.hello and self.hello.browser:
            return self.hello.browser
        return "Browser (relay extension)"

    @property
    def seed(self) -> bool:
        """True for an extension that speaks only the seed protocol (no hello)."""
        return self.hello is None

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def supports(self, method: str) -> bool:
        return method in self.methods

    # --- commands ---------------------------------------------------------------------------

    async def send_command(
        self, method: str, params: JsonObject | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send one relay command and return its result.

        Raises:
            BrowserDisconnected: the connection is closed, or closes before the answer.
            CommandTimeout: no answer within ``timeout`` (default: the browser's).
            TooManyPendingCommands: the bound on unanswered commands is reached.
            CommandFailed: the extension answered with an error, or lacks the method.
            CdpMethodBlocked: a ``cdp.send`` of a denylisted CDP method.
        """
        params = params or {}
        if self._closed_reason is not None:
            raise BrowserDisconnected(f"{self.name} is disconnected ({self._closed_reason})")
        if method not in self.methods:
            raise CommandFailed(
                f"{self.name} does not support {method}; update the Tabrelay extension",
                code=ErrorCode.UNKNOWN_METHOD,  # as the extension would answer it
            )
        if method == "cdp.send":
            reason = cdp_block_reason(str(params.get("method", "")))
            if reason is not None:
                raise CdpMethodBlocked(reason)
        if len(self._pending) >= self._max_pending:
            raise TooManyPendingCommands(
                f"{self.name} has {len(self._pending)} commands waiting; try again shortly"
            )
        if not self._pending:
            # Only an answer to a command in flight can be older than an event: with none,
            # what the events said is forgotten, so closed tabs leave nothing behind here. (A
            # caller reads ``_events_seen`` just before, with no await between: it is not moved.)
            self._last_event.clear()
        command_id = str(next(self._ids))
        future: asyncio.Future[CommandResult] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = future
        timeout = self.command_timeout if timeout is None else timeout
        self.last_activity = time.time()
        touched = touched_tabs(method, params)
        sent, events_seen = self._freshness.command_sent(touched), self._events_seen
        answer: CommandResult | None = None
        out = False  # the frame has left: the extension may act on it
        try:
            try:
                await self._channel.send(encode(Command(command_id, method, params).to_wire()))
                out = True
            # websockets raises ConnectionClosed; a half-closed transport may raise OSError.
            except Exception as exc:  # noqa: BLE001
                self._pending.pop(command_id, None)  # raised below; nobody awaits its future
                self.disconnect("connection lost")
                raise BrowserDisconnected(
                    f"{self.name} disconnected ({type(exc).__name__})"
                ) from None
            async with asyncio.timeout(timeout):
                answer = await future
                return answer.result
        except TimeoutError:
            raise CommandTimeout(
                f"{self.name} did not answer {method} within {timeout:g} s"
            ) from None
        finally:
            self._pending.pop(command_id, None)
            if future.cancelled() and out and self._closed_reason is None:
                # Timed out or cancelled once sent: it may still act, until its late answer.
                self._lingering[command_id] = touched
            else:
                self._freshness.command_ended(touched)
            if answer is not None and answer.tab is not None and params.get("tab") is True:
                self._carried(answer.tab, touched, sent, events_seen)

    def resolve(self, message: CommandResult | CommandError) -> bool:
        """Deliver an answer to its pending command; ``False`` if no command waits for it."""
        future = self._pending.pop(message.id, None)
        if future is None or future.done():
            if (touched := self._lingering.pop(message.id, None)) is not None:
                self._freshness.command_ended(touched)  # a late answer: it acts no more
            logger.debug("browser %s: dropped an answer for unknown id %s", self.id, message.id)
            return False
        if isinstance(message, CommandResult):
            future.set_result(message)
        else:
            future.set_exception(CommandFailed(message.error, code=message.code))
        return True

    async def send_frame(self, frame: AppMessage) -> None:
        """Send one unsolicited frame (no answer is awaited).

        Raises:
            Exception: whatever the connection raises when it is closed (websockets'
                ``ConnectionClosed``, or an ``OSError`` of a half-closed transport).
        """
        await self._channel.send(encode(frame.to_wire()))

    async def answers_ping(self, *, timeout: float) -> bool:
        """Whether the extension answers a ping within ``timeout``: its connection is alive.
        A connection that closes meanwhile answers ``False`` at once."""
        if self._closed_reason is not None:
            return False
        if self._pong is None or self._pong.done():
            self._pong = asyncio.get_running_loop().create_future()
        pong = self._pong
        try:
            await self._channel.send(PING_FRAME)
            async with asyncio.timeout(timeout):
                return await asyncio.shield(pong)  # other pings wait for the same pong
        # websockets raises ConnectionClosed; a half-closed transport may raise OSError.
        except Exception:  # noqa: BLE001
            return False

    def pong_received(self) -> None:
        """The extension answered a ping."""
        if self._pong is not None and not self._pong.done():
            self._pong.set_result(True)

    def disconnect(self, reason: str) -> None:
        """Mark closed and fail every pending command at once."""
        if self._closed_reason is not None:
            return
        self._closed_reason = reason
        self.held.close()
        if self._pong is not None and not self._pong.done():
            self._pong.set_result(False)
        pending, self._pending = self._pending, {}
        self._lingering.clear()  # nothing of this connection acts any more
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    BrowserDisconnected(f"{self.name} disconnected ({reason}) before answering")
                )

    async def close(self, code: int, reason: str) -> None:
        """Close the connection; its session then calls ``disconnect``."""
        await self._channel.close(code, reason)

    # --- state pushed by the extension -----------------------------------------------------

    def apply_status(self, status: Status) -> None:
        self.attached_tabs = frozenset(status.attached_tabs)
        self._changed()

    def apply_tab_event(self, event: TabEvent) -> None:
        self._events_seen += 1
        self._last_event[event.tab.id] = self._events_seen
        if event.event == "removed":
            self.tabs.pop(event.tab.id, None)
            self._freshness.forget(event.tab.id)
            self.attached_tabs = self.attached_tabs - {event.tab.id}
        else:
            self._freshness.heard(event.tab.id)
            if event.event == "activated":
                for tab_id, tab in list(self.tabs.items()):
                    if tab.window_id == event.tab.window_id and tab.active:
                        self.tabs[tab_id] = replace(tab, active=False)
            self.tabs[event.tab.id] = event.tab
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    # --- typed relay methods (DESIGN §3) ---------------------------------------------------

    async def list_tabs(self, *, timeout: float | None = None) -> list[TabInfo]:
        """The browser's tabs as it sees them now; ``tabs`` is brought up to date with them."""
        sent, asked = self._events_seen, self._freshness.asking()
        raw = await self.send_command("tabs.list", timeout=timeout)
        if not isinstance(raw, list):
            raise CommandFailed(f"{self.name} answered tabs.list with something other than a list")
        tabs = [TabInfo.from_wire(item) for item in raw]
        listed = {tab.id for tab in tabs}
        for tab_id in [t for t in self.tabs if t not in listed]:
            if self._last_event.get(tab_id, 0) <= sent:  # not one created since
                del self.tabs[tab_id]
                self._freshness.forget(tab_id)
        for tab in tabs:
            self._remember(tab, sent)
            self._freshness.answered(tab.id, asked)
        self._changed()
        return tabs

    def _carried(self, tab: TabInfo, touched: tuple[int, ...], sent: Sent, events: int) -> None:
        """A command's answer carried its tab as the extension read it once the command ended.
        It is cached, and current, only when it is that command's one tab, no event about the
        tab came while the command ran (the event may have left the extension after the read,
        with what was true before it), and no other command could have changed the tab
        meanwhile (``TabFreshness.carried``); else the next look asks."""
        if (
            touched == (tab.id,)
            and self._last_event.get(tab.id, 0) <= events
            and self._freshness.carried(tab.id, sent)
        ):
            self.tabs[tab.id] = tab

    def _remember(self, tab: TabInfo, sent: int) -> None:
        """Cache ``tab`` from an answer unless an event about it is newer than the command."""
        if self._last_event.get(tab.id, 0) <= sent:
            self.tabs[tab.id] = tab

    async def get_tab(self, tab_id: int, *, ask: bool = False) -> TabInfo:
        """The tab as the browser sees it now: from the cache when it is known current (see
        ``freshness.py``) and ``ask`` is false, else asked (``tabs.get``, else ``tabs.list``).

        Raises:
            CommandFailed: the tab does not exist (code ``no_tab``).
        """
        cached = self.tabs.get(tab_id)
        if cached is not None and not ask and self._freshness.current(tab_id):
            attached = tab_id in self.attached_tabs  # the status frames keep this, not events
            return cached if cached.attached == attached else replace(cached, attached=attached)
        if self.supports("tabs.get"):
            sent, asked = self._events_seen, self._freshness.asking()
            tab = TabInfo.from_wire(await self.send_command("tabs.get", {"tabId": tab_id}))
            self._remember(tab, sent)
            self._freshness.answered(tab.id, asked)
            return tab
        for tab in await self.list_tabs():
            if tab.id == tab_id:
                return tab
        raise CommandFailed(
            f"tab {tab_id} does not exist (it may have been closed)", code=ErrorCode.NO_TAB
        )

    async def create_tab(self, url: str | None = None, *, active: bool = True) -> TabInfo:
        params: JsonObject = {"active": active}
        if url is not None:
            params["url"] = url
        sent = self._events_seen
        tab = TabInfo.from_wire(await self.send_command("tabs.create", params))
        self._remember(tab, sent)
        self._freshness.made(tab.id)
        return tab

    async def navigate(self, tab_id: int, url: str) -> TabInfo:
        raw = await self.send_command("tabs.navigate", {"tabId": tab_id, "url": url})
        return TabInfo.from_wire(raw)

    async def close_tab(self, tab_id: int) -> None:
        await self.send_command("tabs.close", {"tabId": tab_id})

    async def activate_tab(self, tab_id: int) -> None:
        await self.send_command("tabs.activate", {"tabId": tab_id})

    async def group_tabs(self, tab_ids: list[int], *, title: str) -> int:
        """Put tabs into the named tab group (created if needed); its group id."""
        raw = await self.send_command("tabs.group", {"tabIds": tab_ids, "title": title})
        return int(raw.get("groupId", -1)) if isinstance(raw, dict) else -1

    async def screenshot(
        self, *, window_id: int | None = None, image_format: str = "png", quality: int | None = None
    ) -> str:
        """The visible tab of a window as a data URL."""
        params: JsonObject = {"format": image_format}
        if window_id is not None:
            params["windowId"] = window_id
        if quality is not None:
            params["quality"] = quality
        raw = await self.send_command("tabs.screenshot", params)
        if not isinstance(raw, dict) or not isinstance(raw.get("dataUrl"), str):
            raise CommandFailed(f"{self.name} answered tabs.screenshot without a dataUrl")
        return str(raw["dataUrl"])

    async def attach(self, tab_id: int) -> None:
        await self.send_command("debugger.attach", {"tabId": tab_id, "version": "1.3"})

    async def detach(self, tab_id: int, *, timeout: float | None = None) -> None:
        await self.send_command("debugger.detach", {"tabId": tab_id}, timeout=timeout)

    async def release_tabs(self, *, timeout: float) -> None:
        """Detach every tab the extension reports attached (the app is closing); best effort:
        a tab that cannot be detached in ``timeout`` is left to the extension."""

        async def release(tab_id: int) -> None:
            with contextlib.suppress(BrowserError):
                await self.detach(tab_id, timeout=timeout)

        async with asyncio.TaskGroup() as group:
            for tab_id in sorted(self.attached_tabs):
                group.create_task(release(tab_id))

    async def cdp(
        self,
        tab_id: int,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        with_tab: bool = False,
        session_id: str | None = None,
    ) -> Any:
        """Send a CDP command to a tab (the extension attaches first if needed). ``with_tab``:
        an extension that announces ``cdp.tab`` answers with the tab as it is once the command
        ended, so a look at the tab right after needs no round trip of its own. ``session_id``:
        to one of the tab's child sessions (a frame in another process), not the tab itself."""
        payload: JsonObject = {"tabId": tab_id, "method": method}
        if params:
            payload["params"] = params
        if session_id is not None:
            payload["sessionId"] = session_id
        if with_tab and CARRIED_TAB in self.features:
            payload["tab"] = True
        return await self.send_command("cdp.send", payload, timeout=timeout)
