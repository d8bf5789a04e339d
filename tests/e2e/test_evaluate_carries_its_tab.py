"""browser_evaluate, browser_snapshot and an action that starts nothing (browser_type,
browser_click) in real Chromium: the answer to their last CDP command carries the tab as the
extension read it once the command had run (``cdp.send`` with ``tab``), so the navigation
guard's look after the tool needs no round trip of its own, and still sees where the script
took the page."""

from __future__ import annotations

import asyncio
from typing import Any

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, PageServer, wait_until
from support.harness import allow_everything

pytestmark = E2E


def recorded(app: AppUnderTest, tab: int) -> list[str]:
    """The relay commands the app sends from now on about ``tab`` (the app's own upkeep of
    other tabs is not the call's)."""
    relay = app.browsers()[0]
    sent: list[str] = []
    send = relay.send_command

    async def recording(method: str, params: Any = None, **kw: Any) -> Any:
        if (params or {}).get("tabId") == tab:
            inner = params.get("method")
            sent.append(f"{method} {inner}" if inner else method)
        return await send(method, params, **kw)

    relay.send_command = recording  # type: ignore[method-assign]
    return sent


async def test_evaluate_is_one_relay_round_trip_and_its_tab_comes_with_it(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    await asyncio.to_thread(allow_everything, app.paths)
    tab = await agent.open(pages.url("index.html"))
    await agent.ok("browser_evaluate", tab_id=tab, expression="1")  # the tab's set-up
    sent = recorded(app, tab)
    try:
        assert await agent.ok("browser_evaluate", tab_id=tab, expression="6 * 7") == "42"
        assert sent == ["cdp.send Runtime.evaluate"]
        # The script moves the page within its document. Chrome's tab events about it come
        # while the command runs (then which is newer, they or the carried tab, is not known,
        # and the look after the tool asks) or after it (then the carried tab is the look).
        sent.clear()
        moved = await agent.ok(
            "browser_evaluate",
            tab_id=tab,
            expression="history.pushState({}, '', 'moved.html'); document.title = 'Moved'; 1",
        )
        assert moved == "1"
        assert sent in (["cdp.send Runtime.evaluate", "tabs.get"], ["cdp.send Runtime.evaluate"])
        browser = app.browsers()[0]
        await wait_until(
            lambda: browser.tabs[tab].title == "Moved", timeout=5, message="the page's events"
        )
        # Once the page is quiet again, the carried tab is the look, and says where it is.
        sent.clear()
        assert await agent.ok("browser_evaluate", tab_id=tab, expression="location.pathname")
        assert sent == ["cdp.send Runtime.evaluate"]
        cached = await browser.get_tab(tab)  # answered from the cache: nothing sent
        assert cached.url == pages.url("moved.html") and cached.title == "Moved"
        assert sent == ["cdp.send Runtime.evaluate"]
    finally:
        vars(app.browsers()[0]).pop("send_command")


async def test_a_snapshot_needs_no_look_of_its_own_at_the_tab(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """The outline, a snapshot's last command, carries the tab; the page is not made a world
    again, nor asked what it is, in later snapshots of the same document, nor looked through
    for closed shadow roots or code editors in a command of its own, nor its frames asked for:
    the document read last needed nothing but Tabrelay's world, so the next read is one relay
    command."""
    tab = await agent.open(pages.url("tools/form.html"))
    await agent.snapshot(tab)  # the tab's set-up, and Tabrelay's world in the document
    sent = recorded(app, tab)
    try:
        assert "Place an order" in await agent.snapshot(tab)
        assert sent == ["cdp.send Runtime.callFunctionOn"], sent
    finally:
        vars(app.browsers()[0]).pop("send_command")


async def test_an_action_that_starts_nothing_needs_no_look_of_its_own_at_the_tab(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """Typing into a field and clicking a button that only counts end with the look through the
    page's task queue (did the action start anything?), which carries the tab: no ``tabs.get``
    after it. A click that takes the page elsewhere is still looked at, and says where it went."""
    await asyncio.to_thread(allow_everything, app.paths)
    tab = await agent.open(pages.url("tools/form.html"))
    field = ref(await agent.snapshot(tab), "textbox", "Name *")
    await agent.ok("browser_type", tab_id=tab, ref=field, text="Ada")  # the tab's set-up
    sent = recorded(app, tab)
    try:
        await agent.ok("browser_type", tab_id=tab, ref=field, text="Grace")
        assert "tabs.get" not in sent, sent
        assert sent[-2:] == ["cdp.send Runtime.evaluate", "cdp.send Runtime.releaseObjectGroup"]
        assert (
            await agent.ok(
                "browser_evaluate", tab_id=tab, expression="document.querySelector('#name').value"
            )
            == '"Grace"'
        )
        counter = await agent.open(pages.url("tools/widgets.html"))
        button = ref(await agent.snapshot(counter), "button", "Clicked 0 times")
        sent = recorded(app, counter)
        await agent.ok("browser_click", tab_id=counter, ref=button)
        assert "tabs.get" not in sent, sent
        link = ref(await agent.snapshot(tab), "link", "Long page")
        clicked = await agent.ok("browser_click", tab_id=tab, ref=link)
        assert pages.url("tools/long.html") in clicked, clicked
        assert (await app.browsers()[0].get_tab(tab)).url == pages.url("tools/long.html")
    finally:
        vars(app.browsers()[0]).pop("send_command")
