"""Frames of other sites (issue 26, finding 1): a checkout whose card form is a payment
provider's frame, with a verification frame of a third site inside it, as an agent uses it.

Each site is its own (``*-e2e.test`` resolves to the tests' page server: tests/e2e/chromium.py),
so Chrome runs each frame in a process of its own and Tabrelay reaches it through a child
session of the tab's (``tools/page/child_sessions.py``). Snapshot, find, content by ref, typing,
clicking, filling, pictures, approvals, locators (and their Playwright ``frame_locator`` chains)
and the guard work there as they do in the page itself; and in a frame of another origin of the
same site, which Chrome keeps in the page's process.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from e2e.agent import Agent, ref
from e2e.chromium import HOST_RULES
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from e2e.images import jpeg_size
from tabrelay.config.settings import SettingsStore
from tabrelay.errors import CommandFailed
from tabrelay.recipes.model import Locator
from tabrelay.tools.groups.actions import ClickParams
from tabrelay.tools.page.locators import TargetMissing, find, locator_of
from tabrelay.tools.state.tab_state import AUTO_ATTACH
from tabrelay.tools.targets import describe_touches

pytestmark = E2E

BLOCKED = "blocked-e2e.test"


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def blocked_site(app: AppUnderTest) -> AsyncIterator[None]:
    def block(settings: object) -> None:
        settings.navigation.block = [BLOCKED]  # type: ignore[attr-defined]

    await asyncio.to_thread(SettingsStore(app.paths.settings_file).update, block)
    await wait_until(
        lambda: app.harness.core.settings.navigation.block, timeout=5, message="the block list"
    )
    yield


def checkout(
    pages: PageServer, *, inner: bool = False, terms: str = "", receipt: str = ""
) -> tuple[str, str]:
    """The checkout page's URL and its card frame's (on pay-e2e.test; with ``inner``, a
    verification frame of verify-e2e.test inside it; ``terms``: where its terms link goes;
    ``receipt``: the file its "Save the receipt" link saves)."""
    run = uuid.uuid4().hex[:8]
    query = {"r": run}
    if inner:
        query["inner"] = pages.url(f"reach/verify.html?r={run}", host="verify-e2e.test")
    if terms:
        query["terms"] = terms
    if receipt:
        query["receipt"] = receipt
    card = pages.url(f"reach/card.html?{urllib.parse.urlencode(query)}", host="pay-e2e.test")
    return pages.url(f"reach/checkout.html?card={urllib.parse.quote(card)}"), card


def posted(pages: PageServer, host: str, path: str) -> bool:
    return ("POST", f"{host}:{pages.port}", path) in pages.requests


async def persons_tab_with_a_blocked_frame(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> tuple[Page, int]:
    """The person's own tab (opened before any agent came, its loads not guarded) on the
    checkout, its card frame from a blocked site, loaded; and its tab id."""
    url, card = checkout(pages)
    blocked = card.replace("pay-e2e.test", BLOCKED)
    own = url.replace(urllib.parse.quote(card), urllib.parse.quote(blocked))
    page = await browser.open_page(own, own_window=True)
    await wait_until(lambda: pages.hits(blocked), timeout=5, message="the frame loaded")
    tabs = (await agent.call("browser_list_tabs")).structured_content["tabs"]
    return page, next(int(t["id"]) for t in tabs if t["url"] == own)


async def picture_size(agent: Agent, tab: int, element: str) -> tuple[int, int]:
    """The size of ``browser_screenshot``'s picture of one element (CSS pixels)."""
    shot = await agent.call("browser_screenshot", tab_id=tab, ref=element)
    assert not shot.is_error, shot
    return shot.structured_content["width"], shot.structured_content["height"]


async def stopped(app: AppUnderTest, pages: PageServer, tab: int, away: str) -> None:
    """The guard stopped the tab's load of ``away`` (a blocked site), which was never reached."""
    await wait_until(
        lambda: app.harness.core.tabs.tab(app.browsers()[0].id, tab).log.stopped,
        timeout=10,
        message="the guard stopped the load",
    )
    assert pages.hits(away) == [], "the blocked site was reached"


