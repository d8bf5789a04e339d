"""The e2e harness: real Chromium with the real extension, the real app core, local test pages.

``ExtensionBrowser`` launches Chromium (see ``chromium.py``) and gives the tests a person's
view of it over CDP: the extension's popup, options page, badge and stored state, and the
pages' own results. ``AppUnderTest`` runs the app core in-process on a fixed free port, so a
test can stop it, restart it, or put an impostor on its port. ``PageServer`` serves
``tests/e2e/pages`` over HTTP. Every wait is bounded and polls a condition.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import html
import http.server
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from e2e.cdp import CdpClient, CdpError, Session
from e2e.chromium import EXTENSION_ORIGIN, Chromium
from support.harness import RelayHarness, ScriptedApprover, running_core
from tabrelay.config.paths import Paths
from tabrelay.protocol.constants import DEFAULT_RELAY_PORT
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import HubEvent, Subscription
from tabrelay.tools.context import Progress, ToolContext

PAGES_DIR = Path(__file__).resolve().parent / "pages"
WORKER_URL = f"{EXTENSION_ORIGIN}/src/background/service_worker.js"
OPTIONS_URL = f"{EXTENSION_ORIGIN}/src/pages/options.html"
POPUP_URL = f"{EXTENSION_ORIGIN}/src/pages/popup.html"

T = TypeVar("T")


async def wait_until(
    condition: Callable[[], Awaitable[T] | T],
    *,
    timeout: float,
    interval: float = 0.05,
    message: str = "condition",
) -> T:
    """Poll ``condition`` until it returns something truthy; that value, or TimeoutError."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        value = condition()
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        last = value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{message} not met within {timeout:g} s (last: {last!r})")
        await asyncio.sleep(interval)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- test pages -----------------------------------------------------------------------------


