"""The debugger sessions the app keeps on tabs (DESIGN §3): domains enabled, idle detach.

A tab is attached when an agent first uses it or the person attaches it from the dashboard;
then the CDP domains the tools and the dashboard need are enabled once (Page, Runtime, Log,
Network by default, changeable per tab). A tab an agent used is also *guarded*: its document
requests (pages, frames, redirects, form posts) pause until ``interception.py`` has let them
through the navigation guard, for as long as the tab stays attached. A tab nobody used for the
idle time (a setting) is detached again, which removes Chrome's "started debugging this
browser" bar.
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

logger = logging.getLogger(__name__)

DEFAULT_DOMAINS: tuple[str, ...] = ("Page", "Runtime", "Log", "Network")
# The tools need these whatever the dashboard shows: load events, dialogs, console errors.
TOOL_DOMAINS: tuple[str, ...] = ("Page", "Runtime")
GUARD_DOMAIN = "Fetch"
GUARD_FEATURE = "navigation.guard"
# Document requests only: every page and frame load, each redirect hop, paused before it is sent.
GUARD_PATTERNS = [{"resourceType": "Document", "requestStage": "Request"}]
Key = tuple[str, int]  # (browser id, tab id)


class TabSessions:
    def __init__(self, registry: BrowserRegistry, *, idle_minutes: Callable[[], float]) -> None:
        self._registry = registry
        self._idle_minutes = idle_minutes
        self._enabled: dict[Key, set[str]] = {}
        self._wanted: dict[Key, tuple[str, ...]] = {}
        self._last_used: dict[Key, float] = {}
        self._guarded: set[Key] = set()
        registry.add_listener(self._browser_changed)

    def guarded(self, browser_id: str, tab_id: int) -> bool:
        """Whether an agent drives this tab: its navigations pass the guard."""
        return (browser_id, tab_id) in self._guarded

    def domains(self, browser_id: str, tab_id: int) -> tuple[str, ...]:
        return self._wanted.get((browser_id, tab_id), DEFAULT_DOMAINS)

    def set_domains(self, browser_id: str, tab_id: int, domains: Iterable[str]) -> None:
        """Choose the domains for a tab (the dashboard's per-tab toggles)."""
        self._wanted[(browser_id, tab_id)] = tuple(domains)

    async def prepare(self, browser: Browser, tab_id: int, *, guard: bool = False) -> None:
        """Attach (if needed) and enable the tab's domains that are not enabled yet; with
        ``guard`` (an agent uses the tab), hold its document requests for the guard from now on.

        Raises:
            BrowserError: the tab cannot be attached (closed, a chrome:// page…).
        """
        key = (browser.id, tab_id)
        self._last_used[key] = time.monotonic()
        if guard:
            self._guarded.add(key)
        # Only an extension that lets held loads through when the app is gone may hold them:
        # with another (the seed protocol's), tools still check each tab before and after.
        holds = key in self._guarded and GUARD_FEATURE in browser.features
        guarded = (GUARD_DOMAIN,) if holds else ()
        wanted = tuple(dict.fromkeys((*TOOL_DOMAINS, *guarded, *self.domains(*key))))
        enabled = self._enabled.setdefault(key, set())
        for domain in wanted:
            if domain not in enabled:
                params = {"patterns": GUARD_PATTERNS} if domain == GUARD_DOMAIN else None
                await browser.cdp(tab_id, f"{domain}.enable", params)
                enabled.add(domain)
        for domain in sorted(enabled - set(wanted)):
            await browser.cdp(tab_id, f"{domain}.disable")
            enabled.discard(domain)

    async def attach(self, browser: Browser, tab_id: int) -> None:
        """The person attached a tab from the dashboard."""
        await browser.attach(tab_id)
        self._enabled.pop((browser.id, tab_id), None)  # a fresh session has nothing enabled
        await self.prepare(browser, tab_id)

    async def detach(self, browser: Browser, tab_id: int) -> None:
        self._forget((browser.id, tab_id))
        await browser.detach(tab_id)

    async def detach_idle(self) -> int:
        """Detach tabs unused for the idle time; how many were detached."""
        minutes = self._idle_minutes()
        if minutes <= 0:
            return 0
        cutoff = time.monotonic() - minutes * 60
        detached = 0
        for key, used in list(self._last_used.items()):
            browser = self._registry.get(key[0])
            if used > cutoff or browser is None or key[1] not in browser.attached_tabs:
                continue
            try:
                await self.detach(browser, key[1])
                detached += 1
                logger.info("detached idle tab %s of browser %s", key[1], key[0])
            except BrowserError as error:
                logger.info("could not detach idle tab %s: %s", key[1], error)
                self._forget(key)
        return detached

    async def run_idle_detach(self, *, interval: float = 30.0) -> None:
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(BrowserError):
                await self.detach_idle()

    def _forget(self, key: Key) -> None:
        self._enabled.pop(key, None)
        self._last_used.pop(key, None)
        self._guarded.discard(key)

    def _browser_changed(self, change: Change, browser: Browser) -> None:
        """A tab the extension no longer reports as attached starts from scratch next time."""
        for key in [k for k in self._enabled if k[0] == browser.id]:
            if change == "disconnected" or key[1] not in browser.attached_tabs:
                self._forget(key)
