"""Every relay method against real tabs in real Chromium, through the real app.

Commands go through the app's ``Browser`` (as tools will); what the person would see is read
over the tests' own CDP connection: the pages, the badge, the on-page cue.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable

import pytest
import pytest_asyncio

from e2e.conftest import E2E
from e2e.harness import (
    OPTIONS_URL,
    AppUnderTest,
    ExtensionBrowser,
    Page,
    PageServer,
    next_event,
    wait_until,
)
from e2e.images import decode_data_url, jpeg_size, png_size
from tabrelay.errors import CommandFailed
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import Subscription

pytestmark = E2E

CUE = "document.getElementById('tabrelay-agent-cue') !== null"
VIEWPORT = "[innerWidth * devicePixelRatio, innerHeight * devicePixelRatio].map(Math.round)"


def unique_url(pages: PageServer, path: str = "index.html") -> str:
    """A test page URL no other tab shows, so the tests' CDP finds the right tab."""
    return pages.url(f"{path}?{uuid.uuid4().hex[:12]}")


@pytest_asyncio.fixture(loop_scope="module")
async def relay(app: AppUnderTest, browser: ExtensionBrowser) -> Browser:
    return await app.browser()


@pytest_asyncio.fixture(loop_scope="module")
async def events(app: AppUnderTest) -> AsyncIterator[Subscription]:
    subscription = app.harness.core.hub.subscribe()
    try:
        yield subscription
    finally:
        subscription.close()


@pytest_asyncio.fixture(loop_scope="module")
async def tab(relay: Browser, pages: PageServer) -> AsyncIterator[int]:
    """A fresh tab on the test page, opened by the agent; closed afterwards."""
    async with opened_tab(relay, pages, active=True) as tab_id:
        yield tab_id


@pytest_asyncio.fixture(loop_scope="module")
async def background_tab(relay: Browser, pages: PageServer) -> AsyncIterator[int]:
    """Like ``tab``, but opened behind the tab in front (see ``bring_to_front``)."""
    async with opened_tab(relay, pages, active=False) as tab_id:
        yield tab_id


@contextlib.asynccontextmanager
async def opened_tab(relay: Browser, pages: PageServer, *, active: bool) -> AsyncIterator[int]:
    url = unique_url(pages)
    created = await relay.create_tab(url, active=active)
    await wait_for_url(relay, created.id, url)
    try:
        yield created.id
    finally:
        if created.id in {t.id for t in await relay.list_tabs()}:
            await relay.close_tab(created.id)


async def wait_for_url(relay: Browser, tab_id: int, url: str) -> None:
    async def loaded() -> bool:
        result = await relay.cdp(
            tab_id,
            "Runtime.evaluate",
            {"expression": "[location.href, document.readyState]", "returnByValue": True},
        )
        return bool(result["result"]["value"] == [url, "complete"])

    await wait_until(loaded, timeout=10, message=f"tab {tab_id} shows {url}")


async def _equals(value: Awaitable[object], expected: object) -> bool:
    return await value == expected


async def evaluate(relay: Browser, tab_id: int, expression: str) -> object:
    result = await relay.cdp(
        tab_id, "Runtime.evaluate", {"expression": expression, "returnByValue": True}
    )
    return result["result"]["value"]


async def bring_to_front(
    relay: Browser, browser: ExtensionBrowser, tab_id: int, page: Page
) -> list[int]:
    """Bring a tab from the back to the front; then its viewport in device pixels.

    Chrome shows its "started debugging this browser" bar while the extension debugs any tab.
    It slides the bar into the tab in front when the bar appears (the extension attaches to its
    first tab) or goes (5 s after it let go of its last), and into a tab that opens in front
    while the bar is up; the page is resized, sometimes in steps, until the slide ends (about
    150 ms after the attach or the new tab were reported done), and nothing reports that end
    (neither chrome.tabs nor CDP sees it coming). A tab brought to the front gets the bar as
    it then is, at once: a test measures and captures after that, never during a slide.
    ``page`` is the tests' own view of the tab, so looking at it never attaches the extension
    (which would bring the bar).
    """
    assert not (await relay.get_tab(tab_id)).active, "a tab in front may be sliding the bar"
    await relay.activate_tab(tab_id)
    size = f"chrome.tabs.get({tab_id}).then((t) => [t.width, t.height])"

    async def laid_out() -> bool:
        return bool(
            await page.evaluate("[innerWidth, innerHeight]") == await browser.in_worker(size)
        )

    await wait_until(laid_out, timeout=5, message="the page has the size Chrome gives the tab")
    return list(await page.evaluate(VIEWPORT))