class PageServer:
    """Serves tests/e2e/pages on 127.0.0.1 from a thread (the pages are the "web").

    ``/go/<how>?to=URL`` pages send the browser on to ``URL`` in each way a page can (see
    ``_ROUTES``); ``?delay=MS`` answers any page that much later; ``requests`` records every
    request as (method, Host header, path with its query).
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str]] = []
        self.served: dict[str, Served] = {}
        self.cookies: list[tuple[str, str]] = []  # (path, Cookie header) of each served file
        handler = functools.partial(
            _QuietHandler, self.requests, self.served, self.cookies, directory=str(PAGES_DIR)
        )
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def serve(
        self, path: str, body: bytes, content_type: str, *, cookie: str = "", attachment: str = ""
    ) -> str:
        """Serve ``body`` at ``/path`` (its URL back); with ``cookie`` (``name=value``), only
        to a request that carries that cookie (403 otherwise); with ``attachment``, as a file
        of that name to save (``Content-Disposition``). ``/set-cookie?name=value`` sets a
        cookie (HttpOnly: the page's scripts cannot read it)."""
        self.served["/" + path] = Served(body, content_type, cookie, attachment)
        return self.url(path)

    def url(self, path: str, *, host: str = "127.0.0.1") -> str:
        """A page URL; ``host="localhost"`` gives the same page on another origin."""
        return f"http://{host}:{self.port}/{path}"

    def hits(self, url: str) -> list[str]:
        """The methods of the requests that reached ``url`` (a URL from ``url()``)."""
        parts = urllib.parse.urlsplit(url)
        wanted = (parts.netloc, parts.path + (f"?{parts.query}" if parts.query else ""))
        return [method for method, *where in self.requests if tuple(where) == wanted]


# Pages that move on to ?to=URL the ways a page can: a redirect, a meta refresh, a script
# shortly after load or at once, a window it opens, a form it posts, a frame it embeds.
_ROUTES = {
    "/go/meta": '<meta http-equiv="refresh" content="0;url={to}"><p>Moving on</p>',
    "/go/script": "<p>Moving on soon</p><script>setTimeout(() => {{ location.href = {to_js}; }},"
    " 300)</script>",
    "/go/now": "<script>location.href = {to_js};</script><p>Moving on</p>",
    "/go/open": "<button onclick='window.open({to_js})'>Open</button>",
    "/go/button": "<button onclick='location.href = {to_js}'>Go</button>",
    "/go/form": '<form method="post" action="{to}"><button>Send</button></form>',
    "/go/frame": '<h1>Framed</h1><iframe src="{to}" title="inner"></iframe>',
}


@dataclass(frozen=True)
class Served:
    body: bytes
    content_type: str
    cookie: str = ""
    attachment: str = ""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def __init__(
        self,
        requests: list[tuple[str, str, str]],
        served: dict[str, Served],
        cookies: list[tuple[str, str]],
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self._requests = requests
        self._served = served
        self._cookies = cookies
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.command == "GET":
            self._requests.append(("GET", self.headers.get("Host", ""), self.path))
        parts = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parts.query)
        to = query.get("to", [""])[0]
        if "delay" in query:
            time.sleep(int(query["delay"][0]) / 1000)
        if parts.path == "/go/redirect":
            self.send_response(302)
            self.send_header("Location", to)
            self.end_headers()
        elif parts.path == "/set-cookie":
            self.send_response(200)
            self.send_header("Set-Cookie", f"{parts.query}; HttpOnly; Path=/")
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>Signed in</title><p>Signed in</p>")
        elif parts.path in self._served:
            served = self._served[parts.path]
            sent = self.headers.get("Cookie", "")
            self._cookies.append((parts.path, sent))
            allowed = not served.cookie or served.cookie in [c.strip() for c in sent.split(";")]
            body = served.body if allowed else b"forbidden"
            self.send_response(200 if allowed else 403)
            self.send_header("Content-Type", served.content_type if allowed else "text/plain")
            if served.attachment and allowed:
                self.send_header(
                    "Content-Disposition", f'attachment; filename="{served.attachment}"'
                )
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif parts.path in _ROUTES:
            body = _ROUTES[parts.path].format(to=html.escape(to), to_js=json.dumps(to))
            page = f"<!doctype html><title>{parts.path}</title>{body}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
        else:
            super().do_GET()

    def do_POST(self) -> None:
        self._requests.append(("POST", self.headers.get("Host", ""), self.path))
        self.do_GET()  # answer a posted form with the page at that path

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


# --- the default port -----------------------------------------------------------------------


class DefaultPortGuard:
    """Holds 127.0.0.1:23001 while a fresh extension starts, refusing every connection.

    A fresh profile's extension asks the default port for pairing before the test can point it
    at the test app; if a real Tabrelay listened there, it would pair with it.
    """

    def __init__(self, *, wait: float = 60.0) -> None:
        self.wait = wait
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> DefaultPortGuard:
        # Another e2e run on this machine holds the port for a second or two while its browser
        # starts: wait for it. A port that stays taken is a real app; then the tests skip.
        deadline = time.monotonic() + self.wait
        while True:
            try:
                self._server = await asyncio.start_server(
                    self._refuse, "127.0.0.1", DEFAULT_RELAY_PORT, reuse_address=True
                )
                return self
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise PortTaken(
                        f"127.0.0.1:{DEFAULT_RELAY_PORT} is in use (a Tabrelay app running?); "
                        "the e2e tests need it free so the fresh test extension cannot pair "
                        "with it"
                    ) from exc
                await asyncio.sleep(0.2)

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @staticmethod
    async def _refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()


class ImpostorServer:
    """A program on a port that is not Tabrelay (a WebSocket server, as a context manager):
    subclasses say how it answers HTTP requests and connections."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._server: Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await serve(
            self._handle, "127.0.0.1", self.port, process_request=self._process_request
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        return None

    async def _handle(self, connection: ServerConnection) -> None:
        raise NotImplementedError


class PortTaken(Exception):
    pass


# --- the app --------------------------------------------------------------------------------


class AppUnderTest:
    """The real app core on one port for the whole test module: start, stop, restart."""

    def __init__(
        self,
        paths: Paths,
        *,
        approver: ScriptedApprover | None = None,
        paired: tuple[str, ...] = (),
        **options: Any,
    ) -> None:
        self.paths = paths
        self.approver = approver or ScriptedApprover()
        self.paired = paired
        self.options = options
        self.port = 0
        self._stack: AsyncExitStack | None = None
        self._harness: RelayHarness | None = None

    @property
    def harness(self) -> RelayHarness:
        assert self._harness is not None, "the app is not running"
        return self._harness

    @property
    def running(self) -> bool:
        return self._harness is not None

    async def start(self) -> RelayHarness:
        stack = AsyncExitStack()
        self._harness = await stack.enter_async_context(
            running_core(
                self.paths,
                paired=self.paired,
                approver=self.approver,
                relay_port=self.port,
                **self.options,
            )
        )
        self._stack = stack
        self.port = self._harness.port
        return self._harness

    async def stop(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._harness = self._stack, None, None
            await stack.aclose()

    async def restart(self) -> RelayHarness:
        await self.stop()
        return await self.start()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def browsers(self) -> list[Browser]:
        return self.harness.core.registry.all() if self._harness else []

    async def browser(self, *, timeout: float = 10.0) -> Browser:
        """The one connected browser, once it has connected."""
        browsers = await wait_until(
            lambda: self.browsers(), timeout=timeout, message="the extension connects"
        )
        assert len(browsers) == 1, browsers
        return browsers[0]

    async def tool_context(
        self, tab_id: int, *, progress: Progress | None = None, guard: bool = False, **more: Any
    ) -> ToolContext:
        """A tool's view of the tab, made of the running app's parts as ``endpoint.calls`` makes
        one, after preparing the tab (``guard``: as an agent's call does); ``more`` sets other
        fields (``recipes=``…)."""
        core = self.harness.core
        browser = await self.browser()
        await core.sessions.prepare(browser, tab_id, guard=guard)
        return ToolContext(
            browser=browser,
            tab=await browser.get_tab(tab_id, ask=True),
            settings=core.settings,
            guard=core.guard(),
            hub=core.hub,
            progress=progress if progress is not None else _no_progress,
            tabs=core.tabs,
            sessions=core.sessions,
            **more,
        )


async def _no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def next_event(
    subscription: Subscription, accept: Callable[[HubEvent], bool], *, timeout: float = 10.0
) -> HubEvent:
    """The first event from the app's event hub that ``accept`` takes."""
    async with asyncio.timeout(timeout):
        async for event in subscription:
            if accept(event):
                return event
    raise AssertionError("the event hub closed")


# --- the browser ----------------------------------------------------------------------------


class Page:
    """A tab the tests opened over CDP, and the session attached to it."""

    def __init__(self, browser: ExtensionBrowser, session: Session) -> None:
        self.browser = browser
        self.session = session

    @property
    def target_id(self) -> str:
        return self.session.target_id

    async def evaluate(self, expression: str, *, timeout: float = 10.0) -> Any:
        return await self.session.evaluate(expression, timeout=timeout)

    async def wait_for_load(self, url: str, *, timeout: float = 10.0) -> None:
        """Wait until the tab shows ``url``, fully loaded (not the initial blank document)."""
        check = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        await wait_until(lambda: self.evaluate(check), timeout=timeout, message=f"{url} loads")

    async def text_of(self, selector: str) -> str:
        return str(
            await self.evaluate(f"document.querySelector({json.dumps(selector)}).textContent")
        )

    async def text(self) -> str:
        return str(await self.evaluate("document.body ? document.body.innerText : ''"))

    async def click(self, selector: str) -> None:
        """A real (trusted) mouse click in the middle of the element."""
        box = await self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            await self.session.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    async def type_into(self, selector: str, text: str) -> None:
        """Focus a field, select what it holds, and type over it as a keyboard would."""
        await self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.focus(); e.select(); })()"
        )
        await self.session.send("Input.insertText", {"text": text})

    async def close(self) -> None:
        with contextlib.suppress(CdpError):
            await self.browser.cdp.send("Target.closeTarget", {"targetId": self.target_id})


