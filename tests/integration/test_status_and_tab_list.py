"""browser_status and browser_list_tabs tell the same story about a browser's tabs (DESIGN §5):
right after it connects, after a tab opens, and when only shared tabs are in scope."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from e2e.harness import wait_until
from support.harness import RelayHarness, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        yield harness


async def both(client: Client) -> tuple[dict[str, Any], list[int]]:
    """What browser_status says of the one browser, and the tab ids browser_list_tabs shows."""
    status = await client.call_tool("browser_status", {})
    listed = await client.call_tool("browser_list_tabs", {})
    assert not status.is_error and not listed.is_error, (text_of(status), text_of(listed))
    [browser] = status.structured_content["browsers"]  # type: ignore[index]
    ids = [t["id"] for t in listed.structured_content["tabs"]]  # type: ignore[index]
    assert f"{browser['tabs']} tabs" in text_of(status)
    return browser, ids


@pytest.mark.parametrize("seed", [False, True], ids=["tabrelay", "seed"])
async def test_status_counts_the_tabs_the_list_shows_right_after_connecting(
    app: RelayHarness, seed: bool
) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        await app.extension(seed=seed)
        await app.browser_count(1)
        browser, ids = await both(client)
    assert ids == [1, 2]
    assert browser["tabs"] == 2


@pytest.mark.parametrize("seed", [False, True], ids=["tabrelay", "seed"])
async def test_the_app_knows_a_browsers_tabs_right_after_it_connects(
    app: RelayHarness, seed: bool
) -> None:
    """The tray's status line and the Tabs page count the app's copy of the tabs: it is
    filled when the browser connects, not on an agent's first call."""
    await app.extension(seed=seed)
    await app.browser_count(1)
    [browser] = app.core.registry.all()
    await wait_until(lambda: sorted(browser.tabs) == [1, 2], timeout=5, message="tabs known")


async def test_status_and_list_agree_after_the_person_or_an_agent_opens_a_tab(
    app: RelayHarness,
) -> None:
    extension = await app.extension()
    await app.browser_count(1)
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        # The person opens a tab: the extension tells the app.
        extension.tabs[5] = {"id": 5, "windowId": 1, "url": "https://person.example/"}
        await extension.send({"type": "tab_event", "event": "created", "tab": extension.tabs[5]})
        await extension.flushed()
        browser, ids = await both(client)
        assert ids == [1, 2, 5] and browser["tabs"] == 3

        opened = await client.call_tool("browser_new_tab", {"url": "https://agent.example/"})
        assert not opened.is_error, text_of(opened)
        browser, ids = await both(client)
        assert ids == [1, 2, 5, 6] and browser["tabs"] == 4


async def test_a_tab_the_app_never_heard_of_is_counted_by_both(app: RelayHarness) -> None:
    """An extension of the seed protocol sends no tab events: both ask the browser."""
    extension = await app.extension(seed=True)
    await app.browser_count(1)
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        await both(client)
        extension.tabs[9] = {"id": 9, "windowId": 1, "url": "https://quiet.example/"}
        browser, ids = await both(client)
    assert ids == [1, 2, 9] and browser["tabs"] == 3


async def test_with_only_shared_tabs_in_scope_status_counts_only_those(
    app: RelayHarness,
) -> None:
    extension = await app.extension()
    await app.browser_count(1)
    extension.tabs[2]["shared"] = True
    extension.attached.add(1)  # attached for the person, not shared with agents
    await extension.send({"type": "status", "attachedTabs": [1]})
    await extension.flushed()
    await asyncio.to_thread(
        app.core.settings_store.update, lambda s: setattr(s, "tab_scope", "shared")
    )
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        browser, ids = await both(client)
        assert ids == [2] and browser["tabs"] == 1
        assert browser["attached_tabs"] == [], "an out-of-scope tab is not even named"
        opened = await client.call_tool("browser_new_tab", {"url": "https://agent.example/"})
        new_id = opened.structured_content["tab_id"]  # type: ignore[index]
        browser, ids = await both(client)
    assert ids == [2, new_id] and browser["tabs"] == 2


async def test_a_browser_that_does_not_list_its_tabs_still_gets_a_status_that_says_so(
    app: RelayHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tabrelay.tools.groups.tabs.STATUS_TABS_TIMEOUT", 0.2)
    extension = await app.extension()
    await app.browser_count(1)
    [known] = app.core.registry.all()
    await wait_until(lambda: len(known.tabs) == 2, timeout=5, message="tabs learnt on connect")
    extension.tabs[5] = {"id": 5, "windowId": 1, "url": "https://unheard.example/"}
    extension.hold_replies = True
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        status = await client.call_tool("browser_status", {})
    assert not status.is_error, text_of(status)
    [browser] = status.structured_content["browsers"]  # type: ignore[index]
    assert browser["tabs"] == 2, "what the app last heard"
    assert "tabs as last known: the browser did not list them" in text_of(status)
