"""A scripted relay extension over a real WebSocket, for integration tests.

It speaks either the seed protocol (token in the query string, no hello) or the Tabrelay
protocol (challenge–response, verifying the app's proof before obeying anything, then hello).
It simulates a browser's tabs and answers commands through overridable handlers, and it
records every frame it receives so tests can assert what crossed the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tabrelay.protocol.constants import EXTENDED_METHODS, FEATURES, PROTOCOL_VERSION, RELAY_PATH
from tabrelay.protocol.handshake import app_proof, extension_proof, new_nonce, proofs_match

EXTENSION_ID = "abcdefghijklmnopabcdefghijklmnop"
OTHER_EXTENSION_ID = "ponmlkjihgfedcbaponmlkjihgfedcba"

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


class ExtensionError(Exception):
    """A command's failure, answered with its ``code`` when it has one (not in the seed
    protocol), as the real extension does (``errors.describeChromeError``)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class AppNotVerified(Exception):
    """The server could not prove it knows the token: the extension obeys nothing."""


# Holding downloads for the app's word is announced only by an extension a test makes hold them
# (``capabilities=(*EXTENDED_METHODS, ...)`` and handlers of its own): the others are asked
# nothing more than before.
HOLDS_DOWNLOADS = ("downloads.hold", "downloads.decide")
SCRIPTED_METHODS = tuple(m for m in EXTENDED_METHODS if m not in HOLDS_DOWNLOADS)