class ExtensionBrowser:
    """Chromium with the extension, seen and driven the way a person would."""

    def __init__(self, chromium: Chromium, cdp: CdpClient) -> None:
        self.chromium = chromium
        self.cdp = cdp
        self.started_at = time.monotonic()

    @classmethod
    async def launch(cls, binary: str) -> ExtensionBrowser:
        chromium = Chromium(binary)
        try:
            cdp = await CdpClient.connect(await chromium.start())
        except BaseException:
            await chromium.stop()
            raise
        browser = cls(chromium, cdp)
        try:
            await browser.worker_ready()
        except BaseException:
            await browser.close()
            raise
        return browser

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.cdp.close()
        await self.chromium.stop()

    # --- targets -----------------------------------------------------------------------------

    async def targets(self, kind: str | None = None) -> list[dict[str, Any]]:
        infos: list[dict[str, Any]] = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        return [t for t in infos if kind is None or t["type"] == kind]

    async def worker_target_id(self, *, timeout: float = 10.0) -> str:
        """The extension's service worker target (waits for it to run)."""

        async def find() -> str | None:
            for target in await self.targets("service_worker"):
                if target["url"] == WORKER_URL:
                    return str(target["targetId"])
            return None

        return await wait_until(find, timeout=timeout, message="the extension's service worker")

    async def worker_ready(self, *, timeout: float = 10.0) -> None:
        """Wait until the worker runs its script (a target can exist before its globals do)."""

        async def ready() -> bool:
            try:
                return bool(
                    await self.in_worker(
                        "typeof chrome === 'object' && typeof chrome.storage === 'object'"
                        " && typeof setTimeout === 'function'",
                        timeout=2,
                    )
                )
            except (CdpError, TimeoutError):
                return False

        await wait_until(ready, timeout=timeout, interval=0.1, message="the worker runs")

    async def in_worker(self, expression: str, *, timeout: float = 10.0) -> Any:
        """Evaluate in the service worker, then detach at once (an attached DevTools session
        would keep the worker alive and spoil lifetime tests)."""
        session = await Session.attach(self.cdp, await self.worker_target_id(timeout=timeout))
        try:
            return await session.evaluate(expression, timeout=timeout)
        finally:
            await session.detach()

    async def open_page(
        self, url: str, *, wait_for_load: bool = True, own_window: bool = False
    ) -> Page:
        """A tab on ``url``. Chrome makes the active tab the opener of a tab created beside it,
        as of a link opened from it; ``own_window`` opens it in a window of its own, with no
        opener, as a person opens a tab of their own (one an agent's tab did not open)."""
        params = {"url": url, "newWindow": own_window}
        target_id = (await self.cdp.send("Target.createTarget", params))["targetId"]
        session = await Session.attach(self.cdp, target_id)
        page = Page(self, session)
        if wait_for_load:
            await page.wait_for_load(url)
        return page

    async def page_targets(self) -> list[dict[str, Any]]:
        return await self.targets("page")

    async def attach_page(self, url: str, *, timeout: float = 10.0) -> Page:
        """The tab that shows ``url`` (opened by anyone), seen over CDP."""

        async def find() -> str | None:
            for target in await self.page_targets():
                if target["url"] == url:
                    return str(target["targetId"])
            return None

        target_id = await wait_until(find, timeout=timeout, message=f"a tab shows {url}")
        return Page(self, await Session.attach(self.cdp, target_id))

    # --- the extension as the person sees it ------------------------------------------------

    async def relay_state(self) -> dict[str, Any] | None:
        state = await self.in_worker(
            "chrome.storage.session.get('relayState').then((s) => s.relayState ?? null)"
        )
        return state  # type: ignore[no-any-return]

    async def wait_for_state(self, *names: str, timeout: float = 15.0) -> dict[str, Any]:
        seen: list[Any] = [None]

        async def reached() -> dict[str, Any] | None:
            state = seen[0] = await self.relay_state()
            return state if state and state["state"] in names else None

        try:
            return await wait_until(reached, timeout=timeout, interval=0.1)
        except TimeoutError:
            raise TimeoutError(f"the extension's state is {seen[0]}, not one of {names}") from None

    async def badge(self, tab_id: int | None = None) -> str:
        details = "{}" if tab_id is None else json.dumps({"tabId": tab_id})
        return str(await self.in_worker(f"chrome.action.getBadgeText({details})"))

    async def stored_token_digest(self) -> str | None:
        """sha256 of the stored relay token (so no test output ever shows the token)."""
        return await self.in_worker(  # type: ignore[no-any-return]
            """chrome.storage.local.get('relayToken').then(async ({ relayToken }) => {
                 if (typeof relayToken !== 'string') return null;
                 const bytes = new TextEncoder().encode(relayToken);
                 const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
                 return [...d].map((b) => b.toString(16).padStart(2, '0')).join('');
               })"""
        )

    async def storage(self, area: str) -> dict[str, Any]:
        return await self.in_worker(f"chrome.storage.{area}.get(null)")  # type: ignore[no-any-return]

    async def open_options(self) -> Page:
        """The options page once it has drawn the connection state: until then its headline is
        empty, and the text that fills it moves every control below, so a click aimed before
        would land beside its target."""
        page = await self.open_page(OPTIONS_URL)
        await wait_until(
            lambda: page.evaluate(
                "document.getElementById('port').value !== ''"
                " && document.getElementById('headline').textContent !== ''"
            ),
            timeout=5,
            message="the options page shows the port and the connection",
        )
        return page

    async def set_relay_port(self, port: int) -> None:
        """Type the port into the options page and press Save, as the person would."""
        page = await self.open_options()
        try:
            await page.type_into("#port", str(port))
            await page.click("#save-port")
            await wait_until(
                lambda: page.evaluate(
                    "document.getElementById('port-status').textContent.startsWith('Saved')"
                ),
                timeout=5,
                message="the options page saves the port",
            )
        finally:
            await page.close()

    async def paste_token(self, token: str) -> None:
        """Pair by hand: paste the relay token into the options page and save it."""
        page = await self.open_options()
        try:

            async def opened() -> bool:
                # The state line above can still change length under the click; aim again.
                if not await page.evaluate("document.querySelector('details').open"):
                    await page.click("summary")
                return bool(await page.evaluate("document.querySelector('details').open"))

            await wait_until(opened, timeout=5, message="the options page opens Pair by hand")
            await page.type_into("#token", token)
            await page.click("#save-token")
            await wait_until(
                lambda: page.evaluate(
                    "document.getElementById('token-status').textContent.startsWith('Saved')"
                ),
                timeout=5,
                message="the options page saves the token",
            )
        finally:
            await page.close()

    async def open_popup(self) -> Page:
        """The toolbar popup, opened as a click on the extension's icon would, over the active
        tab of the focused window."""
        await self.in_worker("chrome.action.openPopup()")

        async def find() -> str | None:
            for target in await self.page_targets():
                if target["url"] == POPUP_URL:
                    return str(target["targetId"])
            return None

        target_id = await wait_until(find, timeout=5, message="the popup opens")
        page = Page(self, await Session.attach(self.cdp, target_id))
        await wait_until(
            lambda: page.evaluate("document.getElementById('headline').textContent !== ''"),
            timeout=5,
            message="the popup renders",
        )
        return page

    async def tab_id_of(self, url: str) -> int:
        """The chrome.tabs id of the tab showing ``url``."""
        tab_id = await self.in_worker(
            f"chrome.tabs.query({{}}).then((tabs) => (tabs.find((t) => t.url === {json.dumps(url)})"
            " ?? {}).id ?? null)"
        )
        assert isinstance(tab_id, int), f"no tab shows {url}"
        return tab_id


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
