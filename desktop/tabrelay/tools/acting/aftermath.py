"""What an action led to: a new page, a move within the page, a tab the page opened — followed
from the tab's own events while an acting tool clicks, presses or fills, and said in its answer.

``following`` subscribes before the action; ``ActionWatch.after`` then waits, bounded, for what
the action started (the new page's load, the requests a script sent before moving on, the new
tab's address) and says where the tab is. ``Aftermath`` reads the events and does no I/O. It
does not check where the tab went: the guard does (interception, and the runner after the call).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tabrelay.errors import EventsClosed, TabrelayError
from tabrelay.relay.events import HubEvent, Subscription
from tabrelay.tools.acting import download
from tabrelay.tools.acting.download import settle as settle_download
from tabrelay.tools.context import ToolContext, ToolResult
from tabrelay.tools.results import page_text

ACTION_LOAD_TIMEOUT = 10.0  # seconds an action waits for the page it started to load
REQUESTS_TIMEOUT = 2.0  # seconds to wait for fetch/XHR requests an action started
NEW_TAB_TIMEOUT = 2.0  # seconds to wait for a tab the action opened to name its page
DOWNLOAD_START_TIMEOUT = 2.0  # seconds for the download a download link begins to be seen
_STARTS = frozenset(
    {
        "Page.frameRequestedNavigation",
        "Page.frameStartedNavigating",
        "Page.frameScheduledNavigation",
    }
)
_FOLLOWED = (
    *_STARTS,
    "Page.frameNavigated",
    "Page.navigatedWithinDocument",
    "Page.frameStoppedLoading",
    "Page.domContentEventFired",
    "Page.loadEventFired",
    "Page.downloadWillBegin",
    "Page.windowOpen",
    "Network.requestWillBeSent",
    "Network.loadingFinished",
    "Network.loadingFailed",
)
_REQUEST_TYPES = frozenset({"Fetch", "XHR"})
_PAGE_WIDE = frozenset({"Page.domContentEventFired", "Page.loadEventFired"})  # the main frame's
# After the input, a navigation the page scheduled (a form's submission runs as a task of its
# own) starts a few milliseconds later. ``_PROBE`` runs after that task — a posted message
# comes after it (same priority, older first) and, unlike a timer, is not slowed down in a
# background tab — and the page sends its "navigation requested" and "window open" events
# (Blink's, on the same session) before the probe's answer: once answered, whatever the action
# started has said so. No fixed wait.
_PROBE = (
    "new Promise((done) => { const channel = new MessageChannel(); "
    "channel.port1.onmessage = () => done([location.href, document.readyState]); "
    "channel.port2.postMessage(0); })"
)
_WHERE = "[location.href, document.title, document.readyState]"


@dataclass(slots=True)
class Aftermath:
    """What the events after an action say happened to its tab (pure: fed events, no I/O).

    ``started`` a navigation of the main frame (to ``url``) was requested; ``committed`` the tab
    shows the new document; ``loaded`` it fired its load event; ``same_document`` the URL
    changed without a new document (history.pushState, a fragment); ``failed`` it ended without
    a new document (cancelled, no content, a download); ``opened`` tabs the page opened.
    """

    tab_id: int
    main_frame: str = ""  # its events are the tab's own; until known, none are
    started: bool = False
    url: str = ""
    committed: bool = False
    content_loaded: bool = False
    loaded: bool = False
    same_document: bool = False
    failed: str | None = None
    closed: bool = False
    opened: dict[int, str] = field(default_factory=dict)
    opening: int = 0  # windows the page asked for (their tabs are told of separately)
    frames: dict[str, str] = field(default_factory=dict)  # frames that loaded anew: their URL
    frames_loading: set[str] = field(default_factory=set)
    requests: set[str] = field(default_factory=set)  # fetch/XHR still in flight
    downloads: list[str] = field(default_factory=list)  # addresses of downloads it started

    def feed(self, event: HubEvent) -> None:
        if event.kind == "tab":
            self._tab_event(event)
            return
        if event.tab_id != self.tab_id:
            return
        params, method = event.params, event.method
        if method.startswith("Network."):
            self._request(method, params)
            return
        if method == "Page.windowOpen":
            self.opening += 1
            return
        if method == "Page.downloadWillBegin" and params.get("url"):
            self.downloads.append(str(params["url"]))
        frame = params.get("frame") if method == "Page.frameNavigated" else None
        frame_id = frame.get("id") if isinstance(frame, dict) else params.get("frameId")
        if frame_id != self.main_frame and method not in _PAGE_WIDE:
            if self.main_frame and isinstance(frame_id, str):
                self._frame_event(method, frame_id, params, frame)
            return
        if method in _STARTS:
            if params.get("disposition", "currentTab") != "currentTab":
                return  # a new tab or window: its tab event says where
            self.started, self.url = True, str(params.get("url") or self.url)
            self.failed = None
        elif method == "Page.frameNavigated":
            self.started = self.committed = True
            self.url = str((frame or {}).get("url") or self.url)
            self.content_loaded = self.loaded = False
        elif method == "Page.navigatedWithinDocument":
            self.same_document, self.url = True, str(params.get("url") or self.url)
            if not self.committed:
                self.started = False  # what was requested was this move within the page
        elif method == "Page.domContentEventFired" and self.committed:
            self.content_loaded = True
        elif method == "Page.loadEventFired" and self.committed:
            self.content_loaded = self.loaded = True
        elif method == "Page.downloadWillBegin" and self.started and not self.committed:
            self.failed = "it became a download"
        elif method == "Page.frameStoppedLoading" and self.started and not self.committed:
            self.failed = "it was cancelled or the answer had no page"

    def _frame_event(
        self, method: str, frame_id: str, params: dict[str, Any], frame: dict[str, Any] | None
    ) -> None:
        """A frame inside the page: a form or link in it loads another document there."""
        if method in _STARTS and params.get("disposition", "currentTab") == "currentTab":
            self.frames_loading.add(frame_id)
        elif method == "Page.frameNavigated" and frame_id in self.frames_loading:
            self.frames[frame_id] = str((frame or {}).get("url") or "")
        elif method == "Page.frameStoppedLoading":
            self.frames_loading.discard(frame_id)

    def _tab_event(self, event: HubEvent) -> None:
        if event.tab_id == self.tab_id:
            self.closed = self.closed or event.method == "removed"
            return
        # Only a tab created meanwhile with this one as its opener is the action's: Chrome keeps
        # openerTabId for a tab's life, so an older tab's update would pass the person's tab on.
        created = event.method == "created" and event.params.get("openerTabId") == self.tab_id
        if event.tab_id is None or (not created and event.tab_id not in self.opened):
            return
        if event.method == "removed":
            self.opened.pop(event.tab_id, None)
        else:
            self.opened[event.tab_id] = str(event.params.get("url") or "")

    def _request(self, method: str, params: dict[str, Any]) -> None:
        request_id = str(params.get("requestId", ""))
        if method == "Network.requestWillBeSent":
            if params.get("type") in _REQUEST_TYPES and params.get("frameId") == self.main_frame:
                self.requests.add(request_id)
        else:
            self.requests.discard(request_id)

    @property
    def moved(self) -> bool:
        """Whether the tab shows another document or URL than before the action."""
        return self.committed or self.same_document

    @property
    def named_tabs(self) -> bool:
        """Every tab the page asked for is known and has an address."""
        return len(self.opened) >= self.opening and all(self.opened.values())

    @property
    def settled(self) -> bool:
        """Nothing left to wait for: no navigation under way (or it loaded, or ended)."""
        if self.closed:
            return True
        page_done = not self.started or self.loaded or self.failed is not None
        return page_done and (self.committed or not self.frames_loading)


@dataclass(frozen=True, slots=True)
class Followed:
    """Where an action left its tab, as the tool's answer says it."""

    aftermath: Aftermath
    url: str = ""
    title: str = ""
    ready_state: str = ""
    stopped: tuple[str, str] | None = None  # a load Tabrelay stopped meanwhile: (url, why)
    downloaded: tuple[str, ...] = ()  # what became of each download it started (sentences)

    def note(self) -> str:
        """The sentence(s) an acting tool adds to its answer ("" when the page stayed)."""
        after = self.aftermath
        parts: list[str] = []
        where = page_text(f'"{self.title}" at {self.url}' if self.title else self.url)
        went = page_text(after.url)
        if after.closed:
            parts.append("The page closed its tab.")
        elif self.stopped is not None:
            stopped, why = self.stopped
            instead = "Chrome's error page" if after.committed else where
            parts.append(
                f"It started a navigation that Tabrelay stopped at {page_text(stopped[:200])}: "
                f"{why}. The tab shows {instead}."
            )
        elif after.committed and after.loaded:
            parts.append(
                f"The page changed: the tab now shows {where}. Take a new snapshot; refs from "
                "the old page no longer work."
            )
        elif after.committed:
            parts.append(
                f"The page changed: the tab shows {where}, still loading after "
                f"{ACTION_LOAD_TIMEOUT:g} s. Wait with browser_wait_for load_state='load', then "
                "take a new snapshot; refs from the old page no longer work."
            )
        elif after.started and after.failed is None:
            parts.append(
                f"It started loading {went}, which had not answered after "
                f"{ACTION_LOAD_TIMEOUT:g} s; the tab still shows the old page until it does. "
                "Wait with browser_wait_for load_state='load', then take a new snapshot."
            )
        elif after.failed is not None and not self.downloaded:
            parts.append(
                f"It started a navigation to {went} that did not open a page "
                f"({after.failed}); the tab still shows {where}."
            )
        elif after.same_document:
            parts.append(
                f"The page moved to {where} without loading a new one; take a new snapshot "
                "to see what changed."
            )
        if not after.committed and after.frames:
            shown = ", ".join(
                page_text(url) if url else "a new page" for url in after.frames.values()
            )
            still = " (still loading)" if after.frames_loading else ""
            parts.append(
                f"A frame in the page now shows {shown}{still}; take a new snapshot, its old "
                "refs no longer work."
            )
        for tab_id, url in after.opened.items():
            parts.append(
                f"It opened a new tab {tab_id} ({page_text(url) if url else 'no address yet'}); "
                f"pass tab_id={tab_id} "
                "to use it."
            )
        parts.extend(self.downloaded)
        if after.opening > len(after.opened):
            parts.append(
                "The page asked for a new window that did not open (the browser may have "
                "blocked it as a pop-up)."
            )
        return " ".join(parts)

    def data(self) -> dict[str, Any]:
        """The structured part of the answer (its page words: ``response.AFTER_ACTION_FIELDS``)."""
        after = self.aftermath
        data: dict[str, Any] = {"navigated": after.moved}
        if self.url:
            data.update(url=self.url, title=self.title)
        if after.started and not after.loaded and after.failed is None and not after.closed:
            data["loading"] = True
        if after.opened:
            data["new_tabs"] = [{"tab_id": t, "url": u} for t, u in after.opened.items()]
        if after.frames and not after.committed:
            data["frames"] = list(after.frames.values())
        if after.closed:
            data["tab_closed"] = True
        return data


