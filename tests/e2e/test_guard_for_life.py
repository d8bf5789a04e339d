"""The navigation guard holds for a tab's whole life, in real Chromium: whichever way a page
moves on to a blocked site — a redirect chain, a meta refresh, a script shortly after load, a
window it opens, a form it posts, a frame it embeds — the request never reaches that site (or,
for a new window, the window is stopped), and no tool returns anything of it.

The blocked site is the test server under its other name, ``localhost``, which the person put
on the block list; the same server as ``127.0.0.1`` is allowed. Its page holds a secret.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from support.mcp import text_of
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.protocol.messages import TabInfo

pytestmark = E2E

SECRET = "TOP-SECRET-ROUTER-PASSWORD-9f2c"


@pytest.fixture(scope="module")
def blocked_origin() -> Iterator[PageServer]:
    """The same pages on another port: another origin of the same site, on the block list."""
    with PageServer() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def blocked_localhost(app: AppUnderTest, blocked_origin: PageServer) -> AsyncIterator[None]:
    def block(settings: object) -> None:
        settings.navigation.block = [  # type: ignore[attr-defined]
            "localhost",
            f"http://127.0.0.1:{blocked_origin.port}",
        ]
        settings.policy_rules = [PolicyRule(tool="*", decision="allow")]  # type: ignore[attr-defined]

    await asyncio.to_thread(SettingsStore(app.paths.settings_file).update, block)
    await wait_until(
        lambda: app.harness.core.settings.navigation.block,
        timeout=5,
        message="the app sees the block list",
    )
    yield


def secret_url(pages: PageServer) -> str:
    return pages.url(f"secret.html?n={uuid.uuid4().hex[:6]}", host="localhost")


def via(pages: PageServer, how: str, to: str) -> str:
    return pages.url(f"go/{how}?to={urllib.parse.quote(to, safe='')}&n={uuid.uuid4().hex[:6]}")


async def assert_unreadable(agent: Agent, tab: int) -> None:
    """No reading tool returns the blocked page (refused, or the tab is elsewhere now)."""
    for tool, arguments in (
        ("browser_get_content", {"format": "text"}),
        ("browser_snapshot", {}),
        ("browser_evaluate", {"expression": "document.body.innerText"}),
        ("browser_find", {"text": "SECRET"}),
    ):
        result = await agent.call(tool, tab_id=tab, **arguments)
        text = text_of(result)
        assert SECRET not in text, f"{tool} returned the blocked page"


async def test_a_redirect_chain_to_a_blocked_site_stops_before_the_request_leaves(
    agent: Agent, pages: PageServer
) -> None:
    target = secret_url(pages)
    chain = via(pages, "redirect", via(pages, "redirect", target))
    tab = await agent.open(pages.url("index.html"))
    said = await agent.fails("browser_navigate", tab_id=tab, url=chain)
    assert said.startswith("blocked after a redirect to http://localhost:") and "block list" in said
    assert pages.hits(target) == []
    await assert_unreadable(agent, tab)


async def test_a_redirect_with_wait_until_none_is_stopped_all_the_same(
    agent: Agent, pages: PageServer
) -> None:
    target = secret_url(pages)
    tab = await agent.open(pages.url("index.html"))
    said = await agent.fails(
        "browser_navigate", tab_id=tab, url=via(pages, "redirect", target), wait_until="none"
    )
    assert said.startswith("blocked after a redirect to http://localhost:"), said
    assert pages.hits(target) == []
    await assert_unreadable(agent, tab)


async def test_a_meta_refresh_and_a_script_after_load_are_stopped(
    agent: Agent, pages: PageServer
) -> None:
    for how in ("meta", "script"):
        target = secret_url(pages)
        tab = await agent.open(pages.url("index.html"))
        await agent.ok("browser_navigate", tab_id=tab, url=via(pages, how, target))
        stopped = await wait_until(
            lambda tab=tab: refused(agent, "browser_snapshot", tab),  # type: ignore[misc]
            timeout=5,
            message=f"the {how} navigation reaches the guard",
        )
        assert "agents may not use" in stopped and "block list" in stopped, stopped
        assert pages.hits(target) == [], how
        await assert_unreadable(agent, tab)
        # The agent can still take the tab away from there.
        await agent.ok("browser_navigate", tab_id=tab, url=pages.url("index.html"))
        assert "Tabrelay test page" in await agent.ok("browser_get_content", tab_id=tab)


async def test_a_form_post_to_a_blocked_site_is_never_sent(agent: Agent, pages: PageServer) -> None:
    target = secret_url(pages)
    tab = await agent.open(via(pages, "form", target))
    snapshot = await agent.snapshot(tab)
    await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Send"))
    await wait_until(
        lambda: refused(agent, "browser_get_content", tab),
        timeout=5,
        message="the post reaches the guard",
    )
    assert pages.hits(target) == []
    await assert_unreadable(agent, tab)


async def test_a_frame_of_a_blocked_site_stays_empty(agent: Agent, pages: PageServer) -> None:
    target = secret_url(pages)
    tab = await agent.open(via(pages, "frame", target))
    content = await agent.ok("browser_get_content", tab_id=tab, format="text")
    assert "Framed" in content
    assert pages.hits(target) == []
    await assert_unreadable(agent, tab)


async def test_a_window_a_guarded_page_opens_to_a_blocked_site_is_stopped(
    agent: Agent, pages: PageServer
) -> None:
    # The blocked site takes a moment to answer, as real ones do: the window's first request
    # may leave before Tabrelay holds the window, but the page never commits.
    target = secret_url(pages) + "&delay=1500"
    tab = await agent.open(via(pages, "open", target))
    before = {t["id"] for t in (await agent_tabs(agent))}
    snapshot = await agent.snapshot(tab)
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Open"))
    popup = await wait_until(
        lambda: _new_tab(agent, before), timeout=5, message="the page opens a window"
    )
    await wait_until(lambda: _stopped(agent, popup), timeout=5, message="the window is stopped")
    await assert_unreadable(agent, popup)


async def refused(agent: Agent, tool: str, tab: int) -> str | None:
    """The error a tool gives on this tab, or ``None`` if it worked."""
    result = await agent.call(tool, tab_id=tab)
    return text_of(result) if result.is_error else None


async def agent_tabs(agent: Agent) -> list[dict[str, object]]:
    result = await agent.call("browser_list_tabs")
    return list(result.structured_content["tabs"])


async def _new_tab(agent: Agent, before: set[object]) -> int | None:
    fresh = [t["id"] for t in await agent_tabs(agent) if t["id"] not in before]
    return int(fresh[0]) if fresh else None  # type: ignore[call-overload]


async def _stopped(agent: Agent, tab: int) -> bool:
    for listed in await agent_tabs(agent):
        if listed["id"] == tab:
            return listed["url"] in ("about:blank", "")
    return True  # closed counts as stopped


async def test_a_blocked_frame_a_page_loaded_before_an_agent_came_is_left_out(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, blocked_origin: PageServer
) -> None:
    """The person's own tab, opened before any agent used it (its loads were not guarded),
    embeds a blocked origin of the same site: a frame the snapshot could read. It does not."""
    inner = blocked_origin.url(f"secret.html?n={uuid.uuid4().hex[:6]}")
    url = via(pages, "frame", inner)
    page = await browser.open_page(url, own_window=True)
    try:
        await wait_until(lambda: blocked_origin.hits(inner), timeout=5, message="the frame")
        tab = next(int(t["id"]) for t in await agent_tabs(agent) if t["url"] == url)  # type: ignore[call-overload]
        snapshot = await agent.snapshot(tab)
        assert "Framed" in snapshot and SECRET not in snapshot
        assert "is not included: agents may not use it" in snapshot, snapshot
        await assert_unreadable(agent, tab)
    finally:
        await page.close()


async def test_tabrelays_own_ports_spelled_another_way_are_refused_however_they_are_reached(
    agent: Agent, app: AppUnderTest, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("index.html"))
    for spelled in ("127.1", "2130706433", "0x7f000001", "0177.0.0.1", "[::ffff:127.0.0.1]"):
        own = f"http://{spelled}:{app.port}/healthz"
        said = await agent.fails("browser_navigate", tab_id=tab, url=own, wait_until="none")
        assert "is Tabrelay itself" in said, (spelled, said)
        said = await agent.fails("browser_new_tab", url=own)
        assert "is Tabrelay itself" in said, (spelled, said)
    # A page that sends the tab there itself is stopped by the guard on the way.
    said = await agent.fails(
        "browser_navigate",
        tab_id=tab,
        url=via(pages, "redirect", f"http://0x7f000001:{app.port}/api/browser-relay/config"),
    )
    assert "is Tabrelay itself" in said, said
    await assert_unreadable(agent, tab)


async def test_a_tab_that_sends_itself_to_a_blocked_site_is_refused_at_its_new_address(
    agent: Agent, app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The person's own window (no agent drove it or the tab that opened it, so its loads are
    not guarded) sends itself on by script (``location.href = ...``) to a blocked site. The
    app answers a tool's look at a tab from its cache of the tab events, with no round trip:
    the event of that navigation moved the cached address, so the next tool is refused there
    and nothing of the site comes back. (Were the event late, the tool's own command makes the
    look after it ask the browser: tests/integration/test_relay_tab_cache.py.)"""
    target = secret_url(pages)
    start = via(pages, "script", target)
    created = await browser.cdp.send("Target.createTarget", {"url": start, "newWindow": True})
    try:
        relay = await app.browser()

        def opened() -> TabInfo | None:  # the app's cache, fed by the extension's tab events
            return next((t for t in relay.tabs.values() if t.url in (start, target)), None)

        first = await wait_until(opened, timeout=10, message="the tab's event")
        assert first is not None and first.opener_id is None, "it would be guarded"

        def moved() -> int | None:
            return next((t.id for t in relay.tabs.values() if t.url == target), None)

        tab = await wait_until(moved, timeout=10, message="the event of its navigation")
        assert tab is not None
        said = await agent.fails("browser_snapshot", tab_id=tab)
        assert "agents may not use" in said and "block list" in said, said
        await assert_unreadable(agent, tab)
    finally:
        await browser.cdp.send("Target.closeTarget", {"targetId": created["targetId"]})
