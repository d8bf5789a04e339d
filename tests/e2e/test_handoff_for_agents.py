"""browser_handoff end to end, as an agent calls it over MCP: the person ends it on the banner,
from the tray, from the command line (through the person's control routes), or not at all (the
timeout), or closes the tab; meanwhile every agent call on the tab is refused, and the client
hears progress. Real Chromium, the real extension, a real MCP client, the real CLI.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from mcp_types import CallToolResult

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from e2e.test_handoff_module import trusted_click
from e2e.test_recipes_for_agents import cli
from support.mcp import text_of
from tabrelay.config.paths import Paths
from tabrelay.tools.state.handoffs import REFUSAL, OpenHandoff

pytestmark = E2E


class Handing:
    """One browser_handoff call running in the background, with the progress its client hears."""

    def __init__(self, agent: Agent, tab: int, reason: str, timeout: int) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []

        async def heard(done: float, total: float | None, message: str | None) -> None:
            self.progress.append((done, total, message))

        self.task: asyncio.Task[CallToolResult] = asyncio.create_task(
            agent.client.call_tool(
                "browser_handoff",
                {"tab_id": tab, "reason": reason, "timeout": timeout},
                progress_callback=heard,
            )
        )

    async def result(self) -> tuple[dict[str, Any], str]:
        result = await asyncio.wait_for(self.task, 60)
        assert not result.is_error, text_of(result)
        return dict(result.structured_content or {}), text_of(result)


async def handed(
    app: AppUnderTest,
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    *,
    reason: str = "sign in",
    timeout: int = 60,
) -> tuple[Handing, OpenHandoff, Page, int]:
    url = pages.url(f"handoff/login.html?run={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    handing = Handing(agent, tab, reason, timeout)
    handoffs = app.harness.core.handoffs
    opened = await wait_until(
        lambda: handoffs.of_tab(app.browsers()[0].id, tab), timeout=15, message="handed over"
    )
    return handing, opened, page, tab


async def test_the_person_presses_done_on_the_banner_while_agent_calls_are_refused(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handing, opened, page, tab = await handed(app, agent, browser, pages)
    assert opened.reason == "sign in" and opened.client == "e2e-agent"
    for tool, arguments in (
        ("browser_snapshot", {}),
        ("browser_click", {"selector": "button"}),
        ("browser_navigate", {"url": pages.url("index.html")}),
        ("browser_handoff", {"reason": "again"}),
    ):
        refused = await agent.fails(tool, tab_id=tab, **arguments)
        assert REFUSAL in refused, (tool, refused)
    await wait_until(
        lambda: page.evaluate("!!document.querySelector('[data-tabrelay-handoff]')"),
        timeout=10,
        message="the banner shows",
    )
    await trusted_click(page, "done")
    data, text = await handing.result()
    assert (data["outcome"], data["ended_by"]) == ("done", "banner")
    assert data["url"].startswith(pages.url("handoff/login.html"))
    assert "browser_snapshot" in text
    assert app.harness.core.handoffs.open() == []
    await agent.ok("browser_snapshot", tab_id=tab)  # the agent has the tab back


async def test_the_tray_ends_it(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handing, opened, _page, _tab = await handed(app, agent, browser, pages)
    assert app.harness.core.handoffs.end(opened.id, "cancelled", by="tray")  # the menu's call
    data, _ = await handing.result()
    assert (data["outcome"], data["ended_by"]) == ("cancelled", "tray")


async def test_the_command_line_lists_and_ends_it(
    app: AppUnderTest,
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    module_paths: Paths,
) -> None:
    handing, opened, _page, _tab = await handed(app, agent, browser, pages, reason="pay")
    listed = await cli(module_paths, "handoff", "list")
    assert listed.returncode == 0, listed.stderr
    assert opened.id in listed.stdout and "pay" in listed.stdout
    wrong = await cli(module_paths, "handoff", "done", "0123456789abcdef")
    assert wrong.returncode == 1 and "no open handoff" in wrong.stderr
    done = await cli(module_paths, "handoff", "done", opened.id)
    assert done.returncode == 0, done.stderr
    data, _ = await handing.result()
    assert (data["outcome"], data["ended_by"]) == ("done", "cli")


async def test_an_agents_token_cannot_end_a_handoff(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    import httpx2

    handing, opened, _page, _tab = await handed(app, agent, browser, pages)
    token = await app.harness.add_client("another-agent")
    base = app.harness.base_mcp()
    async with httpx2.AsyncClient() as http:
        answer = await http.post(
            f"{base}/control/handoffs/{opened.id}/done",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 403
        from_a_page = await http.post(
            f"{base}/control/handoffs/{opened.id}/done",
            headers={"Authorization": f"Bearer {token}", "Origin": "https://evil.example"},
        )
        assert from_a_page.status_code == 403
        no_token = await http.get(f"{base}/control/handoffs")
        assert no_token.status_code == 401
    assert app.harness.core.handoffs.of_tab(opened.browser_id, opened.tab_id) is not None
    app.harness.core.handoffs.end(opened.id, "cancelled", by="tray")
    await handing.result()


async def test_nobody_answers_and_it_times_out_with_progress_meanwhile(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handing, _opened, _page, _tab = await handed(app, agent, browser, pages, timeout=10)
    data, _ = await handing.result()
    assert (data["outcome"], data["ended_by"]) == ("timeout", "timeout")
    assert len(handing.progress) >= 2, handing.progress
    assert all("sign in" in (message or "") for _, _, message in handing.progress)


async def test_the_person_closes_the_tab(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handing, _opened, page, _tab = await handed(app, agent, browser, pages)
    await page.close()
    data, _ = await handing.result()
    assert data["outcome"] == "tab closed"
    assert app.harness.core.handoffs.open() == []