async def test_a_card_form_in_another_sites_frame_is_read_filled_and_paid(
    agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages)
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    assert "not included" not in snapshot, snapshot
    lines = [line.strip() for line in snapshot.splitlines()]
    frame = lines.index('iframe "Card payment"')
    assert re.fullmatch(r'textbox "Name on card" \[e\d+\]', lines[frame + 2]), snapshot
    name = ref(snapshot, "textbox", "Name on card")
    said = await agent.ok("browser_type", tab_id=tab, ref=name, text="Ada Lovelace")
    assert said.startswith("Typed"), said
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Pay now"))
    await wait_until(
        lambda: posted(pages, "pay-e2e.test", "/record?paid=Ada%20Lovelace"),
        timeout=10,
        message="the payment reached the card frame's server",
    )
    after = await agent.snapshot(tab)
    assert "Paid by Ada Lovelace" in after, after
    # The page's own controls still work beside it.
    assert ref(after, "button", "Back to cart")


async def test_a_frame_of_a_third_site_inside_it_is_read_and_used_too(
    agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages, inner=True)
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    lines = [line.rstrip() for line in snapshot.splitlines()]
    inner = next(i for i, line in enumerate(lines) if line.strip() == 'iframe "Verification"')
    outer = next(i for i, line in enumerate(lines) if line.strip() == 'iframe "Card payment"')
    assert outer < inner, snapshot
    depth = len(lines[inner]) - len(lines[inner].lstrip())
    assert depth > len(lines[outer]) - len(lines[outer].lstrip()), "nested under the card frame"
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Code"), text="4711")
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Confirm"))
    await wait_until(
        lambda: posted(pages, "verify-e2e.test", "/record?verified=4711"),
        timeout=10,
        message="the code reached the verification frame's server",
    )
    assert "Confirmed 4711" in await agent.snapshot(tab)


async def test_find_content_fill_and_picture_reach_into_the_frame(
    agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages)
    tab = await agent.open(url)
    found = await agent.ok("browser_find", tab_id=tab, text="Pay now")
    assert re.search(r'button "Pay now" \[e\d+\]', found), found
    snapshot = await agent.snapshot(tab)
    form = await agent.ok(
        "browser_get_content", tab_id=tab, ref=ref(snapshot, "button", "Pay now"), format="text"
    )
    assert "Pay now" in form, form
    filled = await agent.ok(
        "browser_fill_form",
        tab_id=tab,
        fields=[{"ref": ref(snapshot, "textbox", "Name on card"), "value": "Grace Hopper"}],
    )
    assert filled.startswith("Filled the form"), filled
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Pay now"))
    await wait_until(
        lambda: posted(pages, "pay-e2e.test", "/record?paid=Grace%20Hopper"),
        timeout=10,
        message="the filled name reached the card frame's server",
    )
    # A picture of the button alone (its place is the frame's place in the page plus its own).
    width, height = await picture_size(agent, tab, ref(snapshot, "button", "Pay now"))
    assert 30 <= width <= 200 and 10 <= height <= 60, (width, height)


