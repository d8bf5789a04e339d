"""Tabs, navigation, evaluate and resources through a real MCP client against real Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from mcp import Client, StdioServerParameters

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, free_port, wait_until
from support.mcp import mcp_client, unfenced

pytestmark = E2E


async def test_status_and_tab_listing_show_the_real_browser(
    agent: Agent, pages: PageServer
) -> None:
    status = await agent.ok("browser_status")
    assert "1 browser(s) connected" in status and "Chrom" in status
    tab = await agent.open(pages.url("tools/article.html"))
    listing = await agent.ok("browser_list_tabs")
    assert f"[{tab}] An article — {pages.url('tools/article.html')}" in listing


async def test_new_navigate_back_forward_activate_and_close(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    first, second = pages.url("tools/form.html"), pages.url("tools/article.html")
    tab = await agent.open(first)
    arrived = await agent.ok("browser_navigate", tab_id=tab, url=second)
    assert arrived == f"An article — {second}"
    page = await browser.attach_page(second)
    assert await page.evaluate("document.readyState") == "complete"
    back = await agent.ok("browser_navigate", tab_id=tab, action="back")
    assert back == f"Order form — {first}"
    forward = await agent.ok("browser_navigate", tab_id=tab, action="forward")
    assert forward == f"An article — {second}"
    other = await agent.open(pages.url("tools/long.html"))
    await agent.ok("browser_activate_tab", tab_id=tab)
    listing = await agent.ok("browser_list_tabs")
    assert (
        f"[{tab}] An article" in listing
        and "(active" in listing.split(f"[{tab}]")[1].split("\n")[0]
    )
    await agent.ok("browser_close_tab", tab_id=other)
    assert f"[{other}]" not in await agent.ok("browser_list_tabs")
    gone = await agent.fails("browser_navigate", tab_id=other, url=first)
    assert gone.startswith(f"tab {other} does not exist")


async def test_navigation_errors_and_blocked_urls_are_clear(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/form.html"))
    refused = await agent.fails("browser_navigate", tab_id=tab, url="file:///etc/passwd")
    assert "file: URLs are refused" in refused
    closed = f"http://127.0.0.1:{free_port()}/"
    unreachable = await agent.fails("browser_navigate", tab_id=tab, url=closed)
    assert f"could not open {closed}: net::ERR_CONNECTION_REFUSED" in unreachable


async def test_evaluate_returns_values_and_reports_exceptions(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/form.html"))
    assert (
        await agent.ok("browser_evaluate", tab_id=tab, expression="document.title")
        == '"Order form"'
    )
    value = await agent.ok(
        "browser_evaluate", tab_id=tab, expression="({n: 1 + 1, list: [1, 'a']})"
    )
    assert json.loads(value) == {"n": 2, "list": [1, "a"]}
    assert (
        await agent.ok(
            "browser_evaluate",
            tab_id=tab,
            expression="new Promise(r => setTimeout(() => r(7), 50))",
        )
        == "7"
    )
    assert await agent.ok("browser_evaluate", tab_id=tab, expression="undefined") == "undefined"
    thrown = await agent.fails("browser_evaluate", tab_id=tab, expression="null.x")
    assert thrown.startswith("the script threw: TypeError: Cannot read properties of null")


async def test_resources_read_real_tabs(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/article.html"))
    listing = json.loads((await agent.client.read_resource("tabrelay://tabs")).contents[0].text)
    mine = next(t for t in listing if t["id"] == tab)
    read = await agent.client.read_resource(f"tabrelay://tab/{mine['browser']}/{tab}")
    page = unfenced(read.contents[0].text)  # the page's words, marked as such
    assert read.contents[0].text.startswith("<page-text ")
    assert page.startswith(f"# An article\n{pages.url('tools/article.html')}")
    assert "# Tabrelay ships" in page


async def test_idle_tabs_are_detached_again(
    agent: Agent, app: AppUnderTest, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/long.html"))
    await agent.snapshot(tab)
    core = app.harness.core
    relay = core.registry.resolve()
    assert tab in relay.attached_tabs
    store = core.settings_store
    before = store.current.idle_detach_minutes
    await asyncio.to_thread(store.update, lambda s: setattr(s, "idle_detach_minutes", 0.001))
    try:

        async def detached() -> bool:
            # The first pass may come before this tab's idle time is up (it detaches the others).
            await core.sessions.detach_idle()
            return tab not in relay.attached_tabs

        await wait_until(detached, timeout=5, message="the idle tab is detached")
    finally:
        await asyncio.to_thread(store.update, lambda s: setattr(s, "idle_detach_minutes", before))
    await agent.snapshot(tab)  # using it again attaches it again
    assert tab in relay.attached_tabs


@pytest.mark.parametrize("transport", ["sse", "stdio"])
async def test_the_tools_work_over_sse_and_the_stdio_bridge_too(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, transport: str
) -> None:
    url = f"{pages.url('tools/widgets.html')}?via={transport}"
    client_name = f"e2e-{transport}"
    token = await app.harness.add_client(client_name)
    if transport == "sse":
        context = mcp_client(app.harness.base_mcp(), token, transport="sse")
    else:
        context = Client(
            StdioServerParameters(
                command=sys.executable,
                args=["-m", "tabrelay", "mcp-stdio", "--client", client_name],
                env={**os.environ, "TABRELAY_HOME": str(app.paths.config_dir.parent)},
            )
        )
    async with context as client:
        agent = Agent(client)
        tab = await agent.open(url)
        snapshot = await agent.snapshot(tab)
        await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Clicked 0 times"))
        title = await agent.ok("browser_evaluate", tab_id=tab, expression="document.title")
    page = await browser.attach_page(url)
    assert await page.text_of("#counter") == "Clicked 1 times"
    assert title == '"Widgets"'
    assert app.harness.core.command_log is not None
    clients = {r.client for r in app.harness.core.command_log.recent(4)}
    assert clients == {client_name}
