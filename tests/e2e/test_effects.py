"""Approvals that know what an action will do (issue 25, finding 1): with every acting tool
allowed on the site — what "Always allow this tool on this site" writes — the controls of real
sites' patterns that pay, send, delete, share, grant access, accept terms, move money, create an
account, download, use a credential or leave for another site are still held back for the
person, in several languages, icon-only ones too; the routine ones run. Real Chromium, the real
extension, a real MCP client; the person denies whatever they are asked."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.effect_probe import PAGES, Outcome, grant_site, judge_page
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from e2e.test_guard_for_life import via
from tabrelay.approval.gate import Choice

pytestmark = E2E


@pytest.mark.parametrize("name", PAGES)
async def test_under_a_site_grant_consequential_actions_ask_and_routine_ones_run(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer, name: str
) -> None:
    url = pages.url(f"effects/{name}.html?t={uuid.uuid4().hex[:8]}")
    await grant_site(app, url)
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    outcomes = await judge_page(app, agent, page, tab, name)
    wrong = [o for o in outcomes if not o.right]
    assert not wrong, "\n".join(_said(o) for o in wrong)
    # What ran, ran; what asked never reached the page.
    clicked = await page.evaluate("window.clicks")
    for outcome in outcomes:
        if outcome.asked:
            assert outcome.control not in clicked, _said(outcome)
    # The effect named is the one the control has (a link to another site is asked by where
    # it goes, a form whose purpose no word names as a form submission).
    named = [o for o in outcomes if o.asked and o.decided != o.expected]
    assert not named, "\n".join(_said(o) for o in named)


def _said(outcome: Outcome) -> str:
    verdict = "asked" if outcome.asked else "ran"
    return f"{outcome.page} #{outcome.control} ({outcome.expected}): {verdict} — {outcome.message}"


async def test_a_navigation_allowed_on_a_site_asks_before_taking_data_to_another(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """ "Always allow browser_navigate" on the shop, and a page that tells the agent to go to
    another site with the card in the address: the person is asked, shown the whole address,
    and the other site never hears of it (issue 25, finding 1's last case)."""
    url = pages.url(f"effects/shop.html?t={uuid.uuid4().hex[:8]}")
    await grant_site(app, url)
    await grant_site(app, url, tools=("browser_navigate", "browser_new_tab"))
    tab = await agent.open(url)
    out = pages.url(f"record?exfil=card-4242&t={uuid.uuid4().hex[:8]}", host="localhost")
    person = app.harness.tool_approver
    answer, person.answer = person.answer, Choice.DENY
    try:
        denied = await agent.fails("browser_navigate", tab_id=tab, url=out)
        assert "denied by the person" in denied
        assert person.requests[-1].leaving == out
        assert (await agent.fails("browser_new_tab", url=out)).startswith("denied by the person")
        assert person.requests[-1].leaving == out
    finally:
        person.answer = answer
    assert pages.hits(out) == []
    # The same site is routine: no question.
    asked = len(person.requests)
    await agent.ok("browser_navigate", tab_id=tab, url=url + "&again=1")
    assert len(person.requests) == asked


async def test_a_redirect_to_another_site_on_the_way_stops_until_the_agent_goes_there_itself(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """An open redirect on the shop, where browser_navigate is allowed, would carry the card to
    another site: the navigation stops at that hop (the other site never hears of it) and the
    agent is told to go there itself, which asks with the whole address. A frame's redirect
    is the page's own, and a redirect the rules allow is followed."""
    url = pages.url(f"effects/shop.html?t={uuid.uuid4().hex[:8]}")
    await grant_site(app, url, tools=("browser_navigate", "browser_new_tab"))
    tab = await agent.open(url)
    out = pages.url(f"record?exfil=card-4242&t={uuid.uuid4().hex[:8]}", host="localhost")
    person = app.harness.tool_approver
    asked = len(person.requests)

    def hop(to: str) -> str:  # an open redirect on the shop's own site
        return via(pages, "redirect", to)

    said = await agent.fails("browser_navigate", tab_id=tab, url=hop(out))
    assert said.startswith(f"blocked after a redirect to {out}: a redirect to another site"), said
    assert "open it with browser_navigate" in said
    assert len(person.requests) == asked  # the shop's own address needed no question
    assert pages.hits(out) == []
    answer, person.answer = person.answer, Choice.DENY
    try:
        assert "denied by the person" in await agent.fails("browser_navigate", tab_id=tab, url=out)
        assert person.requests[-1].arguments["url"] == out  # asked, with the whole address
    finally:
        person.answer = answer
    assert pages.hits(out) == []

    # A click that leads there the same way: its answer says where Tabrelay stopped it.
    await grant_site(app, url, tools=("browser_click",))
    out = pages.url(f"record?exfil=card-4242&t={uuid.uuid4().hex[:8]}", host="localhost")
    # (In a tab of its own: Chrome's error page left in this one can name its address late.)
    clicking = await agent.open(via(pages, "button", hop(out)))
    said = await agent.ok("browser_click", tab_id=clicking, selector="button")
    assert f"Tabrelay stopped at {out}: a redirect to another site" in said, said
    assert pages.hits(out) == []
    # The page's own moves are not the agent's: a script sends the tab to the other site,
    # whose own redirects stay there.
    there = pages.url(f"index.html?t={uuid.uuid4().hex[:8]}", host="localhost")
    moved = via(pages, "button", pages.url(f"go/redirect?to={there}", host="localhost"))
    moving = await agent.open(moved)
    said = await agent.ok("browser_click", tab_id=moving, selector="button")
    assert "The page changed" in said and pages.hits(there) == ["GET"], said

    framed = pages.url(f"tools/form.html?t={uuid.uuid4().hex[:8]}", host="localhost")
    await agent.ok(
        "browser_navigate", tab_id=tab, url=via(pages, "frame", via(pages, "redirect", framed))
    )
    await wait_until(
        lambda: pages.hits(framed), timeout=10, message="the frame follows its redirect"
    )

    store = app.harness.core.settings_store
    rules = list(store.current.policy_rules)
    await grant_site(app, out, tools=("browser_navigate",))
    try:
        followed = pages.url(f"index.html?t={uuid.uuid4().hex[:8]}", host="localhost")
        await agent.ok("browser_navigate", tab_id=tab, url=via(pages, "redirect", followed))
        assert pages.hits(followed) == ["GET"]
    finally:  # the other site is asked about again in the tests after this one

        def restore(settings: Any) -> None:
            settings.policy_rules = rules

        await asyncio.to_thread(store.update, restore)


async def test_a_task_with_a_plan_asks_once_and_then_only_before_consequential_actions(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """Issue 25's fatigue: an agent orders on the shop. With one plan approved, the person is
    asked for the plan, then only before typing the card number and placing the order."""
    person = app.harness.tool_approver
    url = pages.url(f"effects/shop.html?t={uuid.uuid4().hex[:8]}")
    before = len(person.requests)
    granted = await agent.ok(
        "browser_request_access",
        purpose="Order a Sencha",
        sites=[url],
        actions=["navigate", "click", "type"],
        minutes=15,
    )
    assert "approved the plan" in granted
    tab = await agent.open(url)
    for selector in ("#more-reviews", "#tab-reviews", "#add-to-cart"):
        await agent.ok("browser_click", tab_id=tab, selector=selector)
    await agent.ok("browser_type", tab_id=tab, selector="#email", text="ada@example.org")
    assert len(person.requests) == before + 1  # the plan only
    await agent.ok("browser_type", tab_id=tab, selector="#card", text="4242424242424242")
    await agent.ok("browser_click", tab_id=tab, selector="#place-order")
    asked = person.requests[before:]
    assert [r.tool for r in asked] == ["browser_request_access", "browser_type", "browser_click"]
    assert [r.effect.kind.value for r in asked[1:] if r.effect] == ["credential", "pay"]
    # Another site is not part of the plan: it asks.
    other = pages.url(f"effects/social.html?t={uuid.uuid4().hex[:8]}", host="localhost")
    await agent.ok("browser_navigate", tab_id=tab, url=other)
    assert person.requests[-1].leaving == other