class ActionWatch:
    """Follows what one action does to its tab; ``after`` waits for it (see ``following``)."""

    def __init__(
        self,
        ctx: ToolContext,
        subscription: Subscription,
        aftermath: Aftermath,
        *,
        download: str | None = None,
        its_events: bool = True,
    ) -> None:
        self._ctx = ctx
        self._subscription = subscription
        self.aftermath = aftermath
        self._download = download
        self._its_events = its_events
        self._began = time.time()  # the wall clock Chrome dates downloads by

    async def after(self, *, timeout: float = ACTION_LOAD_TIMEOUT) -> Followed:
        """Wait (bounded by ``timeout``) for what the action started: a new page to load, the
        requests it sent, a tab it opened to name its page; then say where the tab is."""
        deadline = time.monotonic() + timeout
        after = self.aftermath
        await self._find_main_frame()
        self._take()
        if not after.started:
            await self._probe()
            self._take()
        if not after.started and after.requests:
            # A search that asks the server first and then moves on (fetch, then location).
            await self._gather(
                until=lambda: after.started or not after.requests,
                seconds=min(REQUESTS_TIMEOUT, deadline - time.monotonic()),
            )
            if not after.started:
                await self._probe()
                self._take()
        unconfirmed: frozenset[str] = frozenset()
        if self._download is not None and not after.started and not after.downloads:
            # A link with a download attribute starts no navigation: Chrome's browser process
            # begins its download after the click, later than the page's own task queue says.
            # In a frame of another process, whose events are not followed, or when it does not
            # say so in time, the download is looked for by its address (and may not come).
            if self._its_events:
                await self._gather(
                    until=lambda: after.started or bool(after.downloads),
                    seconds=min(DOWNLOAD_START_TIMEOUT, deadline - time.monotonic()),
                )
            if not after.started and not after.downloads:
                after.downloads.append(self._download)
                unconfirmed = frozenset({self._download})
        if after.started or after.frames_loading:
            await self._ctx.progress(0, None, f"waiting for {after.url or 'the new page'}")
            await self._gather(until=lambda: after.settled, seconds=deadline - time.monotonic())
        if not after.named_tabs:
            await self._gather(
                until=lambda: after.named_tabs,
                seconds=min(NEW_TAB_TIMEOUT, max(0.0, deadline - time.monotonic())),
            )
        if after.opened:
            for tab in after.opened:
                self._ctx.adopt(tab)
        followed = await self._where()
        if after.downloads:
            said = await download.follow_all(
                self._ctx, after.downloads, self._began, unconfirmed=unconfirmed
            )
            followed = replace(followed, downloaded=tuple(said))
        return followed

    async def _find_main_frame(self) -> None:
        """Which frame is the tab's own. Asked after the action, not before: a page that a
        dialog blocks does not answer until the dialog is answered (the main frame keeps its
        id across navigations, so the events gathered meanwhile still match)."""
        with contextlib.suppress(TabrelayError, KeyError, TypeError):
            tree = await self._ctx.cdp("Page.getFrameTree", timeout=2.0)
            self.aftermath.main_frame = str(tree["frameTree"]["frame"]["id"])

    def _take(self) -> None:
        for event in self._subscription.drain():
            self.aftermath.feed(event)

    async def _gather(self, *, until: Callable[[], bool], seconds: float) -> None:
        """Feed events until ``until()`` holds or ``seconds`` pass."""
        self._take()
        if until() or seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while not until():
                    try:
                        batch = await self._subscription.wait()
                    except EventsClosed:
                        return
                    for event in batch:
                        self.aftermath.feed(event)

    async def _probe(self) -> None:
        """One round trip through the page's task queue (a gone document ends it early). When
        the action started nothing, it is the tool's last command: the tab comes with its answer,
        so the look the endpoint takes after the tool (the guard's) needs no round trip."""
        with contextlib.suppress(TabrelayError):
            await self._ctx.cdp(
                "Runtime.evaluate",
                {"expression": _PROBE, "awaitPromise": True, "returnByValue": True},
                timeout=2.0,
                with_tab=True,
            )

    async def _where(self) -> Followed:
        after = self.aftermath
        if after.closed or not (after.moved or after.started or after.opened or after.frames):
            return Followed(after)
        stopped = self._ctx.state.log.stopped  # emptied as the action began (``following``)
        try:
            answer = await self._ctx.cdp(
                "Runtime.evaluate", {"expression": _WHERE, "returnByValue": True}, timeout=2.0
            )
            url, title, state = answer["result"]["value"]
        # A page still between documents has no context to ask: say what the events said.
        except (TabrelayError, KeyError, TypeError, ValueError):
            return Followed(after, url=after.url, stopped=stopped)
        return Followed(
            after, url=str(url), title=str(title), ready_state=str(state), stopped=stopped
        )