async def test_a_frame_of_a_blocked_site_is_left_out_and_cannot_be_gone_to(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    # The person's own tab, loaded before any agent came: its frame of a blocked site loaded.
    page, tab = await persons_tab_with_a_blocked_frame(agent, browser, pages)
    try:
        snapshot = await agent.snapshot(tab)
        assert "is not included: agents may not use it" in snapshot, snapshot
        assert "Name on card" not in snapshot, snapshot
    finally:
        await page.close()
    # In a tab the agent drives, the card frame's link to a blocked site is stopped.
    away = pages.url(f"index.html?r={uuid.uuid4().hex[:8]}", host=BLOCKED)
    url, _ = checkout(pages, terms=away)
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Card terms"))
    await stopped(app, pages, tab, away)


async def test_an_approval_names_the_frame_and_pictures_the_element_there(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages)
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    ctx = await app.tool_context(tab)
    try:
        pay = ClickParams(ref=ref(snapshot, "button", "Pay now"))
        touches = await describe_touches(ctx, "click", pay)
        [view] = touches.targets
        assert view.problem is None, view.problem
        assert view.frame == f"frame http://pay-e2e.test:{pages.port}/reach/card.html"
        assert (view.role, view.name) == ("button", "Pay now")
        assert view.facts is not None  # its effect is judged from what the frame shows
        async with touches.shown(timeout=5) as shown:
            [pictured] = shown
            assert pictured.picture is not None
            width, height = jpeg_size(pictured.picture)
            assert width > 0 and height > 0
    finally:
        await ctx.release_objects()


async def test_a_frames_element_has_a_locator_through_its_frames_that_finds_it_again(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages, inner=True)
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    ctx = await app.tool_context(tab)
    try:
        name = await locator_of(ctx, ref=ref(snapshot, "textbox", "Name on card"))
        code = await locator_of(ctx, ref=ref(snapshot, "textbox", "Code"))
        assert name is not None and code is not None
        assert (name.role, name.name, name.frames) == ("textbox", "Name on card", ["#card"])
        assert (code.role, code.name, code.frames) == ("textbox", "Code", ["#card", "#inner"])
        # One element, one ref: found again, it is the very ref the snapshot gave it.
        assert await find(ctx, name, timeout=5) == ref(snapshot, "textbox", "Name on card")
        assert await find(ctx, code, timeout=5) == ref(snapshot, "textbox", "Code")
        nowhere = Locator(role="button", name="Pay now", css="button", frames=["#card", "#none"])
        with pytest.raises(TargetMissing, match="its frame"):
            await find(ctx, nowhere, timeout=0.5)
    finally:
        await ctx.release_objects()
    # The recipe export's frame_locator chain runs in Playwright, on the same page.
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    pay = Locator(role="button", name="Pay now", css="form > button", frames=["#card"])
    await asyncio.to_thread(_pay_with_playwright, url, name, pay)
    await wait_until(
        lambda: posted(pages, "pay-e2e.test", "/record?paid=Playwright"),
        timeout=10,
        message="Playwright paid through the frame chain",
    )


def _pay_with_playwright(url: str, name: Locator, pay: Locator) -> None:
    from playwright.sync_api import FrameLocator, sync_playwright

    def located(page: Page, locator: Locator) -> Any:
        scope: Page | FrameLocator = page
        for frame in locator.frames:
            scope = scope.frame_locator(frame)
        return scope.get_by_role(locator.role, name=locator.name, exact=True)  # type: ignore[arg-type]

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=[HOST_RULES])
        try:
            page = chromium.new_page()
            page.goto(url)
            located(page, name).fill("Playwright")
            located(page, pay).click()
            located(page, pay).page.wait_for_timeout(500)  # the frame's fetch goes out
        finally:
            chromium.close()


