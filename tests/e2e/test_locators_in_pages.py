"""Locators in real pages: what ``tools/page/locators.py`` captures of each kind of control (checked
against Chrome's accessibility tree and Playwright's own locators), and ``find`` bringing the
element back after a re-render, in a frame, once it appears, or saying what is near instead.

Pages under tests/e2e/pages/locators/. The tests build a ``ToolContext`` over the running
app's own parts (its registry, hub, tab states), as a tool call does.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.recipes.model import Locator
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.context import Params, ToolContext
from tabrelay.tools.groups.actions import ClickParams, DragParams, PressKeyParams
from tabrelay.tools.groups.forms import FillFormParams
from tabrelay.tools.page.locators import TargetMissing, find, locator_of
from tabrelay.tools.results import plain
from tabrelay.tools.targets import capture_targets

pytestmark = E2E


async def opened(
    agent: Agent, browser: ExtensionBrowser, app: AppUnderTest, url: str
) -> tuple[int, Page, ToolContext]:
    url = f"{url}?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    return tab, page, await app.tool_context(tab)


async def captured(ctx: ToolContext, selector: str) -> Locator:
    locator = await locator_of(ctx, selector=selector)
    assert locator is not None, f"no locator for {selector}"
    return locator


# What each control on controls.html is, by role and name (get_by_role's view of it).
CONTROLS = {
    "#c-heading": ("heading", "Order form"),
    "#c-link": ("link", "Help & support"),
    "#c-icon-link": ("link", "Home"),
    "#c-name": ("textbox", "Full name"),
    "#c-email": ("textbox", "Email"),
    "#c-search": ("searchbox", "Search products"),
    "#c-phone": ("textbox", "Phone number"),
    "#c-city": ("combobox", "City"),
    "#c-notes": ("textbox", "Delivery notes"),
    "#c-size": ("combobox", "Size"),
    "#c-option": ("option", "Large"),
    "#c-tops": ("listbox", "Toppings"),
    "#c-gift": ("checkbox", "Gift wrap"),
    "#c-express": ("radio", "Express"),
    "#c-qty": ("spinbutton", "Quantity"),
    "#c-vol": ("slider", "Volume"),
    "#c-submit": ("button", "Place order"),
    "#c-button": ("button", "Add to cart"),
    "#c-icon": ("button", "Settings"),
    "#c-img": ("img", "Company logo"),
    "#c-tab": ("tab", "Shipping"),
    "#c-menuitem": ("menuitem", "Export as CSV"),
    "#c-switch": ("switch", "Dark mode"),
}
_CHROME_ROLES = {"image": "img"}  # Chrome's AX tree names a few roles its own way


async def test_each_kind_of_control_is_described_by_its_role_and_name_as_chrome_sees_it(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    _tab, page, ctx = await opened(agent, browser, app, pages.url("locators/controls.html"))
    for selector, (role, name) in CONTROLS.items():
        locator = await captured(ctx, selector)
        assert (locator.role, locator.name) == (role, name), selector
        assert locator.frames == []
        # Chrome's own accessibility tree says the same of the element.
        found = await ctx.cdp(
            "Runtime.evaluate",
            {"expression": f"document.querySelector({json.dumps(selector)})"},
        )
        backend = (await ctx.cdp("DOM.describeNode", {"objectId": found["result"]["objectId"]}))[
            "node"
        ]["backendNodeId"]
        ax = await ctx.cdp(
            "Accessibility.getPartialAXTree", {"backendNodeId": backend, "fetchRelatives": False}
        )
        node = next(n for n in ax["nodes"] if n.get("backendDOMNodeId") == backend)
        chrome_role = str(node["role"]["value"])
        assert (_CHROME_ROLES.get(chrome_role, chrome_role), node["name"]["value"]) == (
            role,
            name,
        ), selector
    # The other ways, each kept because it names this element alone.
    full_name = await captured(ctx, "#c-name")
    assert (full_name.label, full_name.test_id, full_name.text) == ("Full name", "name-field", None)
    email = await captured(ctx, "#c-email")
    assert (email.label, email.placeholder) == ("Email", "you@example.com")
    box = await captured(ctx, "#c-box")
    assert (box.role, box.test_id, box.text) == (None, "summary-box", "Total: 42 €")
    para = await captured(ctx, "#c-para")
    assert (para.role, para.text) == (None, "Prices include all taxes.")
    assert (await captured(ctx, "#c-button")).css == "#c-button"
    await page.close()


def _playwright_counts(url: str, locators: dict[str, Locator]) -> dict[str, dict[str, int]]:
    """How many elements Playwright's own locators find for each way each locator offers, in
    Debian's Chromium (what the recipe export will use)."""
    from playwright.sync_api import sync_playwright

    counts: dict[str, dict[str, int]] = {}
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium")
        try:
            page = chromium.new_page()
            page.goto(url)
            for selector, loc in locators.items():
                ways: dict[str, int] = {}
                if loc.role is not None:
                    by_role = page.get_by_role(loc.role, name=loc.name, exact=True)  # type: ignore[arg-type]
                    ways["role"] = by_role.count()
                    ways["role_is_it"] = by_role.evaluate_all(
                        f"(els) => els.length === 1 && els[0].matches({json.dumps(selector)})"
                    )
                if loc.label is not None:
                    ways["label"] = page.get_by_label(loc.label, exact=True).count()
                if loc.placeholder is not None:
                    ways["placeholder"] = page.get_by_placeholder(
                        loc.placeholder, exact=True
                    ).count()
                if loc.test_id is not None:
                    ways["test_id"] = page.get_by_test_id(loc.test_id).count()
                if loc.text is not None:
                    ways["text"] = page.get_by_text(loc.text, exact=True).count()
                ways["css"] = page.locator(loc.css).count()
                counts[selector] = ways
        finally:
            chromium.close()
    return counts


