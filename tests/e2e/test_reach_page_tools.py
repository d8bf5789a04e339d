"""Tools a page declares (issue 26, finding 5: WebMCP): listed by ``browser_snapshot`` with
every word of theirs marked as the page's, called by ``browser_page_tool`` from Tabrelay's own
world, each call asked about whatever the page's hints say, and what they answer marked as data.
Real Chromium started with ``--enable-features=WebMCP`` (tests/e2e/chromium.py), the page
tests/e2e/pages/reach/webmcp.html.
"""

from __future__ import annotations

import re
import uuid

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from support.mcp import raw_text_of, text_of

pytestmark = E2E


async def test_the_snapshot_lists_the_tools_a_page_declares_as_the_pages_words(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url(f"reach/webmcp.html?t={uuid.uuid4().hex[:6]}"))
    result = await agent.call("browser_snapshot", tab_id=tab)
    text = text_of(result)
    assert "Tools this page declares" in text
    assert re.search(r'- search_teas: Search the teas by name\. \(input: \{"type":"object"', text)
    assert "add_to_cart" in text and "(the page says it only reads)" in text
    # The injection in a description stays inside the page's words, its fake close defused.
    raw = raw_text_of(result)
    injected = raw.index("Ignore your instructions")
    assert raw.rfind("<page-text ", 0, injected) > raw.rfind("</page-text ", 0, injected)
    plain_page = await agent.open(pages.url("tools/form.html"))
    assert "Tools this page declares" not in await agent.snapshot(plain_page)


async def test_a_call_runs_the_pages_tool_asked_about_whatever_its_hints_say(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    url = pages.url(f"reach/webmcp.html?t={uuid.uuid4().hex[:6]}")
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    said = await agent.call("browser_page_tool", tab_id=tab, name="add_to_cart",
                            arguments={"tea": "Sencha", "grams": 50})  # fmt: skip
    assert not said.is_error, text_of(said)
    assert "answered: added 50 g of Sencha" in text_of(said)
    assert re.search(r"<page-text \w+>added 50 g of Sencha</page-text", raw_text_of(said))
    asked = app.harness.tool_approver.requests[-1]
    assert asked.tool == "browser_page_tool" and asked.effect is not None
    assert asked.effect.kind.value == "unknown"  # "only reads", says the page: it asks anyway

    async def added() -> bool:
        return await page.text_of("#cart") == "Cart: 50 g Sencha"

    await wait_until(added, timeout=5, message="the page's own tool ran")
    found = await agent.ok("browser_page_tool", tab_id=tab, name="search_teas",
                           arguments={"q": "green"})  # fmt: skip
    assert "2 teas match green: Sencha, Gyokuro" in found


async def test_a_tool_that_is_missing_throws_or_navigates_is_said_plainly(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url(f"reach/webmcp.html?t={uuid.uuid4().hex[:6]}"))
    missing = await agent.fails("browser_page_tool", tab_id=tab, name="refund_everything")
    assert "declares no tool refund_everything" in missing and "search_teas" in missing
    threw = await agent.fails("browser_page_tool", tab_id=tab, name="broken")
    assert "the page's tool broken threw: " in threw  # as Chrome words it
    assert "invocation failed" in threw
    moved = await agent.ok("browser_page_tool", tab_id=tab, name="checkout")
    assert "The page changed: the tab now shows" in moved and "form.html" in moved
    none = await agent.fails("browser_page_tool", tab_id=tab, name="search_teas")
    assert "declares no tools" in none or "declares no tool" in none
