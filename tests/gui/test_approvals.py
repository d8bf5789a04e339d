"""Approvals end to end: an MCP client's call waits for the person's answer in the dialog.

The browser is the scripted extension, the client the real MCP SDK over Streamable HTTP, the
core the real one on free ports, and the answer a click in the dialog (THREATS A1, A5).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gui.conftest import Desk, DesktopFactory, expect, unlocked, within
from support.mcp import mcp_client, text_of
from tabrelay.approval.plans import PlanDraft
from tabrelay.config.settings import PolicyRule, Settings
from tabrelay.store.commandlog import CommandEntry
from tabrelay.ui.approval_dialog import ApprovalDialog

NEXT = "https://example.org/next"


async def newest_row(desk: Desk) -> CommandEntry:
    log = desk.harness.core.command_log
    assert log is not None
    rows = await asyncio.to_thread(log.recent, 1)
    return rows[0]


async def start_navigate(
    desk: Desk, client: Any, url: str = NEXT
) -> tuple[asyncio.Task[Any], ApprovalDialog]:
    shown = expect(desk.approver.dialog_shown)
    call = asyncio.ensure_future(client.call_tool("browser_navigate", {"url": url, "tab_id": 1}))
    (dialog,) = await within(shown, 10)
    # It appeared by itself: on top, without taking the keyboard from what the person types.
    assert dialog.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    return call, dialog


@asynccontextmanager
async def connected(desktop: DesktopFactory) -> AsyncIterator[tuple[Desk, Any, str]]:
    """The UI, the scripted browser connected, and the token of an MCP client "cursor"."""
    async with desktop() as desk:
        extension = await desk.harness.extension()
        await desk.harness.browser_count(1)
        yield desk, extension, await desk.harness.add_client("cursor")


async def test_an_acting_call_waits_for_the_dialog_and_runs_once_allowed(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with connected(desktop) as (desk, extension, token):
        async with mcp_client(desk.harness.base_mcp(), token, name="Cursor") as client:
            call, dialog = await start_navigate(desk, client)
            assert dialog.request.origin == "https://example.com"  # from the browser
            assert dialog.request.client == "cursor"
            assert dialog.request.client_reported and "Cursor" in dialog.request.client_reported
            await asyncio.sleep(0.05)  # bounded look: the call is still waiting for the person
            assert not call.done()
            assert extension.tabs[1]["url"] == "https://example.com/"
            assert desk.harness.core.gate.pending

            await unlocked(dialog)
            qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
            result = await within(call, 10)

        assert not result.is_error, text_of(result)
        assert extension.tabs[1]["url"] == NEXT
        row = await newest_row(desk)
        assert (row.tool, row.status, row.decision) == (
            "browser_navigate",
            "ok",
            "approved once by the person",
        )
        assert row.origin == "https://example.com"
        assert desk.harness.core.gate.session_rules == []  # "once" leaves no rule
        assert desk.approver.current is None


async def test_deny_returns_a_clear_denial_and_leaves_the_page_untouched(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with connected(desktop) as (desk, extension, token):
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            call, dialog = await start_navigate(desk, client)
            qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
            result = await within(call, 10)
        assert result.is_error
        assert text_of(result) == "denied by the person: they did not allow browser_navigate"
        assert extension.tabs[1]["url"] == "https://example.com/"
        assert not [c for c in extension.cdp_calls if c[1] == "Page.navigate"]
        row = await newest_row(desk)
        assert (row.status, row.tool) == ("denied", "browser_navigate")


async def test_allow_for_the_session_creates_a_session_rule_for_that_client_tool_and_site(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with connected(desktop) as (desk, extension, token):
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            call, dialog = await start_navigate(desk, client, "https://example.com/a")
            await unlocked(dialog)
            qtbot.mouseClick(dialog.session_button, Qt.MouseButton.LeftButton)
            assert not (await within(call, 10)).is_error
            # The same tool on the same site now runs without a dialog.
            again = await within(
                client.call_tool("browser_navigate", {"url": "https://example.com/b", "tab_id": 1}),
                10,
            )
            assert not again.is_error
            assert extension.tabs[1]["url"] == "https://example.com/b"
        (rule,) = desk.harness.core.gate.session_rules
        assert (rule.tool, rule.decision, rule.site, rule.client) == (
            "browser_navigate",
            "allow",
            "https://example.com",
            "cursor",
        )
        assert desk.harness.core.settings.policy_rules == []  # nothing saved
        assert (await newest_row(desk)).decision.startswith("allowed by allow browser_navigate")


async def test_always_allow_saves_the_rule_in_the_settings(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with connected(desktop) as (desk, _extension, token):
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            call, dialog = await start_navigate(desk, client)
            await unlocked(dialog)
            qtbot.mouseClick(dialog.always_button, Qt.MouseButton.LeftButton)
            assert not (await within(call, 10)).is_error
        settings = await asyncio.to_thread(desk.harness.core.settings_store.load)
        # The tool on the tab's site, and on the site it went to (issue 25: a navigation is
        # judged by where it goes too).
        assert [(r.tool, r.decision, r.site, r.client) for r in settings.policy_rules] == [
            ("browser_navigate", "allow", "https://example.com", "cursor"),
            ("browser_navigate", "allow", "https://example.org", "cursor"),
        ]
        assert desk.harness.core.gate.session_rules == []


async def test_no_answer_within_the_timeout_denies_and_the_dialog_closes(
    desktop: DesktopFactory,
) -> None:
    async with connected(desktop) as (desk, extension, token):

        def short(settings: Settings) -> None:
            settings.approval_timeout = 0.4

        await asyncio.to_thread(desk.harness.core.settings_store.update, short)
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            call, dialog = await start_navigate(desk, client)
            assert dialog.countdown.text() == "Denied automatically in 1 s"
            result = await within(call, 10)
        assert result.is_error
        assert text_of(result) == "denied: the person did not answer within 0.4 s"
        assert desk.approver.current is None
        assert extension.tabs[1]["url"] == "https://example.com/"
        assert not desk.harness.core.gate.pending


async def test_pausing_denies_the_open_request_and_every_call_until_resumed(
    desktop: DesktopFactory,
) -> None:
    async with connected(desktop) as (desk, extension, token):
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            call, _dialog = await start_navigate(desk, client)
            desk.ui.set_paused(True)
            assert text_of(await within(call, 10)).startswith("denied: paused by the person")
            assert desk.approver.current is None, "the dialog went away with the question"
            paused = await within(client.call_tool("browser_list_tabs", {}), 10)
            assert paused.is_error and "paused agent access" in text_of(paused)
            assert desk.ui.tray.state().value == "paused"
            assert desk.ui.dashboard.paused_banner.isVisibleTo(desk.ui.dashboard)

            desk.ui.set_paused(False)
            resumed = await within(client.call_tool("browser_list_tabs", {}), 10)
            assert not resumed.is_error
        assert extension.tabs[1]["url"] == "https://example.com/"


async def test_a_saved_deny_rule_decides_without_a_dialog(
    desktop: DesktopFactory,
) -> None:
    async with connected(desktop) as (desk, _extension, token):

        def deny(settings: Settings) -> None:
            settings.policy_rules.append(PolicyRule(tool="browser_navigate", decision="deny"))

        await asyncio.to_thread(desk.harness.core.settings_store.update, deny)
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            result = await within(
                client.call_tool("browser_navigate", {"url": NEXT, "tab_id": 1}), 10
            )
        assert "denied by a rule" in text_of(result)
        assert desk.approver.current is None


async def test_an_agent_asks_once_for_a_task_and_its_routine_actions_then_run(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    """Issue 25's plan, end to end: the agent asks once (browser_request_access), the person
    takes one site out in the dialog and approves; the tab's routine navigation then runs with
    no dialog, the dashboard shows the plan, and once revoked there the next one asks again."""
    async with (
        connected(desktop) as (desk, _extension, token),
        mcp_client(desk.harness.base_mcp(), token) as client,
    ):
        shown = expect(desk.approver.dialog_shown)
        asked = asyncio.ensure_future(
            client.call_tool(
                "browser_request_access",
                {
                    "purpose": "Find the next page of the example",
                    "sites": ["https://example.com", "https://example.org"],
                    "actions": ["navigate", "click"],
                    "minutes": 30,
                },
            )
        )
        (dialog,) = await within(shown, 10)
        assert dialog.plan_area is not None
        dialog.plan_sites.item(1).setCheckState(Qt.CheckState.Unchecked)
        await unlocked(dialog)
        qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
        granted = await within(asked, 10)
        assert not granted.is_error, text_of(granted)
        assert "navigate, click on https://example.com run without asking" in text_of(granted)
        page = desk.ui.dashboard.approvals_page
        page.refresh()
        assert page.plans_model.rowCount() == 1
        assert page.plans_model.data(page.plans_model.index(0, 2)) == "https://example.com"

        # On the plan's site: no dialog.
        same = await within(
            client.call_tool("browser_navigate", {"url": "https://example.com/more", "tab_id": 1}),
            10,
        )
        assert not same.is_error, text_of(same)
        assert (await newest_row(desk)).decision.startswith("allowed by plan ")
        # The site the person took out asks (and is denied here).
        call, other = await start_navigate(desk, client, "https://example.org/")
        qtbot.mouseClick(other.deny_button, Qt.MouseButton.LeftButton)
        assert (await within(call, 10)).is_error

        page.plans_view.selectRow(0)
        page.revoke_selected()
        assert desk.harness.core.gate.plans.live() == [] and page.plans_model.rowCount() == 0
        call, again = await start_navigate(desk, client, "https://example.com/again")
        qtbot.mouseClick(again.deny_button, Qt.MouseButton.LeftButton)
        assert (await within(call, 10)).is_error


async def test_the_tray_lists_live_plans_and_ends_one(desktop: DesktopFactory) -> None:
    async with desktop() as desk:
        plans = desk.harness.core.gate.plans
        tray = desk.ui.tray
        # The purpose is the agent's: an "&" must not become a shortcut, a line break no line.
        draft = PlanDraft("Pay & file\nthe invoices", ("https://books.example",))
        plan = plans.start("claude-code", "s1", draft)
        tray.menu.aboutToShow.emit()
        entry = tray.find(f"plan:{plan.id}")
        assert entry is not None and entry.text().startswith("Plan: Pay && file")
        assert "\n" not in entry.text()
        end = tray.find(f"plan:{plan.id}:end")
        assert end is not None
        end.trigger()
        assert plans.live() == []
        tray.menu.aboutToShow.emit()
        assert tray.find(f"plan:{plan.id}") is None