async def test_playwright_finds_exactly_the_captured_element_by_each_way_kept(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    _tab, page, ctx = await opened(agent, browser, app, pages.url("locators/controls.html"))
    selectors = [*CONTROLS, "#c-box", "#c-para"]
    locators = {s: await captured(ctx, s) for s in selectors}
    counts = await asyncio.to_thread(
        _playwright_counts, pages.url("locators/controls.html"), locators
    )
    for selector, ways in counts.items():
        expected = {way: 1 for way in ways}
        if "role_is_it" in ways:
            expected["role_is_it"] = True
        assert ways == expected, (selector, locators[selector])
    await page.close()


async def test_a_way_that_names_two_elements_is_dropped_and_the_css_path_kept(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/duplicates.html"))
    first = await captured(ctx, "#first button")
    assert (first.role, first.name, first.text, first.label) == (None, None, None, None)
    assert first.css == "#first > button:nth-of-type(1)"
    publish = await captured(ctx, "#publish")
    assert (publish.role, publish.name, publish.text) == ("button", "Publish", "Publish")
    # The CSS path is what finds the first Save again, and it is that one.
    found = await find(ctx, first, timeout=2)
    await agent.ok("browser_click", tab_id=tab, ref=found)
    await page.close()


async def test_find_brings_back_an_element_the_page_rendered_again_with_new_ids_and_classes(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/rerender.html"))
    button = await captured(ctx, "#app button")
    field = await captured(ctx, "#app input")
    assert (button.role, button.name) == ("button", "Apply coupon")
    assert (field.role, field.name, field.label) == ("textbox", "Coupon code", "Coupon code")
    assert "apply-" not in button.css  # a generated-looking id is not a way back
    await page.evaluate("render(); render()")  # new nodes, ids and classes; moved and reordered
    found = await find(ctx, button, timeout=5)
    await agent.ok("browser_click", tab_id=tab, ref=found)
    assert await page.evaluate("window.clicked") == [3]
    typed_into = await find(ctx, field, timeout=5)
    await agent.ok("browser_type", tab_id=tab, ref=typed_into, text="SPRING")
    assert await page.evaluate("document.querySelector('#app input').value") == "SPRING"
    await page.close()


async def test_find_reaches_into_a_same_origin_frame(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/outer.html"))
    snapshot = await agent.snapshot(tab)
    inner = await locator_of(ctx, ref=ref(snapshot, "textbox", "Name on card"))
    assert inner is not None
    assert (inner.role, inner.name, inner.frames) == ("textbox", "Name on card", ["#payment"])
    # "Pay now" is on the outer page too: the frame path says which one.
    pay = Locator(role="button", name="Pay now", css="body > button", frames=["#payment"])
    await agent.ok("browser_click", tab_id=tab, ref=await find(ctx, pay, timeout=5))
    assert await page.evaluate("document.getElementById('payment').contentWindow.paid") is True
    assert await page.evaluate("window.paid === undefined")
    # One element, one ref: the locator finds the very ref the snapshot gave the field.
    found = await find(ctx, inner, timeout=5)
    assert found == ref(snapshot, "textbox", "Name on card")
    await agent.ok("browser_type", tab_id=tab, ref=found, text="Ada")
    value = "document.getElementById('payment').contentDocument.getElementById('card-name').value"
    assert await page.evaluate(value) == "Ada"
    await page.close()


async def test_find_waits_for_an_element_that_appears_later(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/late.html"))
    started = time.monotonic()
    found = await find(ctx, Locator(role="button", name="Continue", css="body > button"))
    assert time.monotonic() - started < 5
    assert await page.evaluate("!!document.querySelector('button')")
    await agent.ok("browser_click", tab_id=tab, ref=found)
    await page.close()


async def test_a_missing_element_says_what_was_tried_and_what_the_page_offers_nearby(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    _tab, page, ctx = await opened(agent, browser, app, pages.url("locators/controls.html"))
    wanted = Locator(role="button", name="Add to basket", text="Add to basket", css="#gone")
    started = time.monotonic()
    with pytest.raises(TargetMissing) as missing:
        await find(ctx, wanted, timeout=1)
    assert 0.8 < time.monotonic() - started < 4
    # The recipe's words and the page's are marked as the page's (``results.page_text``).
    message = plain(missing.value.message)
    assert message.startswith('could not find button "Add to basket" within 1 s')
    assert 'role "button \\"Add to basket\\"": none' in message
    assert 'css "#gone": none' in message
    assert 'the page offers nearby: button "Add to cart"' in message
    offered = message.split("nearby: ", 1)[1].split(", ")
    assert 1 <= len(offered) <= 5
    await page.close()


async def test_no_field_value_is_ever_in_a_locator_or_a_missing_element_message(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    _tab, page, ctx = await opened(agent, browser, app, pages.url("locators/secret.html"))
    await page.type_into("#pw", "CANARY-TYPED-991")
    said: list[Any] = []
    for selector in ("#user", "#pw", "#remember", "#note", "#go", "form", "body"):
        locator = await captured(ctx, selector)
        said.append(locator.model_dump())
    pw = await captured(ctx, "#pw")
    assert (pw.role, pw.name, pw.label) == ("textbox", "Password", "Password")
    for wanted in ("Canary", "Sign", "Remember", "Note", "never", "always"):
        with pytest.raises(TargetMissing) as missing:
            await find(ctx, Locator(role="textbox", name=wanted + " x", css="#gone"), timeout=0.3)
        said.append(missing.value.message)
    assert "CANARY" not in json.dumps(said, ensure_ascii=False)
    await page.close()


async def test_huge_and_hostile_pages_are_described_and_searched_in_bounded_time(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/hostile.html"))
    await wait_until(lambda: page.evaluate("!!document.getElementById('long')"), timeout=10)
    started = time.monotonic()
    odd = await captured(ctx, "#odd")
    assert odd.role == "button"
    assert odd.name == 'Say "hi" it\'s — 日本語 🎉 </script>'
    long = await captured(ctx, "#long")
    assert (long.role, long.text, long.css) == (None, None, "#long")
    buy = await captured(ctx, "#many > div:nth-of-type(5000) > button")
    assert (buy.role, buy.text) == (None, None)  # 10,000 buttons say "Buy"
    assert buy.css == "#many > div:nth-of-type(5000) > button:nth-of-type(1)"
    assert time.monotonic() - started < 3 * 2.5
    found = await find(ctx, odd, timeout=5)
    await agent.ok("browser_click", tab_id=tab, ref=await find(ctx, buy, timeout=5))
    assert found
    started = time.monotonic()
    with pytest.raises(TargetMissing):
        await find(ctx, Locator(role="button", name="Sell", css="#nothing"), timeout=1)
    assert time.monotonic() - started < 1 + 3 + 1
    await page.close()


async def test_find_stops_at_once_when_cancelled(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    _tab, page, ctx = await opened(agent, browser, app, pages.url("locators/controls.html"))
    waiting = asyncio.create_task(
        find(ctx, Locator(role="button", name="Never", css="#never"), timeout=30)
    )
    await asyncio.sleep(0.5)
    assert not waiting.done()
    started = time.monotonic()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert time.monotonic() - started < 1
    await page.close()


async def taken(ctx: ToolContext, tool: str, params: Params) -> dict[str, Locator]:
    """The locators taken before a call of ``tool`` runs (as the endpoint takes them)."""
    return await capture_targets(ctx, BY_NAME[tool].touches, params)


async def test_a_recordable_call_gets_a_locator_for_each_element_it_names(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, ctx = await opened(agent, browser, app, pages.url("locators/controls.html"))
    snapshot = await agent.snapshot(tab)
    click = await taken(
        ctx, "browser_click", ClickParams(ref=ref(snapshot, "button", "Add to cart"))
    )
    assert list(click) == ["ref"] and click["ref"].name == "Add to cart"
    form = await taken(
        ctx,
        "browser_fill_form",
        FillFormParams(
            fields=[
                {"selector": "#c-name", "value": "Ada"},  # type: ignore[list-item]
                {"ref": ref(snapshot, "checkbox", "Gift wrap"), "value": True},  # type: ignore[list-item]
            ]
        ),
    )
    assert {k: v.name for k, v in form.items()} == {
        "fields.0": "Full name",
        "fields.1": "Gift wrap",
    }
    drag = await taken(
        ctx, "browser_drag", DragParams(source_selector="#c-tab", target_selector="#c-switch")
    )
    assert {k: v.name for k, v in drag.items()} == {"source": "Shipping", "target": "Dark mode"}
    key = await taken(ctx, "browser_press_key", PressKeyParams(key="Enter", selector="#c-search"))
    assert {k: v.role for k, v in key.items()} == {"element": "searchbox"}
    assert await taken(ctx, "browser_press_key", PressKeyParams(key="Enter")) == {}
    assert await taken(ctx, "browser_snapshot", ClickParams(selector="#c-name")) == {}
    # An element that is not there: no locator, no error.
    assert await taken(ctx, "browser_click", ClickParams(selector="#gone")) == {}
    await page.close()
