"""A browser's tab cache answers a look at a tab without a round trip only when it is known
current; over real sockets with the scripted extension, and through the MCP endpoint for the
navigation guard, which reads the tab's URL before and after every tool.

What an attacker's page can do: navigate itself (``location.href = ...``) at any time. Its tab
event reaches the app and the cache shows the new URL at once, so the guard refuses before the
tool acts. If the event has not arrived when the tool runs, the tool's own command to the tab
made the cache stale, so the look after the tool asks the browser and the result is withheld.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from support.fake_extension import SCRIPTED_METHODS
from support.harness import RelayHarness
from support.mcp import mcp_client, text_of
from tabrelay.config.settings import PolicyRule, Settings
from tabrelay.errors import CommandFailed, CommandTimeout
from tabrelay.relay.browser import Browser

BLOCKED = "https://blocked.example/account"
SECRET = "the-secret-of-the-blocked-site"


def methods(extension: Any) -> list[str]:
    return [c["method"] for c in extension.commands]


async def listed(relay: RelayHarness) -> Browser:
    """The browser once the answer to the app's first tabs.list is in its cache."""
    browser = relay.core.registry.resolve()
    async with asyncio.timeout(5):
        while not browser.tabs:
            await asyncio.sleep(0.005)
    return browser


async def test_a_tab_the_browser_reported_is_looked_at_without_asking(relay: RelayHarness) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    assert (await browser.get_tab(1)).url == "https://example.com/"
    assert (await browser.get_tab(2)).title == "News"
    assert methods(extension) == []


async def test_after_a_command_to_a_tab_the_next_look_asks_the_browser_once(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    await browser.cdp(1, "Runtime.evaluate", {"expression": "location.href = '/next'"})
    extension.tabs[1]["url"] = "https://example.com/next"  # no event has told the app yet
    assert (await browser.get_tab(1)).url == "https://example.com/next"
    assert (await browser.get_tab(1)).url == "https://example.com/next"
    assert methods(extension) == ["cdp.send", "tabs.get"]
    await browser.cdp(2, "Runtime.evaluate", {"expression": "1"})  # another tab's business
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "tabs.get", "cdp.send"]
    # Letting go of the app's handles in the page reads and moves nothing: still current.
    await browser.cdp(1, "Runtime.releaseObjectGroup", {"objectGroup": "tabrelay"})
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "tabs.get", "cdp.send", "cdp.send"]