async def test_a_card_form_of_another_origin_of_the_same_site_is_used_the_same_way(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """Another port of the same host: another origin, but the same site, so Chrome runs the
    frame in the page's own process (no child session); it is read in a world of its own."""
    with PageServer() as other:
        card = other.url(f"reach/card.html?r={uuid.uuid4().hex[:8]}")
        tab = await agent.open(pages.url(f"reach/checkout.html?card={urllib.parse.quote(card)}"))
        snapshot = await agent.snapshot(tab)
        assert "not included" not in snapshot, snapshot
        name = ref(snapshot, "textbox", "Name on card")
        await agent.ok("browser_type", tab_id=tab, ref=name, text="Ada Lovelace")
        refused = await agent.fails("browser_get_content", tab_id=tab, ref=name, format="text")
        assert "card detail field" in refused and "Ada Lovelace" not in refused, refused
        pay = ref(snapshot, "button", "Pay now")
        assert "Pay now" in await agent.ok("browser_get_content", tab_id=tab, ref=pay)
        ctx = await app.tool_context(tab)
        try:
            located = await locator_of(ctx, ref=name)
            assert located is not None and located.frames == ["#card"], located
            assert await find(ctx, located, timeout=5) == name
        finally:
            await ctx.release_objects()
        await agent.ok("browser_click", tab_id=tab, ref=pay)
        await wait_until(
            lambda: posted(other, "127.0.0.1", "/record?paid=Ada%20Lovelace"),
            timeout=10,
            message="the payment reached the other origin's server",
        )


async def test_a_locator_into_a_blocked_sites_frame_finds_nothing_there(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A recipe's step (a saved, maybe imported, frame path) cannot reach into a frame of a
    site agents may not use, though the person's own tab loaded it."""
    page, tab = await persons_tab_with_a_blocked_frame(agent, browser, pages)
    try:
        ctx = await app.tool_context(tab, guard=True)
        try:
            name = Locator(role="textbox", name="Name on card", css="#name", frames=["#card"])
            with pytest.raises(TargetMissing, match="its frame"):
                await find(ctx, name, timeout=1)
        finally:
            await ctx.release_objects()
    finally:
        await page.close()


async def test_a_frame_that_comes_later_inside_another_sites_frame_is_guarded_too(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    url, _ = checkout(pages, inner=True)
    tab = await agent.open(url)
    assert 'textbox "Code"' in await agent.snapshot(tab)
    # The verification frame goes to a third site (a process, and a child session, anew), then
    # from there to a blocked site: held in the new frame's own session.
    later = pages.url(f"index.html?r={uuid.uuid4().hex[:8]}", host="later-e2e.test")
    away = pages.url(f"index.html?r={uuid.uuid4().hex[:8]}", host=BLOCKED)
    inner = "document.getElementById('card').contentWindow.frames[0]"
    await agent.ok("browser_evaluate", tab_id=tab, expression=f"{inner}.location = {later!r}")
    await wait_until(lambda: pages.hits(later), timeout=10, message="the third site loaded")
    await asyncio.sleep(0.5)  # its session attached and guarded
    await agent.ok("browser_evaluate", tab_id=tab, expression=f"{inner}.location = {away!r}")
    await stopped(app, pages, tab, away)


async def test_a_new_frame_of_another_site_that_moves_on_at_once_to_a_blocked_site_is_held(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """A frame that comes to a third site (a process, and a child session, anew) and sends
    itself on to a blocked site as its first script runs, before anything could have waited
    for its session to be guarded: the guard holds that load too (40 rounds of 40 when this
    was written; five here)."""
    url, _ = checkout(pages, inner=True)
    tab = await agent.open(url)
    assert 'textbox "Code"' in await agent.snapshot(tab)
    inner = "document.getElementById('card').contentWindow.frames[0]"
    for _ in range(5):
        run = uuid.uuid4().hex[:8]
        away = pages.url(f"index.html?r={run}", host=BLOCKED)
        later = pages.url(f"go/now?to={urllib.parse.quote(away)}&r={run}", host="later-e2e.test")
        await agent.ok("browser_evaluate", tab_id=tab, expression=f"{inner}.location = {later!r}")
        await wait_until(lambda later=later: pages.hits(later), timeout=10, message="moved on")
        await stopped(app, pages, tab, away)
        app.harness.core.tabs.tab(app.browsers()[0].id, tab).log.stopped = None


async def test_a_frames_control_under_a_banner_of_the_page_around_it_is_not_clicked(
    agent: Agent, pages: PageServer
) -> None:
    """The frame itself sees nothing over its button; the page around it does: the click would
    land on the banner, so it is refused, saying so, until the banner goes."""
    url, _ = checkout(pages)
    tab = await agent.open(url + "&cover=1")
    snapshot = await agent.snapshot(tab)
    pay = ref(snapshot, "button", "Pay now")
    refused = await agent.fails("browser_click", tab_id=tab, ref=pay)
    assert "covered by something of the page around its frame" in refused, refused
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Accept"))
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Name on card"),
                   text="Ada")  # fmt: skip
    await agent.ok("browser_click", tab_id=tab, ref=pay)
    await wait_until(
        lambda: posted(pages, "pay-e2e.test", "/record?paid=Ada"),
        timeout=10,
        message="paid once the banner went",
    )


async def paid_where_the_frame_is(
    agent: Agent, pages: PageServer, placed: str, name: str
) -> tuple[int, str]:
    """The card frame placed by ``placed`` (a query of the checkout page): the name typed into
    it and *Pay now* clicked reach its server. The tab and its snapshot."""
    url, _ = checkout(pages)
    tab = await agent.open(f"{url}&{placed}")
    snapshot = await agent.snapshot(tab)
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Name on card"),
                   text=name)  # fmt: skip
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Pay now"))
    await wait_until(
        lambda: posted(pages, "pay-e2e.test", f"/record?paid={name}"),
        timeout=10,
        message=f"paid in the frame placed by {placed}",
    )
    return tab, snapshot


async def test_a_frame_below_the_fold_is_scrolled_into_the_pages_view_before_acting(
    agent: Agent, pages: PageServer
) -> None:
    await paid_where_the_frame_is(agent, pages, "low=1", "Low")


async def test_a_frame_drawn_smaller_by_a_transform_is_typed_into_and_clicked_where_it_is_drawn(
    agent: Agent, pages: PageServer
) -> None:
    tab, snapshot = await paid_where_the_frame_is(agent, pages, "scaled=1", "Small")
    # Its picture is taken where it is drawn, too: the element's box in the tab's viewport.
    width, height = await picture_size(agent, tab, ref(snapshot, "button", "Pay now"))
    assert 18 <= width <= 120 and 6 <= height <= 36, (width, height)


async def test_a_link_in_another_sites_frame_that_saves_a_file_is_followed_to_the_file(
    agent: Agent, pages: PageServer
) -> None:
    body = b"Receipt: one teapot, 24.00 EUR\n"
    path = f"files/{uuid.uuid4().hex[:6]}/receipt"
    pages.serve(path, body, "text/plain")
    url, _ = checkout(pages, receipt=pages.url(path, host="pay-e2e.test"))
    tab = await agent.open(url)
    snapshot = await agent.snapshot(tab)
    said = await agent.ok(
        "browser_click", tab_id=tab, ref=ref(snapshot, "link", "Save the receipt")
    )
    match = re.search(r"download (d\d+): receipt[^./]*\.txt \(31 bytes, text/plain\)", said)
    assert match, said
    assert "one teapot" in await agent.ok("browser_get_content", download_id=match.group(1))


async def test_a_command_to_a_frame_whose_session_ends_meanwhile_is_answered_at_once(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """Chrome may never answer a command sent to a frame's child session that ends before it
    is done (the frame navigated, or removed): the extension answers it when the session ends,
    so nothing waits for it until the command's timeout."""
    url, _ = checkout(pages)
    tab = await agent.open(url)
    relay = await app.browser()
    state = app.harness.core.tabs.get(relay.id, tab)
    assert state is not None
    seen: set[str] = set()
    slow: list[tuple[str, float, list[object]]] = []
    ended = 0  # commands answered as their frame went away
    for attempt in range(8):
        await agent.snapshot(tab)  # the frame's session is learned

        def fresh() -> str | None:
            return next((s for s in state.session.children.values() if s not in seen), None)

        child = await wait_until(fresh, timeout=10, message="the card frame's new session")
        seen.add(child)
        gone = "document.getElementById('card').remove()" if attempt % 2 else "location.reload()"
        started = time.monotonic()
        outcomes = await asyncio.gather(
            relay.cdp(tab, "Runtime.evaluate", {"expression": gone}),
            *(
                relay.cdp(tab, "Target.setAutoAttach", AUTO_ATTACH, session_id=child, timeout=20)
                for _ in range(3)
            ),
            return_exceptions=True,
        )
        took = time.monotonic() - started
        if took > 3:
            slow.append((gone, took, outcomes))
        ended += sum("went away" in str(o) for o in outcomes if isinstance(o, CommandFailed))
        if attempt % 2:
            await relay.cdp(tab, "Page.reload", {})
        await asyncio.sleep(0.3)
    assert slow == [], slow
    assert ended > 0, "no command was running as its frame went away"
