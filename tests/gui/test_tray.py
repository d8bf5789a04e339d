"""The tray: its menu (rebuilt when shown), what each entry does, and the icon's states.

Offscreen there is no system tray to click, so the tests open the menu as Qt would
(``aboutToShow``) and trigger its actions; ``make screenshots`` shows the real one under X.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.conftest import DesktopFactory, expect, until, within
from support.fake_extension import EXTENSION_ID, FakeExtension
from support.mcp import mcp_client
from tabrelay.relay.events import HubEvent
from tabrelay.system.clients import CLIENTS
from tabrelay.ui.icons import TrayState
from tabrelay.ui.tray import status_line


def labels(desk_menu: object) -> list[str]:
    from PySide6.QtWidgets import QMenu

    assert isinstance(desk_menu, QMenu)
    return [a.text() for a in desk_menu.actions() if not a.isSeparator()]


async def test_the_menu_is_the_one_design_describes_and_follows_the_state(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        tray = desk.ui.tray
        tray.menu.aboutToShow.emit()
        assert labels(tray.menu) == [
            "No browser connected · 0 clients",
            "Open dashboard",
            "Pause agent access",
            "Record what I do…",
            "Connect an MCP client",
            "Pair a browser…",
            "Start at login",
            "Settings…",
            "Quit Tabrelay",
        ]
        status = tray.find("status")
        assert status is not None and not status.isEnabled()
        connect = tray.find("connect")
        assert connect is not None and connect.menu() is not None
        assert labels(connect.menu()) == [f"{k.label}…" for k in CLIENTS.values()] + ["Other…"]

        await desk.harness.extension()
        await desk.harness.browser_count(1)
        token = await desk.harness.add_client("cursor")
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            await within(client.call_tool("browser_list_tabs", {}), 10)
            tray.menu.aboutToShow.emit()  # rebuilt each time it opens
            assert tray.find("status").text() == "FakeChrome 1.0 · 2 tabs · 1 client"  # type: ignore[union-attr]


async def test_pause_in_the_menu_pauses_agent_access_and_shows_it(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        tray = desk.ui.tray
        tray.menu.aboutToShow.emit()
        pause = tray.find("pause")
        assert pause is not None and pause.isCheckable() and not pause.isChecked()
        pause.trigger()
        assert desk.harness.core.gate.paused
        assert tray.state() is TrayState.PAUSED
        tray.menu.aboutToShow.emit()
        assert tray.find("pause").isChecked()  # type: ignore[union-attr]
        tray.find("pause").trigger()  # type: ignore[union-attr]
        assert not desk.harness.core.gate.paused


async def test_menu_entries_open_their_windows_and_quit_quits(desktop: DesktopFactory) -> None:
    async with desktop() as desk:
        ui, tray = desk.ui, desk.ui.tray
        tray.menu.aboutToShow.emit()
        tray.find("dashboard").trigger()  # type: ignore[union-attr]
        assert ui.dashboard.isVisible()

        tray.find("connect:cursor").trigger()  # type: ignore[union-attr]
        assert ui.connect_dialog is not None and ui.connect_dialog.isVisible()
        assert ui.connect_dialog.kind_box.currentText() == "Cursor"
        assert ui.connect_dialog.name_edit.text() == "cursor"
        tray.menu.aboutToShow.emit()
        tray.find("connect:other").trigger()  # type: ignore[union-attr]
        assert ui.connect_dialog.kind_box.currentText() == "Other MCP client"

        tray.menu.aboutToShow.emit()
        tray.find("pair").trigger()  # type: ignore[union-attr]
        assert ui.pair_dialog is not None and ui.pair_dialog.isVisible()
        assert EXTENSION_ID in ui.pair_dialog.paired.item(0).text()

        tray.menu.aboutToShow.emit()
        tray.find("settings").trigger()  # type: ignore[union-attr]
        assert ui.settings_dialog is not None and ui.settings_dialog.isVisible()

        tray.menu.aboutToShow.emit()
        tray.find("quit").trigger()  # type: ignore[union-attr]
        assert desk.quit_requests == [True]


async def test_start_at_login_in_the_menu_writes_and_removes_the_autostart_entry(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        tray = desk.ui.tray
        entry = desk.xdg / "autostart" / "tabrelay.desktop"
        tray.menu.aboutToShow.emit()
        login = tray.find("autostart")
        assert login is not None and login.isCheckable() and not login.isChecked()
        login.trigger()
        await within(desk.ui.tasks.idle())
        assert entry.is_file()
        assert "Exec=" in entry.read_text()
        assert "autostart" not in desk.harness.core.settings.model_dump()  # the entry is its truth
        tray.menu.aboutToShow.emit()
        assert tray.find("autostart").isChecked()  # type: ignore[union-attr]
        tray.find("autostart").trigger()  # type: ignore[union-attr]
        await within(desk.ui.tasks.idle())
        assert not entry.exists()
        tray.menu.aboutToShow.emit()
        assert not tray.find("autostart").isChecked()  # type: ignore[union-attr]


async def test_the_icon_shows_no_browser_connected_working_and_attention(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with desktop() as desk:
        tray = desk.ui.tray
        assert tray.state() is TrayState.NO_BROWSER
        await desk.harness.extension()
        await desk.harness.browser_count(1)
        assert tray.state() is TrayState.CONNECTED
        token = await desk.harness.add_client("cursor")
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            logged = expect(desk.ui.bridge.command_logged)
            await within(client.call_tool("browser_list_tabs", {}), 10)
            await within(logged)
            assert tray.state() is TrayState.WORKING

            shown = expect(desk.approver.dialog_shown)
            call = asyncio.ensure_future(
                client.call_tool("browser_navigate", {"url": "https://example.org/", "tab_id": 1})
            )
            await within(shown, 10)
            assert tray.state() is TrayState.ATTENTION
            tray.menu.aboutToShow.emit()
            answer = tray.find("approvals")
            assert answer is not None and answer.text() == "1 approval waiting — answer…"
            desk.approver.deny_all()
            await within(call, 10)
        tray.update_icon()
        assert "FakeChrome 1.0" in tray.icon.toolTip()


async def test_only_what_needs_the_person_becomes_a_notification(
    desktop: DesktopFactory,
) -> None:
    """The bug: a balloon for every browser connect and disconnect (21 in 15 minutes)."""
    async with desktop() as desk:
        history = desk.ui.notifier.history
        for _ in range(3):  # routine reconnects: the icon and the Tabs page show them
            extension = await desk.harness.extension()
            await desk.harness.browser_count(1)
            await extension.close()
            await desk.harness.browser_count(0)
        desk.ui.bridge.drain_now()
        assert list(history) == []

        # A browser refused: told once however often it retries.
        for _ in range(3):
            with pytest.raises(Exception):  # noqa: B017 - the close is what is tested
                await FakeExtension(desk.harness.port, token="wrong" * 9).connect()
        await until(lambda: history, message="a notification")
        desk.ui.bridge.drain_now()
        assert [n.title for n in history] == ["A browser was refused"]
        assert "credential is not valid" in history[-1].message
        tray = desk.ui.tray
        assert tray.state() is TrayState.ATTENTION
        assert status_line(desk.harness.core).startswith("A browser was refused")

        alert = expect(desk.ui.bridge.alert_raised)
        desk.harness.core.hub.publish(
            HubEvent("alert", "", "auth_rate_limited", params={"message": "50 failed attempts"})
        )
        assert await within(alert) == ("auth_rate_limited", "50 failed attempts")
        assert desk.ui.notifier.history[-1].kind == "critical"


def test_the_state_icons_exist_as_svg_and_png_sizes() -> None:
    icons = Path(__file__).parents[2] / "resources" / "icons"
    for state in TrayState:
        assert (icons / f"tray-{state.value}.svg").is_file()
        for size in (16, 22, 24, 32, 48, 64):
            assert (icons / f"tray-{state.value}-{size}.png").is_file()
    assert (icons / "tabrelay-256.png").is_file()