def image_size(data_url: str, image_format: str) -> list[int]:
    """The size of a screenshot, decoded as a whole image of ``image_format``."""
    decoded_format, image = decode_data_url(data_url)
    assert decoded_format == image_format
    return list(png_size(image) if image_format == "png" else jpeg_size(image))


async def test_tabs_list_shows_real_tabs_but_not_extension_pages(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer, tab: int
) -> None:
    options = await browser.open_page(OPTIONS_URL)
    try:
        listed = {t.id: t for t in await relay.list_tabs()}
        assert listed[tab].url.startswith(pages.url("index.html?"))
        assert listed[tab].title == "Tabrelay test page"
        assert not any(t.url.startswith("chrome-extension://") for t in listed.values())
    finally:
        await options.close()


async def test_tabs_the_agent_opens_go_into_the_tabrelay_group(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer, tab: int
) -> None:
    second = await relay.create_tab(pages.url("second.html"), active=False)
    try:
        first = await relay.get_tab(tab)
        assert first.group_id != -1
        assert second.group_id == first.group_id
        assert first.shared and second.shared, "in agents' reach when only shared tabs are"
        title = await browser.in_worker(
            f"chrome.tabGroups.get({first.group_id}).then(g => g.title)"
        )
        assert title == "Tabrelay"
    finally:
        await relay.close_tab(second.id)


async def test_tabs_group_puts_tabs_into_a_named_group(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer, tab: int
) -> None:
    other = await relay.create_tab(pages.url("second.html"), active=False)
    try:
        answer = await relay.send_command(
            "tabs.group", {"tabIds": [tab, other.id], "title": "Research"}
        )
        group_id = answer["groupId"]
        assert {(await relay.get_tab(t)).group_id for t in (tab, other.id)} == {group_id}
        title = await browser.in_worker(f"chrome.tabGroups.get({group_id}).then(g => g.title)")
        assert title == "Research"
    finally:
        await relay.close_tab(other.id)


async def test_navigate_is_followed_by_page_load_event_and_keeps_the_tab_attached(
    relay: Browser, pages: PageServer, tab: int, events: Subscription
) -> None:
    await relay.cdp(tab, "Page.enable")
    assert tab in relay.attached_tabs
    # Another origin (another renderer process): the debugger must stay with the tab.
    target = pages.url("second.html", host="localhost")
    navigated = await relay.navigate(tab, target)
    assert navigated.id == tab

    await next_event(
        events, lambda e: e.kind == "cdp" and e.tab_id == tab and e.method == "Page.loadEventFired"
    )
    assert await evaluate(relay, tab, "location.href") == target
    assert tab in relay.attached_tabs
    assert await evaluate(relay, tab, CUE) is True, "the new page shows the agent cue too"


async def test_every_debugger_event_is_forwarded_to_the_app(
    relay: Browser, tab: int, events: Subscription
) -> None:
    await relay.cdp(tab, "Runtime.enable")
    await evaluate(relay, tab, "console.log('hello from the page'), 1")
    event = await next_event(
        events, lambda e: e.kind == "cdp" and e.method == "Runtime.consoleAPICalled"
    )
    assert event.tab_id == tab
    assert event.params["args"][0]["value"] == "hello from the page"


async def test_a_screenshot_decodes_as_an_image_of_the_viewport_size(
    relay: Browser, browser: ExtensionBrowser, background_tab: int
) -> None:
    page = await browser.attach_page((await relay.get_tab(background_tab)).url)
    try:
        viewport = await bring_to_front(relay, browser, background_tab, page)
        assert image_size(await relay.screenshot(), "png") == viewport
        jpeg = await relay.screenshot(image_format="jpeg", quality=60)
        assert image_size(jpeg, "jpeg") == viewport
        assert await page.evaluate(VIEWPORT) == viewport, "the page kept its size meanwhile"
    finally:
        await page.session.detach()