async def test_while_a_command_to_a_tab_is_in_flight_a_look_asks_the_browser(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    extension.hold_replies = True
    command = asyncio.create_task(browser.cdp(1, "Input.dispatchMouseEvent", {"type": "x"}))
    await extension.held_count(1)
    lookup = asyncio.create_task(browser.get_tab(1))
    await extension.held_count(2)
    assert methods(extension) == ["cdp.send", "tabs.get"]
    await extension.release_held(shuffle=False)
    await command
    assert (await lookup).id == 1


async def test_activating_or_creating_a_tab_makes_every_cached_tab_stale(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    await browser.activate_tab(2)
    assert not (await browser.get_tab(1)).active  # asked: no activated event came
    created = await browser.create_tab("https://example.net/")
    await browser.get_tab(1)
    await browser.get_tab(created.id)  # its load may still be under way: asked too
    await browser.get_tab(created.id)
    assert methods(extension) == [
        "tabs.activate",
        "tabs.get",
        "tabs.create",
        "tabs.get",
        "tabs.get",
    ]


async def test_a_tab_event_updates_the_cached_tab_at_once(relay: RelayHarness) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    moved = dict(extension.tabs[1], url=BLOCKED, title="Account")
    await extension.send({"type": "tab_event", "event": "updated", "tab": moved})
    await extension.flushed()
    assert (await browser.get_tab(1)).url == BLOCKED
    assert methods(extension) == []
    extension.tabs.pop(2)
    await extension.send({"type": "tab_event", "event": "removed", "tab": {"id": 2}})
    await extension.flushed()
    with pytest.raises(CommandFailed, match="No tab with id: 2"):  # asked, not the old entry
        await browser.get_tab(2)
    assert methods(extension) == ["tabs.get"]


async def test_a_tab_closed_while_a_look_at_it_is_answered_is_not_brought_back(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    extension.hold_replies = True
    looks = [
        asyncio.create_task(browser.get_tab(2, ask=True)),
        asyncio.create_task(browser.list_tabs()),
    ]
    await extension.held_count(2)  # both answers will still show tab 2 open
    await extension.send({"type": "tab_event", "event": "removed", "tab": {"id": 2}})
    await extension.flushed()
    await extension.release_held(shuffle=False)
    assert (await looks[0]).id == 2 and 2 in [t.id for t in await looks[1]]
    assert 2 not in browser.tabs, "an answer older than the close brought the tab back"


async def test_tabs_that_closed_leave_nothing_behind_in_the_browser(relay: RelayHarness) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    for tab_id in range(100, 600):
        tab = {"id": tab_id, "windowId": 1, "url": "https://example.com/", "title": "t"}
        await extension.send({"type": "tab_event", "event": "created", "tab": tab})
        await extension.send({"type": "tab_event", "event": "removed", "tab": {"id": tab_id}})
    await extension.flushed()
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"})
    assert set(browser.tabs) == {1, 2}
    assert len(browser._last_event) <= 2, "the events of closed tabs are remembered for good"


async def test_a_seed_extension_sends_no_tab_events_so_its_tabs_are_always_asked(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension(seed=True, instance=None)
    browser = relay.core.registry.resolve()
    await browser.get_tab(1)
    await browser.get_tab(1)
    assert methods(extension) == ["tabs.list", "tabs.list"]


async def guarded(relay: RelayHarness) -> str:
    def block(settings: Settings) -> None:
        settings.navigation.block = ["blocked.example"]
        settings.policy_rules.append(PolicyRule(tool="*", decision="allow"))

    await asyncio.to_thread(relay.core.settings_store.update, block)
    async with asyncio.timeout(5):
        while not relay.core.settings.navigation.block:
            await asyncio.sleep(0.01)
    return await relay.add_client()


async def test_a_page_that_moved_itself_to_a_blocked_site_is_refused_before_the_tool_acts(
    relay: RelayHarness,
) -> None:
    token = await guarded(relay)
    extension = await relay.extension()
    # The page ran `location.href = BLOCKED`; the extension reports the committed URL.
    moved = dict(extension.tabs[1], url=BLOCKED, title="Account")
    extension.tabs[1] = moved
    await extension.send({"type": "tab_event", "event": "updated", "tab": moved})
    await extension.flushed()
    async with mcp_client(relay.base_mcp(), token) as client:
        result = await client.call_tool(
            "browser_evaluate", {"expression": "document.body.innerText", "tab_id": 1}
        )
    assert result.is_error
    assert "blocked.example" in text_of(result) and "may not use" in text_of(result)
    assert not [m for _, m, _ in extension.cdp_calls if m == "Runtime.evaluate"]
    assert "tabs.get" not in methods(extension)  # the cache knew, no round trip was needed


@pytest.mark.parametrize("carries_tab", [True, False], ids=["tab-carried", "older-extension"])
async def test_a_page_that_moves_while_the_tool_runs_is_caught_by_the_look_after_it(
    relay: RelayHarness, carries_tab: bool
) -> None:
    token = await guarded(relay)
    extension = await relay.extension()
    if not carries_tab:
        extension.carry = None  # an older extension: its answers carry no tab

    async def evaluate_then_move(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        # The navigation commits as the page answers; its tab event has not reached the app.
        extension.tabs[tab_id]["url"] = BLOCKED
        return {"result": {"type": "string", "value": SECRET}}

    extension.cdp_handlers["Runtime.evaluate"] = evaluate_then_move
    async with mcp_client(relay.base_mcp(), token) as client:
        result = await client.call_tool(
            "browser_evaluate", {"expression": "document.body.innerText", "tab_id": 1}
        )
    assert result.is_error
    assert "went to" in text_of(result) and SECRET not in text_of(result)
    if carries_tab:  # the answer carried the tab as it was once the script ran
        assert methods(extension)[-1] == "cdp.send" and "tabs.get" not in methods(extension)
    else:  # asked after the tool, not read from the cache
        assert methods(extension)[-1] == "tabs.get"


async def test_an_answer_carrying_its_tab_spares_the_look_after_it(relay: RelayHarness) -> None:
    extension = await relay.extension()
    browser = await listed(relay)

    async def move(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        extension.tabs[tab_id]["url"] = "https://example.com/next"  # no event tells the app
        return {"result": {"type": "number", "value": 1}}

    extension.cdp_handlers["Runtime.evaluate"] = move
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"}, with_tab=True)
    assert (await browser.get_tab(1)).url == "https://example.com/next"
    assert methods(extension) == ["cdp.send"]
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"})  # not asked to carry it
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "cdp.send", "tabs.get"]


async def test_a_tab_carried_by_an_answer_that_overlapped_another_command_is_not_trusted(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    extension.hold_replies = True
    click = asyncio.create_task(browser.cdp(1, "Input.dispatchMouseEvent", {"type": "x"}))
    look = asyncio.create_task(
        browser.cdp(1, "Runtime.evaluate", {"expression": "1"}, with_tab=True)
    )
    await extension.held_count(2)
    extension.hold_replies = False
    await extension.release_held(shuffle=False)
    await asyncio.gather(click, look)
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "cdp.send", "tabs.get"]


async def test_a_carried_tab_is_not_trusted_when_an_event_about_it_came_meanwhile(
    relay: RelayHarness,
) -> None:
    """The event may have left the extension after its read of the tab (it waited on a look
    at the tab's group), telling what was true before: which is newer is not known."""
    extension = await relay.extension()
    browser = await listed(relay)

    async def moved_meanwhile(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        await extension.send({"type": "tab_event", "event": "updated", "tab": dict(
            extension.tabs[tab_id], url=BLOCKED)})  # fmt: skip
        return {"result": {"type": "number", "value": 1}}

    extension.cdp_handlers["Runtime.evaluate"] = moved_meanwhile
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"}, with_tab=True)
    assert (await browser.get_tab(1)).url == "https://example.com/"  # asked: the browser's word
    assert methods(extension) == ["cdp.send", "tabs.get"]


async def test_a_tab_on_an_answer_that_did_not_ask_for_one_is_ignored(relay: RelayHarness) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    extension.hold_replies = True
    command = asyncio.create_task(browser.cdp(1, "Runtime.evaluate", {"expression": "1"}))
    await extension.held_count(1)
    (held,) = extension.take_held()
    extension.hold_replies = False
    await extension.send({"id": held["id"], "result": {}, "tab": dict(extension.tabs[1])})
    assert await command == {}
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "tabs.get"]


async def test_a_command_that_timed_out_counts_as_in_flight_until_its_late_answer(
    relay: RelayHarness,
) -> None:
    """It may still act: a carried tab read meanwhile vouches for nothing."""
    extension = await relay.extension()
    browser = await listed(relay)
    extension.hold_replies = True
    with pytest.raises(CommandTimeout):
        await browser.cdp(1, "Input.dispatchMouseEvent", {"type": "x"}, timeout=0.05)
    extension.hold_replies = False
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"}, with_tab=True)
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "cdp.send", "tabs.get"]
    await extension.release_held()  # the late answer: the click acts no more
    await extension.flushed()
    await browser.cdp(1, "Runtime.evaluate", {"expression": "2"}, with_tab=True)
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "cdp.send", "tabs.get", "cdp.send"]


async def test_an_extension_that_does_not_announce_carried_tabs_is_not_asked_for_them(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension(capabilities=SCRIPTED_METHODS)
    browser = await listed(relay)
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"}, with_tab=True)
    assert "tab" not in extension.commands[-1]["params"]
    await browser.get_tab(1)
    assert methods(extension) == ["cdp.send", "tabs.get"]


@pytest.mark.parametrize(
    "carried",
    [{"id": "one"}, {"id": 1, "url": 5}, [], "tab", {"id": 2, "url": BLOCKED}],
    ids=["id-not-a-number", "url-not-a-string", "a-list", "a-string", "another-tab"],
)
async def test_a_malformed_or_foreign_carried_tab_is_ignored_and_the_answer_stands(
    relay: RelayHarness, carried: Any
) -> None:
    extension = await relay.extension()
    browser = await listed(relay)
    extension.carry = lambda tab_id: carried
    answer = await browser.cdp(1, "Runtime.evaluate", {"expression": "7"}, with_tab=True)
    assert answer == {"result": {"type": "string", "value": "evaluated 7"}}
    assert (await browser.get_tab(1)).url == "https://example.com/"  # asked, not taken from it
    assert (await browser.get_tab(2)).url == "https://example.org/news"
    assert methods(extension) == ["cdp.send", "tabs.get"]
    assert extension.errors == []  # no frame was refused


async def test_a_tool_call_with_one_command_makes_one_round_trip(relay: RelayHarness) -> None:
    token = await guarded(relay)
    extension = await relay.extension()
    async with mcp_client(relay.base_mcp(), token) as client:
        for _ in range(2):
            result = await client.call_tool("browser_evaluate", {"expression": "2", "tab_id": 1})
            assert not result.is_error, text_of(result)
        before = len(extension.commands)
        result = await client.call_tool("browser_evaluate", {"expression": "3", "tab_id": 1})
    assert not result.is_error and "evaluated 3" in text_of(result)
    assert methods(extension)[before:] == ["cdp.send"]