class FakeExtension:
    def __init__(
        self,
        port: int,
        token: str,
        *,
        extension_id: str = EXTENSION_ID,
        seed: bool = False,
        instance: str | None = "instance-1",
        browser: str = "FakeChrome 1.0",
        capabilities: tuple[str, ...] = (*SCRIPTED_METHODS, *FEATURES),
        answer_pings: bool = True,
        host: str = "127.0.0.1",
        handlers: dict[str, Handler] | None = None,  # methods of the test's own, from the start
    ) -> None:
        self.port = port
        self.token = token
        self.extension_id = extension_id
        self.seed = seed
        self.instance = instance
        self.browser = browser
        self.capabilities = capabilities
        self.answer_pings = answer_pings
        self.host = host
        self.received: list[str | bytes] = []
        self.sent: list[str | bytes] = []
        self.commands: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.tabs: dict[int, dict[str, Any]] = {
            1: _tab(1, "https://example.com/", "Example", active=True),
            2: _tab(2, "https://example.org/news", "News"),
        }
        self.attached: set[int] = set()
        self.history: dict[int, list[str]] = {}
        self.cdp_calls: list[tuple[int, str, dict[str, Any]]] = []
        self.emit_load_events = True
        self.cdp_handlers: dict[str, Callable[[int, dict[str, Any]], Awaitable[Any]]] = {
            "Page.navigate": self._navigate,
            "Page.getNavigationHistory": self._history,
            "Page.reload": self._reload,
            "Page.navigateToHistoryEntry": self._go_to_entry,
            "Page.getLayoutMetrics": self._layout,
            "Page.captureScreenshot": self._capture,
        }
        self.handlers: dict[str, Handler] = {
            "tabs.list": self._tabs_list,
            "tabs.get": self._tabs_get,
            "tabs.create": self._tabs_create,
            "tabs.navigate": self._tabs_navigate,
            "tabs.screenshot": self._tabs_screenshot,
            "tabs.close": self._tabs_close,
            "tabs.activate": self._tabs_activate,
            "tabs.group": self._tabs_group,
            "debugger.attach": self._attach,
            "debugger.detach": self._detach,
            "cdp.send": self._cdp_send,
        } | (handlers or {})
        # What a cdp.send answer carries as its tab when asked ("tab": true), as the real
        # extension reads it once the command ended; None: it carries none (seed, older).
        self.carry: Callable[[int], Any] | None = None if seed else self._carried_tab
        self.hold_replies = False
        self._answering: set[asyncio.Task[None]] = set()
        self.pongs: asyncio.Queue[None] = asyncio.Queue()
        self._held: list[dict[str, Any]] = []
        self.connection: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.obeyed = 0

    # --- connecting -------------------------------------------------------------------------

    @property
    def origin(self) -> str:
        return f"chrome-extension://{self.extension_id}"

    def url(self) -> str:
        base = f"ws://{self.host}:{self.port}{RELAY_PATH}"
        return f"{base}?token={self.token}" if self.seed else base

    async def connect(self, *, read: bool = True) -> FakeExtension:
        """Connect and authenticate; then answer commands in the background."""
        self.connection = await connect(
            self.url(),
            origin=self.origin,
            compression=None,
            max_size=64 * 2**20,  # type: ignore[arg-type]
        )
        if not self.seed:
            await self._authenticate()
        if read:
            self._reader = asyncio.create_task(self._read())
        return self

    async def _authenticate(self) -> None:
        assert self.connection is not None
        challenge = json.loads(await self._recv())
        assert challenge["type"] == "auth.challenge", challenge
        nonce = new_nonce()
        await self.send(
            {
                "type": "auth.response",
                "nonce": nonce,
                "proof": extension_proof(
                    self.token, port=self.port, app_nonce=challenge["nonce"], extension_nonce=nonce
                ),
            }
        )
        ok = json.loads(await self._recv())
        expected = app_proof(
            self.token, port=self.port, app_nonce=challenge["nonce"], extension_nonce=nonce
        )
        if ok.get("type") != "auth.ok" or not proofs_match(expected, ok.get("proof", "")):
            await self.connection.close()
            raise AppNotVerified("the relay did not prove it knows the token")
        hello: dict[str, Any] = {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "extension": "0.0-test",
            "browser": self.browser,
            "capabilities": list(self.capabilities),
        }
        if self.instance is not None:
            hello["instance"] = self.instance
        await self.send(hello)
        await self.send({"type": "status", "attachedTabs": sorted(self.attached)})

    async def _recv(self) -> str | bytes:
        assert self.connection is not None
        frame = await self.connection.recv()
        self.received.append(frame)
        return frame

    async def close(self) -> None:
        if self.connection is not None and not self.closed.is_set():
            await self.connection.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(message))

    async def cdp_event(self, tab_id: int, method: str, params: dict[str, Any]) -> None:
        """Send one CDP event of the tab, as the extension forwards Chrome's."""
        await self.send({"type": "cdp_event", "tabId": tab_id, "method": method, "params": params})

    async def send_raw(self, frame: str | bytes) -> None:
        assert self.connection is not None
        self.sent.append(frame)
        await self.connection.send(frame)

    async def flushed(self, timeout: float = 5.0) -> None:
        """Ping and wait for the pong: the relay has processed everything sent before (pongs
        to pings sent before, as raw frames, are not this one's)."""
        while not self.pongs.empty():
            self.pongs.get_nowait()
        await self.send({"type": "ping"})
        pong = asyncio.ensure_future(self.pongs.get())
        closed = asyncio.ensure_future(self.closed.wait())
        done, _ = await asyncio.wait({pong, closed}, timeout=timeout, return_when="FIRST_COMPLETED")
        pong.cancel()
        closed.cancel()
        if pong not in done:
            raise TimeoutError("no pong: the connection closed or the relay did not answer")

    async def wait_closed(self, timeout: float = 5.0) -> int | None:
        async with asyncio.timeout(timeout):
            await self.closed.wait()
        return self.close_code

    # --- answering --------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                frame = await self._recv()
                if isinstance(frame, bytes):
                    continue
                message = json.loads(frame)
                if "id" in message and "method" in message:
                    self.commands.append(message)
                    if self.hold_replies:
                        self._held.append(message)
                    else:
                        task = asyncio.create_task(self._answer(message))
                        self._answering.add(task)
                        task.add_done_callback(self._answering.discard)
                elif message.get("type") == "ping" and self.answer_pings:
                    await self.send({"type": "pong"})
                elif message.get("type") == "pong":
                    self.pongs.put_nowait(None)
                elif message.get("type") == "error":
                    self.errors.append(message)
        except ConnectionClosed as closed:
            self.close_code = closed.rcvd.code if closed.rcvd else None
        finally:
            self.closed.set()

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message["method"])
        try:
            if handler is None:
                raise LookupError(f"Unknown method: {message['method']}")
            params = message.get("params") or {}
            result = await handler(params)
            reply: dict[str, Any] = {"id": message["id"], "result": result}
            if message["method"] == "cdp.send" and params.get("tab") is True and self.carry:
                carried = self.carry(params["tabId"])
                if carried is not None:
                    reply["tab"] = carried
            self.obeyed += 1
        except Exception as exc:
            reply = {"id": message["id"], "error": str(exc)}
            if isinstance(exc, ExtensionError) and exc.code and not self.seed:  # seed: no codes
                reply["code"] = exc.code
        with contextlib.suppress(ConnectionClosed):
            await self.send(reply)

    async def release_held(self, *, shuffle: bool = True) -> int:
        """Answer every held command, in random order."""
        held, self._held = self._held, []
        if shuffle:
            random.shuffle(held)
        for message in held:
            await self._answer(message)
        return len(held)

    def take_held(self) -> list[dict[str, Any]]:
        """The held commands, to be answered by the test itself (never by this extension)."""
        held, self._held = self._held, []
        return held

    async def held_count(self, count: int, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self._held) < count:
                await asyncio.sleep(0.005)

    # --- the simulated browser --------------------------------------------------------------

    async def _tabs_list(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(t, attached=t["id"] in self.attached) for t in self.tabs.values()]

    async def _tabs_get(self, params: dict[str, Any]) -> dict[str, Any]:
        tab = self.tabs.get(params["tabId"])
        if tab is None:
            raise ExtensionError(f"No tab with id: {params['tabId']}.", code="no_tab")
        return dict(tab, attached=tab["id"] in self.attached)

    def _carried_tab(self, tab_id: int) -> dict[str, Any] | None:
        tab = self.tabs.get(tab_id)
        return None if tab is None else dict(tab, attached=tab_id in self.attached)

    async def _tabs_create(self, params: dict[str, Any]) -> dict[str, Any]:
        tab_id = max(self.tabs, default=0) + 1
        self.tabs[tab_id] = _tab(
            tab_id, params.get("url", "about:blank"), "", params.get("active", True)
        )
        await self.send({"type": "tab_event", "event": "created", "tab": self.tabs[tab_id]})
        return self.tabs[tab_id]

    async def _tabs_navigate(self, params: dict[str, Any]) -> dict[str, Any]:
        tab = self.tabs[params["tabId"]]
        tab["url"] = params["url"]
        return tab

    async def _tabs_screenshot(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"dataUrl": "data:image/png;base64,iVBORw0KGgo="}

    async def _tabs_close(self, params: dict[str, Any]) -> dict[str, Any]:
        self.tabs.pop(params["tabId"])
        self.attached.discard(params["tabId"])
        await self.send({"type": "tab_event", "event": "removed", "tab": {"id": params["tabId"]}})
        return {}

    async def _tabs_activate(self, params: dict[str, Any]) -> dict[str, Any]:
        for tab in self.tabs.values():
            tab["active"] = tab["id"] == params["tabId"]
        return self.tabs[params["tabId"]]

    async def _tabs_group(self, params: dict[str, Any]) -> dict[str, Any]:
        for tab_id in params["tabIds"]:
            self.tabs[tab_id]["groupId"] = 7
            self.tabs[tab_id]["shared"] = True
        return {"groupId": 7}

    async def _attach(self, params: dict[str, Any]) -> dict[str, Any]:
        self.attached.add(params["tabId"])
        await self.send({"type": "status", "attachedTabs": sorted(self.attached)})
        return {}

    async def _detach(self, params: dict[str, Any]) -> dict[str, Any]:
        self.attached.discard(params["tabId"])
        await self.send({"type": "status", "attachedTabs": sorted(self.attached)})
        return {}

    async def _cdp_send(self, params: dict[str, Any]) -> dict[str, Any]:
        tab_id, method = params["tabId"], params["method"]
        args = params.get("params") or {}
        if tab_id not in self.tabs:
            raise ExtensionError(f"No tab with id: {tab_id}.", code="no_tab")
        if tab_id not in self.attached:
            await self._attach({"tabId": tab_id})
        self.cdp_calls.append((tab_id, method, args))
        handler = self.cdp_handlers.get(method)
        if handler is not None:
            return await handler(tab_id, args)
        if method == "Runtime.evaluate":
            return {
                "result": {"type": "string", "value": f"evaluated {args.get('expression', '')}"}
            }
        return {}

    # A small simulated page, enough for the endpoint's tools; real pages are the e2e suite's.

    async def _navigate(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        tab = self.tabs[tab_id]
        self.history.setdefault(tab_id, [tab["url"]]).append(args["url"])
        tab["url"], tab["title"] = args["url"], f"Page at {args['url']}"
        if self.emit_load_events:
            asyncio.get_running_loop().call_later(0.01, self._fire_load, tab_id)
        return {"frameId": "main", "loaderId": f"loader-{len(self.history[tab_id])}"}

    async def _reload(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        if self.emit_load_events:
            asyncio.get_running_loop().call_later(0.01, self._fire_load, tab_id)
        return {}

    async def _go_to_entry(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        urls = self.history[tab_id]
        url = urls[args["entryId"]]
        self.history[tab_id] = urls[: args["entryId"] + 1]
        self.tabs[tab_id]["url"] = url
        return await self._reload(tab_id, args)

    def _fire_load(self, tab_id: int) -> None:
        """The new document commits (the main frame's ``Page.frameNavigated``), then loads."""

        async def fire() -> None:
            frame = {"id": "main", "url": self.tabs[tab_id]["url"], "mimeType": "text/html"}
            await self.cdp_event(
                tab_id, "Page.frameNavigated", {"frame": frame, "type": "Navigation"}
            )
            for method in ("Page.domContentEventFired", "Page.loadEventFired"):
                await self.cdp_event(tab_id, method, {"timestamp": 1.0})

        task = asyncio.ensure_future(fire())
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _history(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        urls = self.history.get(tab_id, [self.tabs[tab_id]["url"]])
        entries = [{"id": n, "url": u, "title": u} for n, u in enumerate(urls)]
        return {"currentIndex": len(entries) - 1, "entries": entries}

    async def _layout(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        viewport = {"pageX": 0, "pageY": 0, "clientWidth": 800, "clientHeight": 600}
        return {
            "cssVisualViewport": viewport,
            "cssLayoutViewport": viewport,
            "layoutViewport": viewport,
            "cssContentSize": {"width": 800, "height": 2000},
        }

    async def _capture(self, tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        return {"data": TINY_PNG}


# A 1x1 PNG: the simulated browser's screenshots.
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)


def _tab(tab_id: int, url: str, title: str, active: bool = False) -> dict[str, Any]:
    return {"id": tab_id, "windowId": 1, "url": url, "title": title, "active": active}
