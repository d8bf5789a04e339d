"""A navigation the tab's debugger session ends under: Chrome's PDF viewer (another extension)
takes the debugger away from a tab while a PDF loads, and a ``Page.navigate`` in flight then fails
with "Detached while handling command." (seen in CI: an agent navigating a tab that had just
opened a PDF). The extension attaches again; the app opens the address once more in the new
session, guarded as the first was, and never more than once. Any other failure stays an error.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from mcp_types import CallToolResult

from support.fake_extension import ExtensionError, FakeExtension
from support.harness import allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths

URL = "https://example.com/next"
DETACHED = "The debugger was detached from tab 1 (Detached while handling command.)"


async def navigate_detached(
    home: Paths, times: int, *, code: str | None = "detached"
) -> tuple[CallToolResult, FakeExtension]:
    """browser_navigate to ``URL`` in a fake browser whose first ``times`` navigations end its
    debugger session under them, failing with ``code`` (it is attached again for the next
    command, as the extension does); the answer, and the browser."""
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        navigate = extension.cdp_handlers["Page.navigate"]
        failures = [times]

        async def detached(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            if failures[0] <= 0:
                return await navigate(tab_id, args)
            failures[0] -= 1
            extension.attached.discard(tab_id)
            await extension.send({"type": "status", "attachedTabs": sorted(extension.attached)})
            raise ExtensionError(DETACHED, code=code)

        extension.cdp_handlers["Page.navigate"] = detached
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": URL})
    return said, extension


def sent(extension: FakeExtension) -> list[str]:
    """The CDP methods sent to tab 1, with Page.navigate's address."""
    return [
        f"{m} {a['url']}" if m == "Page.navigate" else m
        for t, m, a in extension.cdp_calls
        if t == 1
    ]


async def test_a_navigation_the_session_ended_under_is_sent_once_more_guarded_again(
    home: Paths,
) -> None:
    said, extension = await navigate_detached(home, 1)
    assert not said.is_error, text_of(said)
    assert text_of(said) == f"Page at {URL} — {URL}"
    methods = sent(extension)
    first, second = (n for n, m in enumerate(methods) if m == f"Page.navigate {URL}")
    # The new session holds the tab's loads for the guard, and tells its load, before the
    # address is opened in it again.
    assert {"Fetch.enable", "Page.enable"} <= set(methods[first + 1 : second]), methods


async def test_a_navigation_the_session_ends_under_twice_says_so_and_is_not_sent_a_third_time(
    home: Paths,
) -> None:
    said, extension = await navigate_detached(home, 2)
    assert said.is_error
    assert DETACHED in text_of(said), text_of(said)
    assert sent(extension).count(f"Page.navigate {URL}") == 2


@pytest.mark.parametrize("code", ["canceled_by_user", "restricted_url", None])
async def test_a_navigation_that_fails_any_other_way_is_not_sent_again(
    home: Paths, code: str | None
) -> None:
    said, extension = await navigate_detached(home, 1, code=code)
    assert said.is_error
    assert sent(extension).count(f"Page.navigate {URL}") == 1


PDF = "https://example.com/files/invoice.pdf"


async def navigate_while_the_session_ends(
    home: Paths, *, committed: bool, mime: str = "application/pdf"
) -> tuple[CallToolResult, FakeExtension, float]:
    """browser_navigate to ``PDF`` in a fake browser whose debugger session ends after
    ``Page.navigate`` answered, as Chrome's PDF viewer ends a tab's whose PDF still loads. With
    ``committed`` the new document commits before the new session is prepared (its events are
    lost with the session); else the new session tells its commit and load. The answer, the
    browser, and how long the call took."""
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        tab = extension.tabs[1]
        running: set[asyncio.Task[None]] = set()
        answered_tree = asyncio.Event()

        async def navigate(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            async def later() -> None:
                await asyncio.sleep(0.05)
                extension.attached.discard(tab_id)
                await extension.send({"type": "status", "attachedTabs": []})
                if committed:
                    tab["url"], tab["title"] = args["url"], "Invoice INV-1"
                    await extension.send(
                        {"type": "tab_event", "event": "updated", "tab": dict(tab)}
                    )
                    return
                await answered_tree.wait()  # the app looked: the commit is told in the new session
                tab["url"], tab["title"] = args["url"], "Invoice INV-1"
                frame = {"id": "main", "loaderId": "loader-2", "url": args["url"], "mimeType": mime}
                await extension.cdp_event(
                    tab_id, "Page.frameNavigated", {"frame": frame, "type": "Navigation"}
                )
                await extension.send({"type": "tab_event", "event": "updated", "tab": dict(tab)})
                await extension.cdp_event(tab_id, "Page.loadEventFired", {"timestamp": 2.0})

            task = asyncio.ensure_future(later())
            running.add(task)
            task.add_done_callback(running.discard)
            return {"frameId": "main", "loaderId": "loader-2"}

        async def frame_tree(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            loader = "loader-2" if committed else "loader-1"
            frame = {"id": "main", "loaderId": loader, "url": tab["url"], "mimeType": mime}
            if any(m == "Page.navigate" for _, m, _ in extension.cdp_calls):
                answered_tree.set()
            return {"frameTree": {"frame": frame}}

        async def evaluate(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            return {"result": {"type": "string", "value": "complete"}}

        extension.cdp_handlers |= {
            "Page.navigate": navigate,
            "Page.getFrameTree": frame_tree,
            "Runtime.evaluate": evaluate,
        }
        async with mcp_client(app.base_mcp(), await app.add_client()) as client:
            started = time.monotonic()
            said = await client.call_tool("browser_navigate", {"tab_id": 1, "url": PDF})
            took = time.monotonic() - started
    return said, extension, took


@pytest.mark.parametrize("committed", [True, False])
async def test_a_navigation_whose_session_ends_before_it_is_told_arrives_in_the_new_one(
    home: Paths, committed: bool
) -> None:
    said, extension, took = await navigate_while_the_session_ends(home, committed=committed)
    assert text_of(said) == f"Invoice INV-1 — {PDF} (a PDF: browser_get_content reads its text)"
    assert took < 5, took  # not the 30 s of the navigation's timeout
    methods = sent(extension)
    navigated = methods.index(f"Page.navigate {PDF}")
    looked = methods.index("Page.getFrameTree", navigated)
    # The new session holds the tab's loads for the guard before anything is read in it.
    assert "Fetch.enable" in methods[navigated:looked], methods


async def test_a_page_that_loaded_while_its_session_was_lost_is_read_as_loaded(
    home: Paths,
) -> None:
    said, _, took = await navigate_while_the_session_ends(home, committed=True, mime="text/html")
    assert text_of(said) == f"Invoice INV-1 — {PDF}"
    assert took < 5, took
