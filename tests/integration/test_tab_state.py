"""One owner for per-tab state (tools/state/tab_state.py), against the relay with the scripted
extension: a tab's state goes when the tab closes or its browser disconnects, a document's refs
when its frame shows a new one, and a call cancelled at any await brings none of it back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from e2e.harness import wait_until
from support.fake_extension import FakeExtension
from support.harness import RelayHarness
from support.mcp import mcp_client, text_of
from tabrelay.endpoint.calls import Caller
from tabrelay.relay.browser import Browser
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.page.refs import STALE
from tabrelay.tools.state.sessions import TOOL_DOMAINS
from tabrelay.tools.state.tab_state import RefTarget, TabStates


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def connected(relay: RelayHarness) -> tuple[FakeExtension, Browser, TabStates]:
    extension = await relay.extension()
    await relay.browser_count(1)
    [browser] = relay.core.registry.all()
    return extension, browser, relay.core.tabs


async def use(relay: RelayHarness, *tab_ids: int) -> None:
    """An agent reads each tab's console: the tab gets a session, a log, an entry."""
    runner = relay.core.runner
    assert runner is not None
    for tab_id in tab_ids:
        await runner.call(
            BY_NAME["browser_console_messages"], {"tab_id": tab_id}, Caller("t"), no_progress
        )


async def close_tab(extension: FakeExtension, tab_id: int) -> None:
    """The person closes the tab: the extension forgets it and says so."""
    extension.tabs.pop(tab_id, None)
    await extension.send({"type": "tab_event", "event": "removed", "tab": {"id": tab_id}})


async def console_event(extension: FakeExtension, tab_id: int, text: str) -> None:
    await extension.send(
        {
            "type": "cdp_event",
            "tabId": tab_id,
            "method": "Runtime.consoleAPICalled",
            "params": {"type": "log", "args": [{"type": "string", "value": text}]},
        }
    )


async def observed(relay: RelayHarness, browser: Browser, tab_id: int, text: str) -> None:
    """Wait until the observer has read everything up to a console message on ``tab_id``."""

    def seen() -> bool:
        state = relay.core.tabs.get(browser.id, tab_id)
        return state is not None and any(m.text == text for m in state.log.console)

    await wait_until(seen, timeout=5, message=f"{text!r} observed on tab {tab_id}")


def recordings(relay: RelayHarness, browser: Browser, *tab_ids: int) -> list[str]:
    """An agent session's recording of each tab, as its calls there would begin them."""
    recorder = relay.core.recorder
    return [recorder.for_agent("t", "s1", browser.id, t, start_url=None) for t in tab_ids]


def live(relay: RelayHarness, *recording_ids: str) -> list[bool]:
    return [relay.core.recorder.info(r).live for r in recording_ids]


async def test_a_tab_that_closes_takes_its_state_with_it(relay: RelayHarness) -> None:
    extension, browser, tabs = await connected(relay)
    await use(relay, 1, 2)
    closing = tabs.get(browser.id, 1)
    assert closing is not None and set(TOOL_DOMAINS) <= closing.session.enabled
    closing.refs.assign(RefTarget(7, "main", "loader-1"))
    recorded = recordings(relay, browser, 1, 2)

    await close_tab(extension, 1)
    await wait_until(lambda: tabs.get(browser.id, 1) is None, timeout=5, message="tab 1 dropped")
    assert live(relay, *recorded) == [False, True], "an agent's recording ends with its tab"

    # Late news of the closed tab (an event sent before the close was read) and a call still
    # running on it find no state to keep, and make none.
    await console_event(extension, 1, "late")
    await console_event(extension, 2, "after")
    await observed(relay, browser, 2, "after")
    tabs.tab(browser.id, 1).agent_opened = True
    assert tabs.get(browser.id, 1) is None
    assert [s.key for s in tabs] == [(browser.id, 2)]


async def test_a_browser_that_disconnects_takes_its_tabs_state_with_it(
    relay: RelayHarness,
) -> None:
    extension, browser, tabs = await connected(relay)
    await use(relay, 1, 2)
    assert len(tabs) == 2
    recorded = recordings(relay, browser, 1, 2)
    await extension.close()
    await relay.browser_count(0)
    assert len(tabs) == 0
    assert live(relay, *recorded) == [False, False]
    tabs.tab(browser.id, 1).refs.assign(RefTarget(7, "main", "loader-1"))
    assert len(tabs) == 0, "no state is kept for a browser that is not connected"


