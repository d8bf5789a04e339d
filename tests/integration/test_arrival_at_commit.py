"""A navigation whose arrival is its commit: a PDF (Chrome's viewer takes the tab's debugger away
while it loads, so no load event is told) or a page restored from the back/forward cache. Chrome's
tab says where it is a moment after the renderer's commit event (20–70 ms for a PDF in
Chromium 156), so the call waits for the tab to say so: its answer, the guard's look after it and
the next call's approval all read the tab. A tab that never says so is read as it is, after a
bounded wait; a call cancelled during that wait leaves nothing behind. The load event of the
document being left (a PDF whose viewer was still loading) is not the arrival.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from support.fake_extension import FakeExtension
from support.harness import RelayHarness, allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore
from tabrelay.endpoint.calls import Caller
from tabrelay.tools.acting.loading import TAB_CATCHES_UP
from tabrelay.tools.catalog import BY_NAME

LAG = 0.3  # seconds between the commit event and the tab's word: longer than Chrome's
PDF = "https://example.com/files/invoice.pdf"


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


def commit_first(
    extension: FakeExtension,
    url: str,
    *,
    mime: str = "application/pdf",
    restored: bool = False,
    tells: bool = True,
    stale_load: bool = False,
) -> None:
    """Navigations of the fake browser commit ``url`` (a PDF, or a page the back/forward cache
    restores) with the renderer's event first and the tab's word ``LAG`` later (never, unless
    ``tells``), and fire no load event, as Chrome's viewer does; with ``stale_load``, the
    document being left fires its load event ``LAG`` before the commit."""

    running: set[asyncio.Task[None]] = set()

    async def commit(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        tab = extension.tabs[tab_id]

        async def later() -> None:
            if stale_load:  # the document being left finishes loading first
                await extension.cdp_event(tab_id, "Page.loadEventFired", {"timestamp": 1.0})
                await asyncio.sleep(LAG)
            frame = {"id": "main", "loaderId": "loader-2", "url": url, "mimeType": mime}
            kind = "BackForwardCacheRestore" if restored else "Navigation"
            await extension.cdp_event(tab_id, "Page.frameNavigated", {"frame": frame, "type": kind})
            if tells:
                await asyncio.sleep(LAG)
                tab["url"], tab["title"] = url, "Invoice INV-1"
                await extension.send({"type": "tab_event", "event": "updated", "tab": dict(tab)})

        task = asyncio.ensure_future(later())
        running.add(task)
        task.add_done_callback(running.discard)
        return {"frameId": "main", "loaderId": "loader-2"}

    extension.cdp_handlers["Page.navigate"] = commit
    extension.cdp_handlers["Page.navigateToHistoryEntry"] = commit


async def browser(app: RelayHarness) -> FakeExtension:
    extension = await app.extension()
    await app.browser_count(1)
    return extension


async def test_a_pdf_is_arrived_at_once_the_tab_shows_it(home: Paths) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        commit_first(await browser(app), PDF)
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": PDF})
            assert not said.is_error, text_of(said)
            assert (
                text_of(said)
                == f"Invoice INV-1 — {PDF} (a PDF: browser_get_content reads its text)"
            )
            assert said.structured_content is not None
            assert said.structured_content["url"] == PDF
            # The next call's approval reads the tab where it is: it runs.
            listed = await client.call_tool("browser_list_tabs", {})
            assert PDF in text_of(listed)


async def test_a_page_restored_from_the_back_forward_cache_is_arrived_at_once_the_tab_shows_it(
    home: Paths,
) -> None:
    allow_everything(home)
    earlier = "https://example.com/earlier"
    async with running_core(home) as app:
        extension = await browser(app)
        extension.history[1] = [earlier, extension.tabs[1]["url"]]
        commit_first(extension, earlier, mime="text/html", restored=True)
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "action": "back"})
    assert not said.is_error, text_of(said)
    assert text_of(said) == f"Invoice INV-1 — {earlier}"


async def test_the_load_of_the_document_being_left_is_not_taken_for_the_arrival(
    home: Paths,
) -> None:
    """The page the tab showed (a PDF whose viewer was still loading, in CI) fires its load
    event after the navigation away began: the call waits for the new document."""
    allow_everything(home)
    async with running_core(home) as app:
        extension = await browser(app)
        commit_first(extension, PDF, stale_load=True)
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": PDF})
    assert text_of(said) == f"Invoice INV-1 — {PDF} (a PDF: browser_get_content reads its text)"


async def test_a_pdf_that_lands_on_a_blocked_site_is_caught_by_the_look_after_it(
    home: Paths,
) -> None:
    """A redirect the guard's request check did not see (the fake browser has none) commits a
    blocked site: the look after the arrival is the second line, and it reads the tab's word,
    not what it said before the navigation."""
    allow_everything(home)
    SettingsStore(home.settings_file).update(lambda s: s.navigation.block.append("blocked.example"))
    async with running_core(home) as app:
        extension = await browser(app)
        commit_first(extension, "https://blocked.example/secret.pdf")
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": PDF})
    assert said.is_error
    assert text_of(said).startswith("blocked after a redirect:"), text_of(said)
    assert "the tab was left on about:blank" in text_of(said)
    navigated = [a["url"] for t, m, a in extension.cdp_calls if m == "Page.navigate"]
    assert navigated == [PDF, "about:blank"]


async def test_a_tab_that_never_says_where_it_is_is_read_as_it_is_after_a_bounded_wait(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        commit_first(await browser(app), PDF, tells=False)
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            started = time.monotonic()
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": PDF})
            took = time.monotonic() - started
    assert not said.is_error, text_of(said)
    # What the browser says of the tab, marked as what it is: no arrival is made up.
    assert (
        text_of(said)
        == "Example — https://example.com/ (a PDF: browser_get_content reads its text)"
    )
    assert TAB_CATCHES_UP <= took < TAB_CATCHES_UP + 5


async def test_a_call_cancelled_while_it_waits_for_the_tab_leaves_nothing_behind(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        commit_first(await browser(app), PDF, tells=False)
        hub = app.core.hub
        before = hub.subscriber_count
        runner = app.core.runner
        assert runner is not None
        call = asyncio.ensure_future(
            runner.call(
                BY_NAME["browser_navigate"], {"tab_id": 1, "url": PDF}, Caller("t"), no_progress
            )
        )
        await asyncio.sleep(LAG)  # the commit event came; the call waits for the tab's word
        assert not call.done()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert hub.subscriber_count == before
        # The app still answers, and the tab is read as the browser says.
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            listed = await client.call_tool("browser_list_tabs", {})
        assert "https://example.com/" in text_of(listed)