async def test_screenshots_follow_the_page_as_chrome_s_debugging_bar_goes_and_comes_back(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer, background_tab: int
) -> None:
    page = await browser.attach_page((await relay.get_tab(background_tab)).url)
    other = await relay.create_tab(pages.url("second.html"), active=False)
    try:
        with_bar = await bring_to_front(relay, browser, background_tab, page)
        assert image_size(await relay.screenshot(), "png") == with_bar

        # The extension lets go of every tab: 5 s later Chrome takes its bar away.
        for attached in sorted(relay.attached_tabs | {background_tab}):
            await relay.detach(attached)
        await wait_until(
            lambda: _taller(page, than=with_bar),
            timeout=15,
            message="Chrome takes its debugging bar away",
        )
        await relay.activate_tab(other.id)
        without_bar = await bring_to_front(relay, browser, background_tab, page)
        assert without_bar[0] == with_bar[0] and without_bar[1] > with_bar[1]

        # The debugger again, on the tab in the back: the bar comes back, the page shrinks, and
        # a screenshot shows it as it is now, not as it was measured before.
        await relay.activate_tab(other.id)
        await relay.attach(background_tab)
        assert await bring_to_front(relay, browser, background_tab, page) == with_bar
        assert image_size(await relay.screenshot(image_format="jpeg"), "jpeg") == with_bar
    finally:
        await page.session.detach()
        await relay.close_tab(other.id)


async def _taller(page: Page, *, than: list[int]) -> bool:
    return bool((await page.evaluate(VIEWPORT))[1] > than[1])


async def test_get_activate_and_close_act_on_the_real_tab(
    relay: Browser, pages: PageServer, events: Subscription
) -> None:
    first = await relay.create_tab(pages.url("index.html"))
    second = await relay.create_tab(pages.url("second.html"))
    assert (await relay.get_tab(second.id)).active

    await relay.activate_tab(first.id)
    assert (await relay.get_tab(first.id)).active
    assert not (await relay.get_tab(second.id)).active
    await next_event(events, lambda e: e.method == "activated" and e.tab_id == first.id)

    await relay.close_tab(first.id)
    await relay.close_tab(second.id)
    await next_event(events, lambda e: e.method == "removed" and e.tab_id == second.id)
    with pytest.raises(CommandFailed) as closed:
        await relay.get_tab(first.id)
    assert closed.value.code == "no_tab"
    assert first.id not in {t.id for t in await relay.list_tabs()}


async def test_tab_events_keep_the_apps_tab_list_live(
    relay: Browser, pages: PageServer, events: Subscription
) -> None:
    created = await relay.create_tab(unique_url(pages))
    try:
        await next_event(events, lambda e: e.method == "created" and e.tab_id == created.id)
        await next_event(
            events,
            lambda e: (
                e.method == "updated"
                and e.tab_id == created.id
                and e.params.get("title") == "Tabrelay test page"
            ),
        )
        # The app's list follows without asking (tabs.create's own answer may carry an older
        # snapshot of the tab; the events after it bring the list up to date).
        await wait_until(
            lambda: relay.tabs[created.id].title == "Tabrelay test page",
            timeout=5,
            message="the app's tab list shows the loaded title",
        )
    finally:
        await relay.close_tab(created.id)
    await next_event(events, lambda e: e.method == "removed" and e.tab_id == created.id)
    assert created.id not in relay.tabs


async def test_attach_and_detach_show_in_status_badge_and_page(
    relay: Browser, browser: ExtensionBrowser, tab: int
) -> None:
    await relay.attach(tab)
    await wait_until(lambda: tab in relay.attached_tabs, timeout=5, message="status: attached")
    await wait_until(lambda: _equals(browser.badge(tab), "AI"), timeout=5, message="badge AI")
    assert await evaluate(relay, tab, CUE) is True
    page = await browser.attach_page((await relay.get_tab(tab)).url)
    try:
        await relay.detach(tab)
        await wait_until(lambda: tab not in relay.attached_tabs, timeout=5, message="detached")
        await wait_until(
            lambda: _equals(browser.badge(tab), "ON"), timeout=5, message="the badge is ON again"
        )
        assert await page.evaluate(CUE) is False, "the cue leaves with the debugger"
    finally:
        await page.session.detach()


async def test_closing_a_tab_during_a_command_gives_a_clear_error(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer
) -> None:
    url = unique_url(pages)
    created = await relay.create_tab(url)
    await wait_for_url(relay, created.id, url)
    page = await browser.attach_page(url)
    command = asyncio.create_task(
        relay.cdp(
            created.id,
            "Runtime.evaluate",
            {"expression": "new Promise(() => {})", "awaitPromise": True},
        )
    )
    await asyncio.sleep(0)  # the command is on its way
    started = time.monotonic()
    await page.close()  # the person closes the tab
    with pytest.raises(CommandFailed) as failed:
        await asyncio.wait_for(command, 5)
    assert time.monotonic() - started < 2
    assert failed.value.code == "no_tab"
    assert f"Tab {created.id} was closed while Runtime.evaluate was running" in str(failed.value)
    await wait_until(lambda: created.id not in relay.attached_tabs, timeout=5, message="status")


