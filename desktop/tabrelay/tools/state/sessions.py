"""The debugger sessions the app keeps on tabs (DESIGN §3): domains enabled, idle detach.

A tab is attached when an agent first uses it or the person attaches it from the dashboard;
then the CDP domains the tools and the dashboard need are enabled once (Page, Runtime, Log,
Network by default, changeable per tab). A tab an agent used is also *guarded*: its document
requests (pages, frames, redirects, form posts) pause until ``interception.py`` has let them
through the navigation guard, for as long as the tab stays attached. A tab nobody used for the
idle time (a setting) is detached again, which removes Chrome's "started debugging this
browser" bar, unless something holds it (an open handoff, a demonstration: ``hold``). The
bookkeeping lives in each tab's ``TabState`` (``tab_state.py``), which dies with the tab.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable

from tabrelay.errors import BrowserError
from tabrelay.relay.browser import Browser
from tabrelay.relay.registry import BrowserRegistry, Change
from tabrelay.tools.state.tab_state import TabStates

logger = logging.getLogger(__name__)

DEFAULT_DOMAINS: tuple[str, ...] = ("Page", "Runtime", "Log", "Network")
# The tools need these whatever the dashboard shows: load events, dialogs, console errors.
TOOL_DOMAINS: tuple[str, ...] = ("Page", "Runtime")
GUARD_DOMAIN = "Fetch"
GUARD_FEATURE = "navigation.guard"
# Document requests only: every page and frame load, each redirect hop, paused before it is sent.
GUARD_PATTERNS = [{"resourceType": "Document", "requestStage": "Request"}]


class TabSessions:
    def __init__(
        self, registry: BrowserRegistry, tabs: TabStates, *, idle_minutes: Callable[[], float]
    ) -> None:
        self._registry = registry
        self._tabs = tabs
        self._idle_minutes = idle_minutes
        registry.add_listener(self._browser_changed)

    def guarded(self, browser_id: str, tab_id: int) -> bool:
        """Whether an agent drives this tab: its navigations pass the guard."""
        state = self._tabs.get(browser_id, tab_id)
        return state is not None and state.session.guarded

    def domains(self, browser_id: str, tab_id: int) -> tuple[str, ...]:
        state = self._tabs.get(browser_id, tab_id)
        chosen = state.session.domains if state is not None else None
        return DEFAULT_DOMAINS if chosen is None else chosen

    def set_domains(self, browser_id: str, tab_id: int, domains: Iterable[str]) -> None:
        """Choose the domains for a tab (the dashboard's per-tab toggles)."""
        self._tabs.tab(browser_id, tab_id).session.domains = tuple(domains)

    def hold(self, browser_id: str, tab_id: int) -> Callable[[], None]:
        """Keep the tab's session from the idle detach (a handoff is open on it, a demonstration
        records it) until the returned release is called; calling it again does nothing. A tab
        that closes takes its holds with it."""
        session = self._tabs.tab(browser_id, tab_id).session
        session.holds += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                session.holds -= 1
                session.last_used = time.monotonic()  # idle from now, not from before the hold

        return release

    def held(self, browser_id: str, tab_id: int) -> bool:
        state = self._tabs.get(browser_id, tab_id)
        return state is not None and state.session.holds > 0

    async def prepare(self, browser: Browser, tab_id: int, *, guard: bool = False) -> None:
        """Attach (if needed) and enable the tab's domains that are not enabled yet; with
        ``guard`` (an agent uses the tab), hold its document requests for the guard from now on.

        Raises:
            BrowserError: the tab cannot be attached (closed, a chrome:// page…).
        """
        state = self._tabs.tab(browser.id, tab_id)
        session = state.session
        session.last_used = time.monotonic()
        if guard:
            session.guarded = True
        # Only an extension that lets held loads through when the app is gone may hold them:
        # with another (the seed protocol's), tools still check each tab before and after.
        holds = session.guarded and GUARD_FEATURE in browser.features
        guarded = (GUARD_DOMAIN,) if holds else ()
        chosen = DEFAULT_DOMAINS if session.domains is None else session.domains
        wanted = tuple(dict.fromkeys((*TOOL_DOMAINS, *guarded, *chosen)))
        enabled = session.enabled
        newly_held = holds and GUARD_DOMAIN not in enabled
        for domain in wanted:
            if domain not in enabled:
                params = {"patterns": GUARD_PATTERNS} if domain == GUARD_DOMAIN else None
                await browser.cdp(tab_id, f"{domain}.enable", params)
                enabled.add(domain)
        for domain in sorted(enabled - set(wanted)):
            await browser.cdp(tab_id, f"{domain}.disable")
            enabled.discard(domain)
        if newly_held and state.main_frame is None:  # to tell the page's loads from its frames'
            # A page a dialog blocks does not answer: unknown, every load is judged as the page's.
            with contextlib.suppress(BrowserError, KeyError, TypeError):
                tree = await browser.cdp(tab_id, "Page.getFrameTree", timeout=2.0)
                state.main_frame = str(tree["frameTree"]["frame"]["id"])

    async def attach(self, browser: Browser, tab_id: int) -> None:
        """The person attached a tab from the dashboard."""
        await browser.attach(tab_id)
        self._tabs.tab(browser.id, tab_id).session.fresh()
        await self.prepare(browser, tab_id)

    async def detach(self, browser: Browser, tab_id: int) -> None:
        self._forget(browser.id, tab_id)
        await browser.detach(tab_id)

    async def detach_idle(self) -> int:
        """Detach tabs unused for the idle time; how many were detached."""
        minutes = self._idle_minutes()
        if minutes <= 0:
            return 0
        cutoff = time.monotonic() - minutes * 60
        detached = 0
        for state in self._tabs:
            (browser_id, tab_id), used = state.key, state.session.last_used
            browser = self._registry.get(browser_id)
            if used is None or used > cutoff or browser is None or state.session.holds > 0:
                continue
            if tab_id not in browser.attached_tabs:
                continue
            try:
                await self.detach(browser, tab_id)
                detached += 1
                logger.info("detached idle tab %s of browser %s", tab_id, browser_id)
            except BrowserError as error:
                logger.info("could not detach idle tab %s: %s", tab_id, error)
                self._forget(browser_id, tab_id)
        return detached

    async def run_idle_detach(self, *, interval: float = 30.0) -> None:
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(BrowserError):
                await self.detach_idle()

    def _forget(self, browser_id: str, tab_id: int) -> None:
        state = self._tabs.get(browser_id, tab_id)
        if state is not None:
            state.session.reset()

    def _browser_changed(self, change: Change, browser: Browser) -> None:
        """A tab the extension no longer reports as attached starts from scratch next time
        (a disconnected browser's tabs lose all their state: ``TabStates`` drops it)."""
        if change == "disconnected":
            return
        for state in self._tabs.of_browser(browser.id):
            session = state.session
            if state.key[1] not in browser.attached_tabs and (
                session.enabled or session.last_used is not None
            ):
                session.reset()
