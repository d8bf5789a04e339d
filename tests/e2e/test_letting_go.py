"""Real Chromium with the real extension: what the person sees of the tabs once no app drives
them (DESIGN §3, §10). When the app quits, and when the person unpairs the browser, no tab
stays attached, badged or outlined. browser_status and browser_list_tabs agree on the tabs.

The tests run in order: the last one unpairs the browser for good.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from e2e.chromium import EXTENSION_ID
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths

pytestmark = E2E

CUE = "tabrelay-agent-cue"
DRIVEN_TITLE = "Tabrelay: an agent is using this tab"


async def driven_tab(app: AppUnderTest, browser: ExtensionBrowser, url: str) -> tuple[int, Page]:
    """A tab the app attached, with the cue on its page and the badge marking it."""
    relay = await app.browser(timeout=15)
    tab = await relay.create_tab(url)
    await relay.attach(tab.id)
    page = await browser.attach_page(url)
    await wait_until(lambda: cue_shown(page), timeout=10, message="the cue shows")
    await wait_until(
        lambda: title_of(browser, tab.id), timeout=5, message="the badge marks the tab"
    )
    assert await title_of(browser, tab.id) == DRIVEN_TITLE
    return tab.id, page


async def cue_shown(page: Page) -> bool:
    return bool(await page.evaluate(f"document.getElementById({json.dumps(CUE)}) !== null"))


async def title_of(browser: ExtensionBrowser, tab_id: int) -> str:
    return str(await browser.in_worker(f"chrome.action.getTitle({{tabId: {tab_id}}})"))


async def extension_attached(browser: ExtensionBrowser, tab_id: int) -> bool:
    """Whether the extension's own chrome.debugger session on the tab answers."""
    return bool(
        await browser.in_worker(
            f"chrome.debugger.sendCommand({{tabId: {tab_id}}}, 'Runtime.evaluate',"
            " {expression: '1'}).then(() => true, () => false)"
        )
    )


async def assert_let_go(browser: ExtensionBrowser, tab_id: int, page: Page) -> None:
    """Nothing of the agent's use is left on the tab, as the person and Chrome see it."""
    await wait_until(
        lambda: not_(extension_attached(browser, tab_id)),
        timeout=10,
        message="the extension detaches the tab",
    )
    await wait_until(lambda: not_(cue_shown(page)), timeout=5, message="the cue goes")
    assert await title_of(browser, tab_id) != DRIVEN_TITLE
    stored = (await browser.storage("session")).get("debuggerTabs", {})
    assert stored.get("attached") == [] and stored.get("wanted") == [], stored
    # Chrome's own view, once the test's CDP session is off the page too.
    await page.session.detach()
    targets: list[dict[str, Any]] = await browser.in_worker("chrome.debugger.getTargets()")
    [target] = [t for t in targets if t.get("tabId") == tab_id]
    assert target["attached"] is False, target


async def not_(value: Any) -> bool:
    return not await value


async def test_status_and_the_tab_list_agree_right_after_connecting_and_after_a_new_tab(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    await app.browser(timeout=15)
    token = await app.harness.add_client("e2e-status")
    async with mcp_client(app.harness.base_mcp(), token) as client:

        async def both() -> tuple[int, int]:
            status = await client.call_tool("browser_status", {})
            listed = await client.call_tool("browser_list_tabs", {})
            assert not status.is_error and not listed.is_error, text_of(status)
            [described] = status.structured_content["browsers"]  # type: ignore[index]
            return described["tabs"], len(listed.structured_content["tabs"])  # type: ignore[index]

        counted, listed = await both()
        assert counted == listed >= 1
        opened = await client.call_tool("browser_new_tab", {"url": pages.url("index.html")})
        assert not opened.is_error, text_of(opened)
        assert await both() == (listed + 1, listed + 1)


async def test_when_the_app_quits_no_tab_stays_attached_marked_or_outlined(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await driven_tab(app, browser, pages.url("second.html") + "?quit")
    assert await extension_attached(browser, tab)
    await app.stop()
    try:
        await browser.wait_for_state("unreachable")
        await assert_let_go(browser, tab, page)
    finally:
        await app.start()
    relay = await app.browser(timeout=15)
    assert relay.attached_tabs == frozenset(), "nothing to take back: every tab was let go"


async def test_when_the_browser_is_unpaired_no_tab_stays_attached_marked_or_outlined(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, module_paths: Paths
) -> None:
    tab, page = await driven_tab(app, browser, pages.url("index.html") + "?unpair")
    env = {**os.environ, "TABRELAY_HOME": str(module_paths.config_dir.parent)}
    revoked = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "tabrelay", "pair", "revoke", EXTENSION_ID],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert revoked.returncode == 0, revoked.stderr
    await browser.wait_for_state("unpaired")
    await assert_let_go(browser, tab, page)
