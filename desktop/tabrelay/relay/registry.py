"""The registry of connected browsers, which tells its listeners when one comes, goes or changes.

Listeners are plain callbacks run synchronously; the Qt bridge and the MCP resources subscribe
here. Resolving "which browser" for a tool lives here too, since it depends on who is connected.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Literal

from tabrelay.errors import DuplicateBrowser, NoBrowserError
from tabrelay.listeners import Listeners
from tabrelay.relay.browser import Browser

logger = logging.getLogger(__name__)

Change = Literal["connected", "disconnected", "updated"]
RELEASE_TIMEOUT = 1.0  # quitting waits at most this for browsers to let their tabs go
Listener = Callable[[Change, Browser], None]


class BrowserRegistry:
    def __init__(self) -> None:
        self._browsers: dict[str, Browser] = {}
        self._listeners: Listeners[[Change, Browser]] = Listeners("the browser registry")

    def __len__(self) -> int:
        return len(self._browsers)

    def all(self) -> list[Browser]:
        return list(self._browsers.values())

    def get(self, browser_id: str) -> Browser | None:
        return self._browsers.get(browser_id)

    def resolve(self, browser_id: str | None = None) -> Browser:
        """The browser a tool means: by id, or the only one connected.

        Raises:
            NoBrowserError: none connected, an unknown id, or several and no id given.
        """
        if browser_id is not None:
            browser = self._browsers.get(browser_id)
            if browser is None:
                known = ", ".join(self._browsers) or "none"
                raise NoBrowserError(f"no browser with id {browser_id!r} (connected: {known})")
            return browser
        if not self._browsers:
            raise NoBrowserError(
                "no browser connected: open Chrome with the Tabrelay extension and pair it"
            )
        if len(self._browsers) > 1:
            choices = ", ".join(f"{b.id} ({b.name})" for b in self._browsers.values())
            raise NoBrowserError(
                f"several browsers are connected; pass 'browser', one of: {choices}"
            )
        return next(iter(self._browsers.values()))

    def add(self, browser: Browser) -> None:
        """Take in a newly connected browser.

        Raises:
            DuplicateBrowser: another connection holds this browser id (it must be dropped
                first): overwriting it would leave a connection no revoke could find.
        """
        existing = self._browsers.get(browser.id)
        if existing is browser:
            return
        if existing is not None:
            raise DuplicateBrowser(f"browser {browser.id} is already connected")
        self._browsers[browser.id] = browser
        self._notify("connected", browser)

    def remove(self, browser: Browser) -> None:
        if self._browsers.get(browser.id) is browser:
            del self._browsers[browser.id]
            self._notify("disconnected", browser)

    def updated(self, browser: Browser) -> None:
        if self._browsers.get(browser.id) is browser:
            self._notify("updated", browser)

    async def release_tabs(self, *, timeout: float = RELEASE_TIMEOUT) -> None:
        """Ask every browser to detach its tabs, at once, before the app closes: an extension
        of the seed protocol keeps them attached (Chrome's bar showing) when its app goes."""
        async with asyncio.TaskGroup() as group:
            for browser in self._browsers.values():
                group.create_task(browser.release_tabs(timeout=timeout))

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change, browser)`` on every change; returns an unsubscribe function."""
        return self._listeners.add(listener)

    def _notify(self, change: Change, browser: Browser) -> None:
        self._listeners.tell(change, browser)