async def test_a_detach_on_the_browser_side_updates_the_apps_status(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer, tab: int
) -> None:
    await relay.attach(tab)
    await wait_until(lambda: tab in relay.attached_tabs, timeout=5, message="attached")
    page = await browser.attach_page((await relay.get_tab(tab)).url)
    try:
        # The person opens a browser page in that tab: Chrome detaches the extension.
        await page.session.send("Page.navigate", {"url": "chrome://version"})
        await wait_until(lambda: tab not in relay.attached_tabs, timeout=5, message="detached")
        # Back on a web page, the tab agents were using is attached again.
        await page.session.send("Page.navigate", {"url": pages.url("second.html")})
        await wait_until(lambda: tab in relay.attached_tabs, timeout=5, message="re-attached")
    finally:
        await page.session.detach()


async def test_the_popup_lets_the_person_share_and_unshare_the_current_tab(
    relay: Browser, browser: ExtensionBrowser, pages: PageServer
) -> None:
    url = unique_url(pages)
    page = await browser.open_page(url)
    tab = await browser.tab_id_of(url)
    await relay.activate_tab(tab)
    assert not (await relay.get_tab(tab)).shared
    popup = await browser.open_popup()
    try:
        assert await popup.text_of("#headline") == "Connected to the Tabrelay app"
        assert await popup.text_of("#toggle-tab") == "Let agents use this tab"
        await popup.click("#toggle-tab")
        await wait_until(lambda: tab in relay.attached_tabs, timeout=5, message="attached")
        await wait_until(
            lambda: relay.tabs[tab].shared, timeout=5, message="the app sees it shared"
        )
        await wait_until(
            lambda: popup.evaluate(
                "document.getElementById('attached').textContent.includes('Tabrelay test page')"
            ),
            timeout=5,
            message="the popup lists the tab",
        )
        await popup.click("#toggle-tab")
        await wait_until(lambda: tab not in relay.attached_tabs, timeout=5, message="detached")
        await wait_until(
            lambda: not relay.tabs[tab].shared, timeout=5, message="the app sees it unshared"
        )
    finally:
        await popup.close()
        await page.close()


async def test_browser_extension_and_local_file_pages_are_refused_clearly(
    relay: Browser, browser: ExtensionBrowser, tab: int
) -> None:
    for url in ("chrome://settings", "file:///etc/passwd", "javascript:alert(1)"):
        with pytest.raises(CommandFailed) as refused:
            await relay.create_tab(url)
        assert refused.value.code == "restricted_url", url
        with pytest.raises(CommandFailed) as refused:
            await relay.navigate(tab, url)
        assert refused.value.code == "restricted_url", url

    options = await browser.open_page(OPTIONS_URL)
    try:
        options_tab = await browser.tab_id_of(OPTIONS_URL)
        for attempt in (
            relay.attach(options_tab),
            relay.cdp(options_tab, "Runtime.evaluate", {"expression": "chrome.storage"}),
            relay.get_tab(options_tab),
        ):
            with pytest.raises(CommandFailed) as refused:
                await attempt
            assert refused.value.code == "restricted_url"
            assert "browser, extension or web store page" in str(refused.value)
    finally:
        await options.close()


async def test_the_extension_refuses_denylisted_cdp_methods_even_if_the_app_sends_them(
    relay: Browser, browser: ExtensionBrowser, tab: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defence in depth: switch the app's own check off; the extension still refuses.
    monkeypatch.setattr("tabrelay.relay.browser.cdp_block_reason", lambda method: None)
    targets_before = len(await browser.page_targets())
    for method, params in (
        ("Network.getAllCookies", {}),
        ("Storage.getCookies", {}),
        ("Target.createTarget", {"url": "about:blank"}),
        ("Network.getAllCookies\n", {}),
    ):
        with pytest.raises(CommandFailed) as refused:
            await relay.cdp(tab, method, params)
        assert refused.value.code == "blocked_method", method
    assert len(await browser.page_targets()) == targets_before


async def test_methods_outside_the_allowlist_are_refused(
    relay: Browser, tab: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    forged = ["chrome.management.setEnabled", "__proto__", "constructor", "tabs.remove"]
    monkeypatch.setattr(relay, "methods", relay.methods | set(forged))
    for method in forged:
        with pytest.raises(CommandFailed) as refused:
            await relay.send_command(method, {"tabId": tab, "id": "x", "enabled": False})
        assert refused.value.code == "unknown_method", method
    assert (await relay.get_tab(tab)).id == tab
