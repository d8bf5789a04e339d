"""Loading a page: open a URL through the guard and wait for the load (or the arrival that
has none), and wait briefly for a document still being parsed.

Navigation goes through CDP (``Page.navigate``) rather than ``chrome.tabs.update`` so network
errors come back as errors and the load can be awaited from the tab's own events. The final
URL is checked again after redirects: a redirect to a refused site stops on about:blank.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from tabrelay.errors import CommandFailed, CommandTimeout, NavigationBlocked
from tabrelay.protocol.constants import ErrorCode
from tabrelay.relay.events import HubEvent
from tabrelay.tools.acting import download
from tabrelay.tools.context import EventWaiter, ToolContext, ToolResult
from tabrelay.tools.page.pdf import MIME_TYPE
from tabrelay.tools.results import page_text

WaitUntil = Literal["load", "domcontentloaded", "none"]
_EVENT = {"load": "Page.loadEventFired", "domcontentloaded": "Page.domContentEventFired"}
_ARRIVALS = ("Page.frameNavigated", "Page.navigatedWithinDocument")
# Seconds an arrival that is the commit itself waits for the tab to say it shows that address.
TAB_CATCHES_UP = 2.0
SESSION_CHECK = 0.5  # seconds between looks at whether the tab's debugger session still stands
BLOCKED = "net::ERR_BLOCKED_BY_CLIENT"  # what Chrome says of a request the guard failed


class LoadCode(enum.StrEnum):
    """The ``CommandFailed.code`` of a page that did not load: the app's own, not a wire code
    (``protocol.constants.ErrorCode``): Chrome answered ``Page.navigate``, with ``errorText``."""

    NET_ERROR = "net_error"  # the network or the server failed the load (net::ERR_…)


async def open_url(
    ctx: ToolContext, url: str, *, wait_until: WaitUntil, timeout: float
) -> ToolResult:
    """Navigate the target tab to ``url`` (checked by the guard) and wait."""
    url = ctx.guard.check(url)

    log = ctx.state.log
    log.stopped = None

    async def go() -> Any:
        try:
            result = await ctx.cdp("Page.navigate", {"url": url})
        except CommandFailed as failed:
            if failed.code != ErrorCode.DETACHED or ctx.sessions is None:
                raise
            # Chrome's PDF viewer takes the tab's debugger away while a PDF loads, and a
            # navigation in flight then fails. The extension attaches again: the address is
            # opened once more in the new session, whose loads the guard holds first.
            await _prepare_again(ctx)
            result = await ctx.cdp("Page.navigate", {"url": url})
        if result.get("isDownload") is True:
            raise _Download
        error = result.get("errorText")
        if error == BLOCKED and log.stopped is not None:  # a redirect hop the guard stopped
            stopped, why = log.stopped
            raise NavigationBlocked(
                f"blocked after a redirect to {page_text(stopped[:200])}: {why}"
            )
        if error:
            raise CommandFailed(f"could not open {url}: {error}", code=LoadCode.NET_ERROR)
        return result

    began = time.time()  # the wall clock Chrome dates downloads by
    # A download it turns out to be (or the page starts) waits for this call's word.
    async with ctx.need_browser().held.acting(functools.partial(download.settle, ctx)):
        try:
            return await until_loaded(ctx, go, wait_until, timeout)
        except _Download:
            said = await download.follow(ctx, url, began)
    tab = await ctx.need_browser().get_tab(ctx.need_tab().id)
    return ToolResult(
        f"{said} The tab stayed on {page_text(tab.url[:300])}: that address is a file to "
        "download, not a page.",
        data={"tab_id": tab.id, "url": tab.url, "title": tab.title},
        page_fields=("url", "title"),
    )


class _Download(Exception):
    """Chrome took the address as a download, not a page (``Page.navigate``'s isDownload)."""


async def until_loaded(
    ctx: ToolContext, start: Callable[[], Awaitable[Any]], wait_until: WaitUntil, timeout: float
) -> ToolResult:
    await ctx.cdp("Page.enable")  # the load events come from the Page domain
    async with ctx.events(*_EVENT.values(), *_ARRIVALS, tab_updates=True) as events:
        started = await start()
        same_document = (
            isinstance(started, dict) and "loaderId" not in started and "frameId" in started
        )
        looked: dict[str, Any] | None = None  # the main frame, read again after a lost session
        if wait_until != "none" and not same_document:
            await ctx.progress(0, None, f"waiting for {wait_until}")
            loader = started.get("loaderId") if isinstance(started, dict) else None
            committed, looked = await _wait(ctx, events, wait_until, timeout, loader)
            if committed is not None:
                await _until_the_tab_shows(events, _address(committed))
        shown = [
            e.params.get("frame", {})
            for e in events.seen
            if e.method == "Page.frameNavigated" and not e.params.get("frame", {}).get("parentId")
        ] + ([looked] if looked is not None else [])
    return await _arrived(ctx, pdf=bool(shown) and shown[-1].get("mimeType") == MIME_TYPE)


async def _wait(
    ctx: ToolContext,
    events: EventWaiter,
    wait_until: WaitUntil,
    timeout: float,
    loader: object,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Wait for the arrival (``_arrival``). The main frame whose commit was the arrival, if it
    was (a PDF, a restored page: the tab's word comes after it), and the main frame read again
    if the tab's debugger session ended under the navigation and the new document had arrived
    by then (it is also the first).

    Chrome's PDF viewer ends the session of a tab whose PDF is still loading; a navigation away
    from it begun just before then commits in a new session that tells nothing until its Page
    domain is enabled. So the wait looks every ``SESSION_CHECK`` seconds whether the session
    still stands (``Page`` among its domains: a session that ended is reset, ``sessions.py``),
    and else prepares the tab again (attached, guarded, told its loads) and reads its main
    frame: the document ``loader`` names (``Page.navigate``'s answer) arrived if it is a PDF or
    loaded; else the wait goes on in the new session, where its commit or load is told.

    Raises:
        CommandTimeout: nothing arrived within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    committed = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CommandTimeout(f"the page did not get there within {timeout:g} s")
        try:
            # A new predicate each time: it is fed every event seen so far, in order.
            arrived = _arrival(wait_until, committed=committed)
            arrival = await events.until(arrived, timeout=min(left, SESSION_CHECK))
            frame = arrival.params.get("frame", {})
            return (frame if arrival.method == "Page.frameNavigated" else None), None
        except CommandTimeout:
            pass
        if ctx.sessions is None or "Page" in ctx.state.session.enabled:
            continue
        await _prepare_again(ctx)
        frame = (await ctx.cdp("Page.getFrameTree")).get("frameTree", {}).get("frame", {})
        if loader is None or frame.get("loaderId") != loader:
            continue  # not committed yet: the new session tells its commit
        committed = True
        if frame.get("mimeType") == MIME_TYPE or await _loaded(ctx, wait_until):
            return frame, frame


async def _prepare_again(ctx: ToolContext) -> None:
    """The tab's debugger session ended (the extension attaches again): prepare the new one,
    attached, told its loads, its document requests held for the guard."""
    assert ctx.sessions is not None
    ctx.state.session.fresh()  # the extension's word that it ended may not have come yet
    await ctx.sessions.prepare(ctx.need_browser(), ctx.need_tab().id, guard=True)


async def ready_state(ctx: ToolContext, *, timeout: float | None = None) -> object:
    """The tab's ``document.readyState`` ("loading", "interactive", "complete")."""
    answer = await ctx.cdp(
        "Runtime.evaluate",
        {"expression": "document.readyState", "returnByValue": True},
        timeout=timeout,
    )
    return answer.get("result", {}).get("value")


async def _loaded(ctx: ToolContext, wait_until: WaitUntil) -> bool:
    """Whether the tab's document got as far as ``wait_until`` (its event may have been lost)."""
    state = await ready_state(ctx)
    return state == "complete" or (wait_until == "domcontentloaded" and state == "interactive")


def _arrival(wait_until: WaitUntil, *, committed: bool = False) -> Callable[[HubEvent], bool]:
    """Whether an event, fed in order, is the arrival: the awaited load event of the new
    document (after its main frame committed: the document being left may still fire its own,
    as a PDF whose viewer was loading does), or an arrival that has none (a page restored from
    the back/forward cache, a same-document history step, a PDF: Chrome's viewer, another
    extension, takes the tab's debugger away while it loads, and its load is never told).
    ``committed``: the new document is known to have committed (read after a lost session)."""

    def arrived(event: HubEvent) -> bool:
        nonlocal committed
        if event.method == "Page.navigatedWithinDocument":
            return True
        frame = event.params.get("frame", {})
        if event.method == "Page.frameNavigated" and not frame.get("parentId"):
            committed = True
            restored = event.params.get("type") == "BackForwardCacheRestore"
            return restored or frame.get("mimeType") == MIME_TYPE
        return committed and event.method == _EVENT[wait_until]

    return arrived


def _address(frame: dict[str, Any]) -> str:
    """The address a frame (CDP's ``Page.Frame``) shows, as Chrome's tab says it."""
    return f"{frame.get('url', '')}{frame.get('urlFragment', '')}"


async def _until_the_tab_shows(events: EventWaiter, url: str) -> None:
    """Wait (at most ``TAB_CATCHES_UP``) for the browser to say the tab shows ``url``: an
    arrival that is the commit itself comes before Chrome's tab says where it is, and the
    answer, the guard's look and the next call's approval read the tab. A tab that never says
    so is read as it is then."""
    with contextlib.suppress(CommandTimeout):
        await events.until(
            lambda e: e.kind == "tab" and e.params.get("url") == url, timeout=TAB_CATCHES_UP
        )


async def _arrived(ctx: ToolContext, *, pdf: bool) -> ToolResult:
    browser = ctx.need_browser()
    tab = await browser.get_tab(ctx.need_tab().id)
    ctx.tab = tab
    try:
        ctx.guard.check(tab.url)
    except NavigationBlocked as blocked:
        await ctx.cdp("Page.navigate", {"url": "about:blank"})
        raise NavigationBlocked(
            f"blocked after a redirect: {blocked.message}; the tab was left on about:blank"
        ) from None
    kind = " (a PDF: browser_get_content reads its text)" if pdf else ""
    return ToolResult(
        page_text(f"{tab.title or '(no title)'} — {tab.url}") + kind,
        data={"tab_id": tab.id, "url": tab.url, "title": tab.title},
        page_fields=("url", "title"),
    )


PARSE_WAIT = 3.0  # seconds a snapshot waits for a document still being parsed
PARSED = "Page.domContentEventFired"  # the document is parsed
STILL_LOADING = (
    "(The page is still loading: this is what has arrived so far. browser_wait_for "
    "load_state='domcontentloaded' waits for the rest.)"
)


async def until_parsed(ctx: ToolContext, *, timeout: float = PARSE_WAIT) -> None:
    """Wait (at most ``timeout``) until the tab's document is parsed: a reader caught between
    two documents reads the next one then (its own answer says whether it was still loading).

    A document between navigations has no context to ask: that counts as loading. A wait that
    runs out, even before Chrome answers the question, is over: the reader reads what is there.
    """
    deadline = time.monotonic() + timeout
    async with ctx.events(PARSED) as events:
        try:
            state = await ready_state(ctx, timeout=timeout)
        except CommandTimeout:
            return
        except CommandFailed:
            state = "loading"
        if state == "loading":
            with contextlib.suppress(CommandTimeout):  # read as it is by then
                await events.until(lambda e: True, timeout=max(0.0, deadline - time.monotonic()))
