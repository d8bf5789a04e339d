"""The navigation guard for the whole life of an agent-driven tab (DESIGN §4.8).

Checking a URL when an agent opens it is not enough: a page can redirect, refresh itself, assign
``location``, post a form or open a window to anywhere. Tabs an agent uses hold their document
requests (``sessions.py`` enables the Fetch domain for them); this releases each paused request
the guard admits and fails the others, so a blocked page never loads, a blocked frame stays
empty and a redirect chain stops at its first blocked hop. A window opened by a guarded tab is
guarded at once and sent to about:blank if it was headed somewhere blocked. What was stopped
becomes an alert for the person. A frame of another process that Tabrelay attached to
(``child_sessions``) loads its documents through its own session: they are held there too. The
decision is ``NavigationGuard``'s, the one implementation every tool uses. A server's redirect
of the tab's page to a site the agent's last acting call was not allowed to reach is stopped
too, unless a rule or that client's plan lets the call go there (``may_go``: the approval gate's
word): its address can carry data out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from tabrelay.errors import EventsClosed, TabrelayError
from tabrelay.protocol.messages import TabInfo
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.tools.state.guard import NavigationGuard, origin_of
from tabrelay.tools.state.sessions import GUARD_DOMAIN, GUARD_FEATURE, GUARD_PATTERNS, TabSessions
from tabrelay.tools.state.tab_state import ATTACHED, AUTO_ATTACH, Reach, TabStates

logger = logging.getLogger(__name__)

PAUSED = "Fetch.requestPaused"
ALERT_EVERY = 30.0  # seconds: at most one alert per tab (a page may embed many blocked frames)
_HEADED = 256  # held page loads remembered, for the redirects that follow them
_NOT_A_PAGE = "a redirect to an address that is not a web page (only http and https are followed)"


def _same_site(site: str, sites: frozenset[str]) -> bool:
    """``site`` is one of ``sites``, or one of them with ``www.`` added or taken away or moved
    from http to https: the same site to a person."""
    scheme, _, host = site.partition("://")
    for other in sites:
        their_scheme, _, their_host = other.partition("://")
        same_host = host.removeprefix("www.") == their_host.removeprefix("www.")
        if same_host and scheme in (their_scheme, "https"):
            return True
    return False


class NavigationInterceptor:
    def __init__(
        self,
        hub: EventHub,
        registry: BrowserRegistry,
        sessions: TabSessions,
        tabs: TabStates,
        *,
        guard: Callable[[], NavigationGuard],
        may_go: Callable[[Reach, str], bool],
    ) -> None:
        self._hub = hub
        self._registry = registry
        self._sessions = sessions
        self._tabs = tabs
        self._guard = guard
        self._may_go = may_go
        # The site each held page load of a tab with a reach was headed for, by request id:
        # a redirect that stays on the site it came from is not leaving anywhere.
        self._headed: OrderedDict[str, str] = OrderedDict()
        self._subscription = hub.subscribe(
            maxlen=10_000,
            accept=lambda e: (
                (e.kind == "cdp" and e.method in (PAUSED, ATTACHED))
                or (e.kind == "tab" and e.method in ("created", "updated"))
            ),
            # A handed-over tab is muted, but its loads still wait here to pass the guard.
            hears_muted=True,
        )
        self._answers: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Answer paused requests and guard new windows until the hub closes."""
        try:
            with contextlib.suppress(EventsClosed):
                while True:
                    for event in await self._subscription.wait(limit=1000):
                        self._handle(event)
        finally:
            for task in list(self._answers):
                task.cancel()
            await asyncio.gather(*self._answers, return_exceptions=True)

    def close(self) -> None:
        self._subscription.close()

    def _handle(self, event: HubEvent) -> None:
        browser = self._registry.get(event.browser_id)
        if browser is None or event.tab_id is None:
            return
        if event.kind == "cdp" and event.method == ATTACHED:
            work = self._guard_frame(browser, event.tab_id, event.params)
        elif event.kind == "cdp":
            work = self._answer(browser, event.tab_id, event.params, event.session_id)
        else:
            work = self._guard_window(browser, TabInfo.from_wire(event.params))
        task = asyncio.get_running_loop().create_task(work)
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _guard_frame(self, browser: Browser, tab_id: int, attached: dict[str, Any]) -> None:
        """A frame of a guarded tab that runs in another process (``child_sessions``) loads its
        documents through its own session once Tabrelay is attached to it: hold them there too,
        and attach to the frames of other processes inside it (guarded here in turn)."""
        child = attached.get("sessionId")
        kind = (attached.get("targetInfo") or {}).get("type")
        if not isinstance(child, str) or kind != "iframe":
            return
        if not self._sessions.guarded(browser.id, tab_id) or GUARD_FEATURE not in browser.features:
            return
        try:
            await browser.cdp(
                tab_id, f"{GUARD_DOMAIN}.enable", {"patterns": GUARD_PATTERNS}, session_id=child
            )
            await browser.cdp(tab_id, "Target.setAutoAttach", AUTO_ATTACH, session_id=child)
            state = self._tabs.get(browser.id, tab_id)
            if state is not None:
                state.session.auto_attached.add(child)
        except TabrelayError as error:  # the frame went away meanwhile
            logger.debug("could not guard a frame of tab %s: %s", tab_id, error)

    async def _answer(
        self, browser: Browser, tab_id: int, paused: dict[str, Any], session: str | None
    ) -> None:
        request_id = paused.get("requestId")
        url = str((paused.get("request") or {}).get("url", ""))
        if not isinstance(request_id, str):
            return
        try:
            reason = self._guard().refusal(url) or self._elsewhere(browser, tab_id, paused)
        except Exception:  # a bug must not leave the page's load held forever: fail it
            logger.exception("could not judge the load of %s in tab %s", url[:200], tab_id)
            reason = "Tabrelay could not judge this load"
        try:
            if reason is not None:  # known before Chrome answers the navigation that failed
                self._stopped(browser, tab_id, url, reason)
            if reason is None:
                await browser.cdp(
                    tab_id, "Fetch.continueRequest", {"requestId": request_id}, session_id=session
                )
            else:
                await browser.cdp(
                    tab_id,
                    "Fetch.failRequest",
                    {"requestId": request_id, "errorReason": "BlockedByClient"},
                    session_id=session,
                )
        # The tab closed, navigated on or lost its session: the request went with it.
        except TabrelayError as error:
            logger.debug("paused request %s not answered: %s", request_id, error)

    def _elsewhere(self, browser: Browser, tab_id: int, paused: dict[str, Any]) -> str | None:
        """Why a server's redirect of the tab's page may not be followed, while an acting call
        may take the tab somewhere (its reach): it leaves the site it came from for one the call
        was not allowed to reach, and no rule or plan of that client lets the call go there
        (the address can carry data out); None if it may. Frames' loads, and the loads a call
        or a page starts, are judged by the guard alone."""
        state = self._tabs.get(browser.id, tab_id)
        if state is None or state.reach is None:
            return None
        # ``main_frame`` is known from when the tab was guarded (sessions.py): no command is
        # answered while a load is held here. Unknown, every load is judged as the page's.
        if state.main_frame is not None and paused.get("frameId") != state.main_frame:
            return None
        reach, url = state.reach, str((paused.get("request") or {}).get("url", ""))
        redirected = str(paused.get("redirectedRequestId") or "")
        site = origin_of(url)
        if site is None:  # mailto:, a custom scheme…: only http(s) pages may be gone to
            return _NOT_A_PAGE if redirected else None
        came_from = self._headed.pop(redirected, None) if redirected else None
        self._headed[str(paused["requestId"])] = site
        while len(self._headed) > _HEADED:
            self._headed.popitem(last=False)
        if (
            not redirected  # the load the call or the page started: judged when it was asked
            or site == came_from  # a redirect within the site it came from
            or _same_site(site, reach.sites)
            or self._may_go(reach, site)
        ):
            return None
        return (
            f"a redirect to another site, where {reach.tool} is not allowed for this client "
            "(the address can carry data there); to go there, open it with browser_navigate, "
            "which asks the person and shows them the whole address"
        )

    async def _guard_window(self, browser: Browser, tab: TabInfo) -> None:
        """A window opened by a guarded tab: guard it too, and stop it while it is headed for
        a blocked site. Its first request can leave before its session exists, so its URL is
        watched as it changes; the page is sent away before it commits."""
        if tab.opener_id is None or not self._sessions.guarded(browser.id, tab.opener_id):
            return
        reason = self._guard().refusal(tab.url)
        try:
            if reason is not None:
                await browser.navigate(tab.id, "about:blank")
                self._stopped(browser, tab.id, tab.url, reason)
            if not self._sessions.guarded(browser.id, tab.id):
                await self._sessions.prepare(browser, tab.id, guard=True)
        except TabrelayError as error:
            logger.info(
                "could not guard tab %s, opened by tab %s: %s", tab.id, tab.opener_id, error
            )

    def _stopped(self, browser: Browser, tab_id: int, url: str, reason: str) -> None:
        message = f"Stopped tab {tab_id} from loading {url[:200]}: {reason}"
        logger.warning("%s", message)
        state = self._tabs.tab(browser.id, tab_id)
        state.log.stopped = (url, reason)
        now = time.monotonic()
        if state.alerted is not None and now - state.alerted < ALERT_EVERY:
            return
        state.alerted = now
        self._hub.publish(
            HubEvent("alert", browser.id, "navigation_blocked", tab_id, {"message": message})
        )
