"""The navigation guard for the whole life of an agent-driven tab (DESIGN §4.8).

Checking a URL when an agent opens it is not enough: a page can redirect, refresh itself,
assign ``location``, post a form or open a window to anywhere. Tabs an agent uses hold their
document requests (``sessions.py`` enables the Fetch domain for them); this releases each paused
request the guard admits and fails the others, so a blocked page never loads, a blocked frame
stays empty and a redirect chain stops at its first blocked hop. A window opened by a guarded
tab is guarded at once and sent to about:blank if it was headed somewhere blocked. What was
stopped becomes an alert for the person. The decision is ``NavigationGuard``'s, the one
implementation every tool uses. A server's redirect of the tab's page to a site the agent's
last acting call was not allowed to reach is stopped too, unless a rule or that client's plan
lets the call go there (``may_go``: the approval gate's word): its address can carry data out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from tabrelay.errors import EventsClosed, TabrelayError
from tabrelay.protocol.messages import TabInfo
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.tools.guard import NavigationGuard, origin_of
from tabrelay.tools.sessions import TabSessions
from tabrelay.tools.tab_state import Reach, TabStates

logger = logging.getLogger(__name__)

PAUSED = "Fetch.requestPaused"
ALERT_EVERY = 30.0  # seconds: at most one alert per tab (a page may embed many blocked frames)


class NavigationInterceptor:
    def __init__(
        self,
        hub: EventHub,
        registry: BrowserRegistry,
        sessions: TabSessions,
        tabs: TabStates,
        *,
        guard: Callable[[], NavigationGuard],
        may_go: Callable[[Reach, str], bool] = lambda reach, site: True,
    ) -> None:
        self._hub = hub
        self._registry = registry
        self._sessions = sessions
        self._tabs = tabs
        self._guard = guard
        self._may_go = may_go
        self._subscription = hub.subscribe(
            maxlen=10_000,
            accept=lambda e: (
                (e.kind == "cdp" and e.method == PAUSED)
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
        if event.kind == "cdp":
            work = self._answer(browser, event.tab_id, event.params)
        else:
            work = self._guard_window(browser, TabInfo.from_wire(event.params))
        task = asyncio.get_running_loop().create_task(work)
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _answer(self, browser: Browser, tab_id: int, paused: dict[str, Any]) -> None:
        request_id = paused.get("requestId")
        url = str((paused.get("request") or {}).get("url", ""))
        if not isinstance(request_id, str):
            return
        try:
            reason = self._guard().refusal(url) or await self._elsewhere(browser, tab_id, paused)
            if reason is not None:  # known before Chrome answers the navigation that failed
                self._stopped(browser, tab_id, url, reason)
            if reason is None:
                await browser.cdp(tab_id, "Fetch.continueRequest", {"requestId": request_id})
            else:
                await browser.cdp(
                    tab_id,
                    "Fetch.failRequest",
                    {"requestId": request_id, "errorReason": "BlockedByClient"},
                )
        # The tab closed, navigated on or lost its session: the request went with it.
        except TabrelayError as error:
            logger.debug("paused request %s not answered: %s", request_id, error)

    async def _elsewhere(self, browser: Browser, tab_id: int, paused: dict[str, Any]) -> str | None:
        """Why a server's redirect of the tab's page may not be followed: it goes to a site the
        agent's last acting call on the tab was not allowed to reach, and no rule or plan of
        that client lets the call go there (the address can carry data out); None if it may.
        Page-initiated loads and frames are the page's own doing, judged by the guard alone."""
        state = self._tabs.get(browser.id, tab_id)
        reach = state.reach if state is not None else None
        if state is None or reach is None or not paused.get("redirectedRequestId"):
            return None
        site = origin_of(str((paused.get("request") or {}).get("url", "")))
        # The same host moved to https is the same site to a person.
        if not site or site in reach.sites or site.replace("https:", "http:", 1) in reach.sites:
            return None
        if self._may_go(reach, site):
            return None
        # A frame's redirect is the page's own doing, not where the agent goes. (No command can
        # ask which frame is the tab's: Chrome answers none while the navigation waits here.)
        if state.main_frame is not None and paused.get("frameId") != state.main_frame:
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
