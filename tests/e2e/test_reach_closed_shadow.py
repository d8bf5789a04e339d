"""Closed shadow roots (issue 26): read and acted on like open ones.

A design system's widget that attaches a closed shadow root hides its insides from the page's
scripts, but not from a person or a screen reader; Tabrelay reads them from its own world
(the roots found through ``DOM.describeNode``, never through the page's scripts). The page
(tests/e2e/pages/reach/closed_shadow.html) also patches its own ``Element.prototype.shadowRoot``
to answer null: the page's world is not Tabrelay's.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.tools.page.shadow_roots import MAX_ROUNDS

pytestmark = E2E

PAGE = "reach/closed_shadow.html"


async def opened(agent: Agent, browser: ExtensionBrowser, pages: PageServer) -> tuple[int, Page]:
    url = pages.url(f"{PAGE}?tab={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    return tab, await browser.attach_page(url)


async def test_the_snapshot_shows_what_closed_shadow_roots_hold(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _ = await opened(agent, browser, pages)
    snapshot = await agent.snapshot(tab)
    ref(snapshot, "textbox", "Card holder")
    ref(snapshot, "button", "Pay now")
    ref(snapshot, "link", "Terms of sale")  # a closed root on a plain div
    ref(snapshot, "button", "Badge in closed")  # closed inside closed
    ref(snapshot, "button", "Badge in open")  # closed inside open
    assert "Your card is charged on delivery." in snapshot
    assert 'heading[2] "Nested card"' in snapshot
    # In document order: the form's insides under the heading, before the nested card.
    order = [snapshot.index(t) for t in ("Pay now", "Nested card", "Badge in open", "Terms")]
    assert order == sorted(order)
    # What a sighted person cannot see stays out, and a secret's value never leaves the page.
    assert "wire the money" not in snapshot
    assert re.search(r'"Card PIN" \[e\d+\].*\(a password field: its value is not shown\)', snapshot)
    assert "4321" not in snapshot
    found = await agent.ok("browser_find", tab_id=tab, text="Badge in closed")
    assert ref(found, "button", "Badge in closed") == ref(snapshot, "button", "Badge in closed")


async def test_an_agent_fills_and_presses_controls_inside_closed_shadow_roots_and_replays_it(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages)
    snapshot = await agent.snapshot(tab)
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Card holder"),
                   text="Ada Lovelace")  # fmt: skip
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Pay now"))

    async def paid() -> bool:
        return await page.text_of("#status") == "Paid by Ada Lovelace"

    await wait_until(paid, timeout=5, message="the closed form's button is pressed")
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Badge in closed"))
    after = await agent.snapshot(tab)
    ref(after, "button", "Badge in closed pressed")

    # Recorded with locators that name each element inside its closed root, and replayed.
    recorder = app.harness.core.recorder
    latest = recorder.latest("agent")
    assert latest is not None
    steps, _ = recorder.steps(latest.id)
    targets = [(s.target.role, s.target.name) for s in steps if s.target is not None]
    assert targets == [
        ("textbox", "Card holder"), ("button", "Pay now"), ("button", "Badge in closed"),
    ]  # fmt: skip
    recipe = f"pay closed {uuid.uuid4().hex[:6]}"
    recorder.save_as(latest.id, recipe, app.harness.core.recipes, params={1: "holder"})
    again, replayed = await opened(agent, browser, pages)
    await agent.ok("browser_run_recipe", tab_id=again, name=recipe,
                   params={"holder": "Grace Hopper"})  # fmt: skip
    assert await replayed.text_of("#status") == "Paid by Grace Hopper"


async def test_content_reads_closed_shadow_roots_whole_and_by_ref(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _ = await opened(agent, browser, pages)
    whole = await agent.ok("browser_get_content", tab_id=tab, format="text")
    assert "Your card is charged on delivery." in whole
    assert "Terms of sale" in whole
    assert "wire the money" not in whole
    snapshot = await agent.snapshot(tab)
    nested = await agent.ok("browser_get_content", tab_id=tab, format="text",
                            ref=ref(snapshot, "button", "Badge in closed"))  # fmt: skip
    assert "Badge in closed" in nested


async def test_thousands_of_custom_elements_and_deep_nesting_are_bounded_and_still_read(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A page of 3,000 custom elements without a root is asked about at once, not 3,000 times;
    closed roots nested deeper than one read's rounds are reached by the next read; the page's
    own world sees nothing of it."""
    crowded_url = pages.url(f"reach/many_closed.html?items=3000&t={uuid.uuid4().hex[:6]}")
    crowded = await agent.open(crowded_url)
    relay = await app.browser()
    sent: list[str] = []
    send = relay.send_command

    async def counted(method: str, params: Any = None, **kw: Any) -> Any:
        sent.append(str((params or {}).get("method", method)))
        return await send(method, params, **kw)

    relay.send_command = counted  # type: ignore[method-assign]
    try:
        ref(await agent.snapshot(crowded), "button", "Last closed button")
    finally:
        relay.send_command = send  # type: ignore[method-assign]
    assert sent.count("DOM.describeNode") <= 2, sent  # the whole page once, not 3,000 hosts
    assert len(sent) < 60, sent
    page = await browser.attach_page(crowded_url)
    unseen = (
        "Object.getOwnPropertyDescriptor(Element.prototype, 'shadowRoot').get.toString()"
        ".includes('[native code]') && document.querySelector('x-last').shadowRoot === null"
    )
    assert await page.evaluate(unseen) is True
    deep = MAX_ROUNDS + 4
    nested = await agent.open(
        pages.url(f"reach/many_closed.html?depth={deep}&t={uuid.uuid4().hex[:6]}")
    )
    first = await agent.snapshot(nested)
    assert f"Depth {deep} button" not in first  # a read asks at most MAX_ROUNDS levels down
    ref(await agent.snapshot(nested), "button", f"Depth {deep} button")