@contextlib.asynccontextmanager
async def following(
    ctx: ToolContext, *, download: str | None = None, its_events: bool = True
) -> AsyncIterator[ActionWatch]:
    """Watch the tab while the body acts on it; ``await watch.after()`` then follows what the
    action started. Subscribed before the body runs, so no event is missed. ``download``: the
    address of the link with a download attribute it clicks, whose download is waited for;
    ``its_events``: the element is in a frame whose events the tab's are (not one of another
    process)."""
    browser, tab = ctx.need_browser(), ctx.need_tab()
    wanted = frozenset(_FOLLOWED)

    def accept(event: HubEvent) -> bool:
        if event.browser_id != browser.id:
            return False
        if event.kind == "tab":
            return event.method in ("created", "updated", "removed")
        return (
            event.kind == "cdp"
            and event.tab_id == tab.id
            and event.method in wanted
            and event.session_id is None  # the tab's own, not a frame's in another process
        )

    subscription = ctx.hub.subscribe(maxlen=2000, accept=accept)
    ctx.state.log.stopped = None  # what the guard stops from now on is this action's doing
    try:
        # A download it begins waits for its aftermath's word, or for this call's, as it ends.
        async with browser.held.acting(functools.partial(settle_download, ctx)):
            yield ActionWatch(
                ctx, subscription, Aftermath(tab.id), download=download, its_events=its_events
            )
    finally:
        subscription.close()


async def after_action(text: str, watch: ActionWatch, dialog: dict[str, Any] | None) -> ToolResult:
    """An acting tool's result: what it did, and where that left the tab — after waiting for
    the page it started to load — or the dialog that now blocks the page (the response says
    either, ``tools.response``)."""
    if dialog is not None:
        return ToolResult(text, dialog=dialog)
    return ToolResult(text, followed=await watch.after())
