"""browser_evaluate in real Chromium: its one CDP command's answer carries the tab as the
extension read it once the script had run (``cdp.send`` with ``tab``), so the navigation
guard's look after the tool needs no round trip of its own, and still sees where the script
took the page."""

from __future__ import annotations

import asyncio
from typing import Any

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, PageServer
from support.harness import allow_everything

pytestmark = E2E


def recorded(app: AppUnderTest, tab: int) -> list[str]:
    """The relay commands the app sends from now on, for ``tab``'s browser."""
    relay = app.browsers()[0]
    sent: list[str] = []
    send = relay.send_command

    async def recording(method: str, params: Any = None, **kw: Any) -> Any:
        inner = (params or {}).get("method")
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
        # The script moves the page within its document: the carried tab already says so.
        moved = await agent.ok(
            "browser_evaluate",
            tab_id=tab,
            expression="history.pushState({}, '', 'moved.html'); document.title = 'Moved'; 1",
        )
        assert moved == "1"
        assert sent == ["cdp.send Runtime.evaluate"] * 2
        browser = app.browsers()[0]
        cached = await browser.get_tab(tab)  # answered from the cache: nothing sent
        assert cached.url == pages.url("moved.html") and cached.title == "Moved"
        assert sent == ["cdp.send Runtime.evaluate"] * 2
    finally:
        vars(app.browsers()[0]).pop("send_command")