async def test_a_new_document_releases_the_old_documents_refs_and_world(
    relay: RelayHarness,
) -> None:
    extension, browser, tabs = await connected(relay)
    await use(relay, 1)
    refs = tabs.tab(browser.id, 1).refs
    old = [refs.assign(RefTarget(node, "main", "loader-1")) for node in range(1, 101)]
    framed = refs.assign(RefTarget(5, "ad-frame", "ad-loader-1"))
    assert len(refs) == 101
    # Tabrelay's world in each document, as a snapshot keeps it (page_outline.world).
    worlds = tabs.tab(browser.id, 1).session.worlds
    worlds.update({("", "main", "loader-1"): 7, ("", "ad-frame", "ad-loader-1"): 8})

    # A frame of the page shows a new document: only its refs go.
    await extension.send(
        {
            "type": "cdp_event",
            "tabId": 1,
            "method": "Page.frameNavigated",
            "params": {"frame": {"id": "ad-frame", "parentId": "main", "loaderId": "ad-2"}},
        }
    )
    await wait_until(lambda: refs.get(framed) is None, timeout=5, message="frame refs released")
    assert len(refs) == 100
    assert worlds == {("", "main", "loader-1"): 7}

    # The tab shows a new document: every ref of the old one goes.
    await extension.send(
        {
            "type": "cdp_event",
            "tabId": 1,
            "method": "Page.frameNavigated",
            "params": {"frame": {"id": "main", "loaderId": "loader-2", "url": "https://a.test/"}},
        }
    )
    await wait_until(lambda: len(refs) == 0, timeout=5, message="old document's refs released")
    assert worlds == {}

    token = await relay.add_client()
    async with mcp_client(relay.base_mcp(), token) as client:
        clicked = await client.call_tool("browser_click", {"tab_id": 1, "ref": old[3]})
        unknown = await client.call_tool("browser_click", {"tab_id": 1, "ref": "e5000"})
    assert clicked.is_error and text_of(clicked) == STALE.format(ref=old[3])
    assert unknown.is_error and "there is no ref 'e5000' for tab 1" in text_of(unknown)
    # A ref is never handed out twice: the new document's first ref is a new one.
    assert refs.assign(RefTarget(1, "main", "loader-2")) == "e102"


@pytest.mark.parametrize("cancel_at", range(1, 7))
async def test_a_call_cancelled_at_any_await_of_the_tabs_set_up_leaves_nothing_behind(
    relay: RelayHarness, cancel_at: int
) -> None:
    """A call first looks the tab up, then sets its session up with one CDP command per
    domain: a cancel at each of those awaits marks nothing enabled that Chrome did not confirm,
    and a tab closed meanwhile keeps no state, whenever the held answers arrive."""
    extension, browser, tabs = await connected(relay)
    runner = relay.core.runner
    assert runner is not None
    extension.hold_replies = True
    call = asyncio.create_task(
        runner.call(BY_NAME["browser_console_messages"], {"tab_id": 2}, Caller("t"), no_progress)
    )
    for _ in range(cancel_at - 1):  # the commands before this one are answered
        await extension.held_count(1)
        await extension.release_held()
    await extension.held_count(1)
    held = extension.commands[-1]  # what the call awaits when it is cancelled
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    state = tabs.get(browser.id, 2)
    enabled: set[Any] = set(state.session.enabled) if state is not None else set()
    confirmed = {
        c["params"]["method"].removesuffix(".enable")
        for c in extension.commands[:-1]  # answered before the cancel
        if c["method"] == "cdp.send" and c["params"]["method"].endswith(".enable")
    }
    assert enabled == confirmed, "only what Chrome confirmed is marked enabled"
    assert held["method"] != "cdp.send" or held["params"]["method"] not in enabled

    await close_tab(extension, 2)
    await console_event(extension, 1, "after the close")
    await wait_until(
        lambda: (
            tabs.get(browser.id, 1) is not None
            and any(m.text == "after the close" for m in tabs.tab(browser.id, 1).log.console)
        ),
        timeout=5,
        message="the close observed",
    )
    extension.hold_replies = False
    await extension.release_held()
    await extension.flushed()
    assert tabs.get(browser.id, 2) is None
    assert browser.pending_count == 0
    assert runner.active_calls == 0


async def show_restricted_page(extension: FakeExtension, tab_id: int) -> None:
    """The tab goes to a page Tabrelay may not use (chrome://newtab): the extension says it was
    removed, though it still exists."""
    await extension.send({"type": "tab_event", "event": "removed", "tab": {"id": tab_id}})


async def show_page(extension: FakeExtension, tab_id: int, url: str) -> None:
    """The same tab shows a page Tabrelay may use again."""
    extension.tabs[tab_id]["url"] = url
    await extension.send({"type": "tab_event", "event": "updated", "tab": extension.tabs[tab_id]})


def enables(extension: FakeExtension) -> list[str]:
    return [
        c["params"]["method"]
        for c in extension.commands
        if c["method"] == "cdp.send" and c["params"]["method"].endswith(".enable")
    ]


async def test_a_tab_back_from_a_page_tabrelay_may_not_use_keeps_its_state_again(
    relay: RelayHarness,
) -> None:
    extension, browser, tabs = await connected(relay)
    await use(relay, 1)
    await show_restricted_page(extension, 1)
    await wait_until(lambda: tabs.get(browser.id, 1) is None, timeout=5, message="state dropped")

    await show_page(extension, 1, "https://example.com/again")
    await wait_until(lambda: 1 in browser.tabs, timeout=5, message="tab 1 listed again")
    await use(relay, 1)
    state = tabs.get(browser.id, 1)
    assert state is not None, "the tab exists again: its state is kept"
    assert state.session.guarded, "an agent uses it: the windows it opens are guarded"
    ref = state.refs.assign(RefTarget(7, "main", "loader-2"))

    # The next call finds the same state: the ref still names its element, the domains are
    # not enabled again.
    enabled_before = len(enables(extension))
    await use(relay, 1)
    assert tabs.get(browser.id, 1) is state and state.refs.get(ref) is not None
    assert len(enables(extension)) == enabled_before


async def test_a_call_on_a_tab_closed_meanwhile_brings_no_state_back_whatever_comes_after(
    relay: RelayHarness,
) -> None:
    extension, browser, tabs = await connected(relay)
    await use(relay, 1, 2)
    await close_tab(extension, 1)
    await wait_until(lambda: tabs.get(browser.id, 1) is None, timeout=5, message="tab 1 dropped")
    # News of other tabs (one back from a restricted page) does not bring tab 1 back.
    await show_restricted_page(extension, 2)
    await show_page(extension, 2, "https://example.org/again")
    await wait_until(lambda: 2 in browser.tabs, timeout=5, message="tab 2 listed again")
    tabs.tab(browser.id, 1).agent_opened = True
    tabs.tab(browser.id, 1).session.guarded = True
    assert tabs.get(browser.id, 1) is None


async def test_after_a_browser_restart_its_new_tabs_keep_state_under_old_tab_ids(
    relay: RelayHarness,
) -> None:
    """Chrome numbers tabs from 1 again when it restarts; its id (the extension's instance)
    stays. A tab closed before the restart says nothing about the new tab with its id."""
    extension, browser, tabs = await connected(relay)
    await use(relay, 1)
    await close_tab(extension, 1)
    await wait_until(lambda: tabs.get(browser.id, 1) is None, timeout=5, message="tab 1 dropped")
    await extension.close()
    await relay.browser_count(0)

    await relay.extension()  # the restarted browser: its tab 1 is a new tab
    await relay.browser_count(1)
    [again] = relay.core.registry.all()
    assert again.id == browser.id
    await use(relay, 1)
    assert tabs.get(browser.id, 1) is not None


async def test_a_ref_is_never_handed_out_again_after_the_browser_reconnects(
    relay: RelayHarness,
) -> None:
    """The extension reconnects (its service worker restarted) while the page stays: the tab's
    state was dropped with the connection, and the element a new snapshot names gets a new ref,
    so the old one cannot name another element."""
    extension, browser, tabs = await connected(relay)
    await use(relay, 1)
    old = tabs.tab(browser.id, 1).refs.assign(RefTarget(7, "main", "loader-1"))
    await extension.close()
    await relay.browser_count(0)
    await relay.extension()
    await relay.browser_count(1)
    await use(relay, 1)

    new = tabs.tab(browser.id, 1).refs.assign(RefTarget(8, "main", "loader-1"))
    assert new != old
    token = await relay.add_client()
    async with mcp_client(relay.base_mcp(), token) as client:
        clicked = await client.call_tool("browser_click", {"tab_id": 1, "ref": old})
    assert clicked.is_error and text_of(clicked) == STALE.format(ref=old)
