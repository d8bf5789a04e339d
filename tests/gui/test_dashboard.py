"""The dashboard's pages, live over a real core and the scripted browser, used as a person would."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.conftest import DesktopFactory, expect, settled, until, within
from support.fake_extension import EXTENSION_ID
from support.harness import pair
from support.keyrings import LockedKeyring, MemoryKeyring
from support.mcp import mcp_client
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.ui.commands_page import CommandsModel
from tabrelay.ui.icons import TrayState


async def yes(title: str, question: str) -> bool:
    return True


async def test_the_tabs_page_lists_tabs_live_and_attaches_detaches_and_activates(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.tabs_page
        assert page.stack.currentIndex() == 0  # "No browser is connected" and how to pair
        assert "started debugging this browser" in page.explainer.text()
        assert "5 minutes idle" in page.explainer.text()

        extension = await desk.harness.extension()
        await desk.harness.browser_count(1)
        changed = expect(desk.ui.bridge.browsers_changed)
        browser = desk.harness.core.registry.resolve()
        await browser.list_tabs()
        await within(changed)
        assert page.stack.currentIndex() == 1
        assert page.model.rowCount() == 2
        assert page.model.data(page.model.index(0, 0)) == "Example"
        assert page.model.data(page.model.index(1, 1)) == "https://example.org"

        page.select(browser.id, 2)
        assert page.attach_button.isEnabled() and not page.detach_button.isEnabled()
        changed = expect(desk.ui.bridge.browsers_changed)
        qtbot.mouseClick(page.attach_button, Qt.MouseButton.LeftButton)
        await within(changed)
        await within(desk.ui.tasks.idle())
        assert 2 in extension.attached
        await until(lambda: page.model.data(page.model.index(1, 3)) == "Attached")
        assert page.detach_button.isEnabled()
        enabled = {m for t, m, _ in extension.cdp_calls if t == 2}
        assert {"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} <= enabled

        page.domain_boxes["Network"].setChecked(False)  # the tab's events without Network
        await within(desk.ui.tasks.idle())
        assert desk.harness.core.sessions.domains(browser.id, 2) == ("Page", "Runtime", "Log")
        assert (2, "Network.disable", {}) in extension.cdp_calls

        qtbot.mouseClick(page.front_button, Qt.MouseButton.LeftButton)
        await within(desk.ui.tasks.idle())
        assert extension.tabs[2]["active"] and not extension.tabs[1]["active"]

        qtbot.mouseClick(page.detach_button, Qt.MouseButton.LeftButton)
        await within(desk.ui.tasks.idle())
        assert 2 not in extension.attached


async def test_the_events_page_shows_the_live_stream_filters_pauses_and_shows_json(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.events_page
        extension = await desk.harness.extension()
        await desk.harness.browser_count(1)
        for n in range(3):
            await extension.send(
                {
                    "type": "cdp_event",
                    "tabId": 1,
                    "method": "Network.requestWillBeSent",
                    "params": {"requestId": str(n), "request": {"url": "https://e.x/\u202e"}},
                }
            )
        await extension.send(
            {"type": "cdp_event", "tabId": 2, "method": "Page.loadEventFired", "params": {}}
        )
        await extension.flushed()
        await until(lambda: page.model.rowCount() == 4, message="four events shown")

        page.domain_box.setCurrentIndex(page.domain_box.findData("Page"))
        assert page.model.rowCount() == 1
        page.domain_box.setCurrentIndex(0)
        page.method_edit.setText("requestwill")
        assert page.model.rowCount() == 3
        page.method_edit.clear()
        page.tab_box.setCurrentIndex(page.tab_box.findData(2))
        assert page.model.rowCount() == 1
        page.tab_box.setCurrentIndex(0)

        page.view.selectRow(0)
        detail = json.loads(page.detail.toPlainText().replace("\\u202e", "?"))
        assert detail["method"] == "Network.requestWillBeSent"
        assert "\\u202e" in page.detail.toPlainText()  # a bidi control is spelled out

        page.pause_button.click()
        await extension.send(
            {"type": "cdp_event", "tabId": 1, "method": "Log.entryAdded", "params": {}}
        )
        await extension.flushed()
        await until(lambda: page.skipped == 1, message="the event counted while paused")
        assert page.model.rowCount() == 4
        assert page.status.text().startswith("Paused — 1 new events not shown")
        page.pause_button.click()
        page.clear_button.click()
        assert page.model.rowCount() == 0 and page.detail.toPlainText() == ""


async def test_the_commands_page_shows_calls_live_searches_and_exports(
    desktop: DesktopFactory, tmp_path: Path
) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.commands_page
        # At the dashboard's default size the columns that say what happened are in view
        # (screenshots found "Touches" off to the right).
        desk.ui.dashboard.show_page("Commands")
        desk.ui.dashboard.show()
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        header, seen = page.view.horizontalHeader(), page.view.viewport().width()
        for name in ("Time", "Client", "Tool", "Site", "Touches", "Decision"):
            column = CommandsModel.COLUMNS.index(name)
            assert header.sectionViewportPosition(column) + header.sectionSize(column) <= seen
        await desk.harness.extension()
        await desk.harness.browser_count(1)
        token = await desk.harness.add_client("cursor")
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            for _ in range(2):
                logged = expect(desk.ui.bridge.command_logged)
                await within(client.call_tool("browser_list_tabs", {}), 10)
                await within(logged)
            logged = expect(desk.ui.bridge.command_logged)
            await within(client.call_tool("browser_status", {}), 10)
            await within(logged)
        assert page.model.rowCount() == 3
        assert page.model.data(page.model.index(0, 2)) == "browser_status"  # newest first
        assert page.model.data(page.model.index(0, 1)) == "cursor"
        assert page.status.text() == "3 commands logged"
        page.view.selectRow(1)
        assert '"tool": "browser_list_tabs"' in page.detail.toPlainText()

        page.search_edit.setText("status")
        await within(page.reload())
        assert page.model.rowCount() == 1
        assert page.status.text() == "1 matching “status”"

        out = tmp_path / "log.csv"
        await within(page.export(out))
        rows = list(csv.DictReader(out.open(encoding="utf-8")))
        assert [r["tool"] for r in rows] == ["browser_list_tabs"] * 2 + ["browser_status"]
        jsonl = tmp_path / "log.jsonl"
        await within(page.export(jsonl))
        assert len(jsonl.read_text().splitlines()) == 3


async def test_the_clients_page_creates_a_client_shows_its_token_once_and_revokes_it(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.clients_page
        assert page.empty.isVisibleTo(page)
        page.new_button.click()
        dialog = desk.ui.connect_dialog
        assert dialog is not None and dialog.kind_box.currentText() == "Other MCP client"
        dialog.name_edit.setText("bad name!")
        assert (
            not dialog.create_button.isEnabled() and "letters, digits" in dialog.name_error.text()
        )
        dialog.name_edit.setText("my-agent")
        created = expect(dialog.client_created)
        task = dialog.create_client()
        assert task is not None
        await within(task)
        assert await within(created) == ("my-agent",)
        token = await until(lambda: desk.harness.core.client_tokens().get("my-agent"))
        assert dialog.token_edit.text() == token
        assert f"Authorization: Bearer {token}" in dialog.snippet.toPlainText()
        assert "/mcp" in dialog.snippet.toPlainText()

        page.refresh()
        assert page.model.rowCount() == 1
        assert page.model.data(page.model.index(0, 1)) == "not used yet"
        page.view.selectRow(0)
        page._confirm = yes
        await within(page.revoke_selected())  # type: ignore[arg-type]
        await until(lambda: "my-agent" not in desk.harness.core.client_tokens())
        page.refresh()
        assert page.model.rowCount() == 0


async def test_connecting_a_client_merges_into_its_config_after_asking_and_backs_it_up(
    desktop: DesktopFactory, tmp_path: Path
) -> None:
    async with desktop() as desk:
        config = tmp_path / "person" / ".cursor" / "mcp.json"
        config.parent.mkdir(parents=True)
        others = {"mcpServers": {"docs": {"url": "https://docs.example/mcp"}}, "theme": "dark"}
        config.write_text(json.dumps(others))
        desk.ui.connect_client("cursor")
        dialog = desk.ui.connect_dialog
        assert dialog is not None
        await within(dialog.create_client())  # type: ignore[arg-type]
        assert dialog.merge_button.text() == "Add to mcp.json…"

        questions: list[str] = []

        async def no(title: str, question: str) -> bool:
            questions.append(question)
            return False

        dialog._confirm = no
        await within(dialog.merge())  # type: ignore[arg-type]
        assert json.loads(config.read_text()) == others  # the person said no: nothing changes
        assert "copied next to it first" in questions[0]

        dialog._confirm = yes
        await within(dialog.merge())  # type: ignore[arg-type]
        merged = json.loads(config.read_text())
        assert merged["mcpServers"]["docs"] == others["mcpServers"]["docs"]
        assert merged["theme"] == "dark"
        token = dialog.new_client.token  # type: ignore[union-attr]
        assert merged["mcpServers"]["tabrelay"]["headers"] == {"Authorization": f"Bearer {token}"}
        backups = list(config.parent.glob("mcp.json.bak-*"))
        assert len(backups) == 1 and json.loads(backups[0].read_text()) == others
        assert "previous file is saved as" in dialog.result_label.text()

        await within(dialog.merge())  # type: ignore[arg-type]
        assert "already has this Tabrelay entry" in dialog.result_label.text()
        assert len(list(config.parent.glob("mcp.json.bak-*"))) == 1

        config.write_text("{ not json")
        await settled(dialog.merge())
        assert dialog.result_label.text().startswith("Not changed:")
        assert config.read_text() == "{ not json"

        dialog.copy_button.click()
        assert QGuiApplication.clipboard().text() == dialog.snippet.toPlainText()
        assert dialog.result_label.text() == "Copied to the clipboard."

        dialog.kind_box.setCurrentIndex(dialog.kind_box.findData("claude-desktop"))
        assert token not in dialog.snippet.toPlainText()  # stdio: the keychain keeps it
        assert "mcp-stdio" in dialog.snippet.toPlainText() and dialog.token_row.isHidden()
        dialog.kind_box.setCurrentIndex(dialog.kind_box.findData("claude-code"))
        assert dialog.snippet.toPlainText().startswith("claude mcp add --transport http tabrelay")


async def test_the_approvals_page_lists_waiting_requests_and_edits_rules(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.approvals_page
        new = PolicyRule(tool="browser_navigate", decision="allow", site="https://example.com")

        async def add(rule: PolicyRule | None) -> PolicyRule | None:
            return new

        async def deny(rule: PolicyRule | None) -> PolicyRule | None:
            return rule.model_copy(update={"decision": "deny"}) if rule else None

        page._edit_rule = add
        await within(page.add_rule())
        assert desk.harness.core.settings.policy_rules[0].site == "https://example.com"
        assert page.rules_model.rowCount() == 1

        page.rules_view.selectRow(0)
        page._edit_rule = deny
        await within(page.edit_selected())  # type: ignore[arg-type]
        settings = await asyncio.to_thread(desk.harness.core.settings_store.load)
        assert [r.decision for r in settings.policy_rules] == ["deny"]

        desk.harness.core.gate.session_rules.append(
            PolicyRule(tool="browser_click", decision="allow", client="cursor")
        )
        page.refresh()
        assert page.rules_model.data(page.rules_model.index(1, 5)) == "until Tabrelay quits"
        page.rules_view.selectRow(1)
        assert not page.edit_button.isEnabled() and page.remove_button.isEnabled()
        page.remove_selected()
        assert desk.harness.core.gate.session_rules == []
        page.rules_view.selectRow(0)
        await within(page.remove_selected())  # type: ignore[arg-type]
        assert desk.harness.core.settings.policy_rules == []

        await desk.harness.extension()
        await desk.harness.browser_count(1)
        token = await desk.harness.add_client("cursor")
        async with mcp_client(desk.harness.base_mcp(), token) as client:
            shown = expect(desk.approver.dialog_shown)
            call = asyncio.ensure_future(
                client.call_tool("browser_navigate", {"url": "https://example.org/", "tab_id": 1})
            )
            await within(shown, 10)
            page.refresh()
            assert page.pending_model.rowCount() == 1
            assert page.pending_model.data(page.pending_model.index(0, 2)) == "https://example.com"
            assert desk.ui.dashboard.pages.tabText(4) == "Approvals (1)"
            page.deny_all_button.click()
            await within(call, 10)
        page.refresh()
        assert page.pending_model.rowCount() == 0


def test_the_rule_dialog_checks_the_site_before_saving(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QDialogButtonBox

    from tabrelay.ui.rule_dialog import RuleDialog

    dialog = RuleDialog(clients=["cursor"], clock=lambda: 1000.0)
    qtbot.addWidget(dialog)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.site_edit.setText("ftp://example.com")
    assert not save.isEnabled() and "http://" in dialog.error.text()
    dialog.site_edit.setText("https://Example.com/path")
    assert not save.isEnabled() and "path" in dialog.error.text()
    dialog.site_edit.setText("Example.com")
    assert save.isEnabled()
    dialog.tool_box.setCurrentIndex(dialog.tool_box.findData("browser_evaluate"))
    dialog.decision_box.setCurrentIndex(dialog.decision_box.findData("allow"))
    assert "JavaScript" in dialog.warning.text()
    dialog.client_box.setCurrentIndex(1)
    dialog.expiry_box.setCurrentIndex(1)
    rule = dialog.rule()
    assert (rule.tool, rule.decision, rule.site, rule.client, rule.expires_at) == (
        "browser_evaluate",
        "allow",
        "https://example.com",
        "cursor",
        1000.0 + 3600,
    )


async def test_settings_refuse_bad_input_keep_it_and_save_good_input(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        desk.ui.open_settings()
        dialog = desk.ui.settings_dialog
        assert dialog is not None
        dialog.mcp_port.setValue(dialog.relay_port.value())
        assert dialog.save() is None
        assert dialog.error.text() == "The relay port and the MCP port must differ."
        assert dialog.isVisible()

        dialog.mcp_port.setValue(24002)
        dialog.block_edit.setPlainText("bank.example\nnot a site\n")
        assert dialog.save() is None
        assert dialog.error.text().startswith("Never open, line 2 (“not a site”)")
        assert dialog.block_edit.toPlainText() == "bank.example\nnot a site\n"  # nothing lost

        dialog.block_edit.setPlainText("bank.example\n*.casino.example\nhttps://x.example:8443")
        dialog.approval_timeout.setValue(30)
        dialog.scope_shared.setChecked(True)
        dialog.autostart_box.setChecked(True)
        assert not dialog.cdp_box.isChecked()
        dialog.cdp_box.setChecked(True)  # the expert tool, listed for clients from now on
        saved = expect(dialog.saved)
        await within(dialog.save())  # type: ignore[arg-type]
        await within(saved)
        settings = await asyncio.to_thread(desk.harness.core.settings_store.load)
        assert settings.approval_timeout == 30
        assert settings.mcp_port == 24002
        assert settings.tab_scope == "shared" and settings.enable_cdp_tool
        assert settings.navigation.block == [
            "bank.example",
            "*.casino.example",
            "https://x.example:8443",
        ]
        assert (desk.xdg / "autostart" / "tabrelay.desktop").is_file()
        assert dialog.restart_needed
        assert desk.ui.notifier.history[-1].message.startswith("The new ports take effect")


async def test_problems_are_shown_in_a_banner_and_pause_has_its_own(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        dashboard = desk.ui.dashboard
        dashboard.refresh_banners()
        # The tests run without a keychain: the UI must say that secrets are in a file.
        assert "keeps its secrets in a file" in dashboard.warning_banner.text()
        assert not dashboard.keychain_banner.isVisibleTo(dashboard)
        assert not dashboard.paused_banner.isVisibleTo(dashboard)
        desk.ui.set_paused(True)
        await until(lambda: dashboard.paused_banner.isVisibleTo(dashboard))
        assert dashboard.pause_action.isChecked()
        assert "/mcp" in dashboard.endpoints.text()


def test_site_lists_accept_what_the_guard_reads_and_name_what_it_cannot() -> None:
    from tabrelay.ui.settings_dialog import site_problem

    for site in ("bank.example", "bücher.de", "EXAMPLE.com.", "0xc0a80101", "*.mail.example",
                 "https://shop.example:8443", "[::1]", "192.168.1.1"):  # fmt: skip
        assert site_problem(site) is None, site
    assert "write a host" in (site_problem("not a site") or "")
    assert "leave out the path" in (site_problem("https://x.example/path") or "")
    assert "http:// or https://" in (site_problem("ftp://x.example") or "")
    assert "not an origin" in (site_problem("http://a b") or "")


async def test_a_locked_keychain_is_named_with_unlock_and_a_file_instead(
    desktop: DesktopFactory, home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug: a cancelled keyring prompt read "No usable keychain was found", and a paired
    browser being refused read "No browser is connected — Install the extension…"."""
    keychain = MemoryKeyring()
    pair(home, EXTENSION_ID, keyring_backend=keychain)
    locked = LockedKeyring()
    locked.entries = keychain.entries
    async with desktop(paired=(), keyring_backend=locked) as desk:
        dashboard = desk.ui.dashboard
        dashboard.refresh_banners()
        assert dashboard.keychain_banner.isVisibleTo(dashboard)
        assert "keychain is locked" in dashboard.keychain_text.text()
        assert "No usable keychain" not in dashboard.warning_banner.text()
        with pytest.raises(Exception):  # noqa: B017 - told to wait (4503)
            await desk.harness.extension()
        desk.ui.bridge.refresh_status()
        await until(lambda: "keychain is locked" in dashboard.tabs_page.empty_label.text())
        assert "Install the Tabrelay extension" not in dashboard.tabs_page.empty_label.text()
        tray = desk.ui.tray
        assert tray.state() is TrayState.ATTENTION
        tray.menu.aboutToShow.emit()
        assert tray.find("unlockKeychain") is not None
        desk.ui.bridge.drain_now()  # the refusal's alert: the keychain's notice says it all
        assert [n.title for n in desk.ui.notifier.history] == ["Tabrelay cannot read your keychain"]

        locked.locked = False  # the person unlocks it; then presses Unlock
        await within(desk.ui.unlock_keychain())
        await until(lambda: not dashboard.keychain_banner.isVisibleTo(dashboard))
        await desk.harness.extension()
        await desk.harness.browser_count(1)


async def test_use_a_file_instead_gives_up_a_locked_keychain_only_after_a_yes(
    desktop: DesktopFactory, home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    keychain = MemoryKeyring()
    pair(home, EXTENSION_ID, keyring_backend=keychain)
    locked = LockedKeyring()
    locked.entries = keychain.entries
    questions: list[str] = []
    answers = iter([False, True])

    async def answer(parent: object, title: str, question: str) -> bool:
        questions.append(question)
        return next(answers)

    monkeypatch.setattr("tabrelay.ui.desktop.ask", answer)
    async with desktop(paired=(), keyring_backend=locked) as desk:
        await within(desk.ui.use_secrets_file())
        assert SettingsStore(home.settings_file).load().secrets_place == "keychain"
        await within(desk.ui.use_secrets_file())
        assert "1 paired browser(s) ask to pair again" in questions[0]
        settings = SettingsStore(home.settings_file).load()
        assert settings.secrets_place == "file" and not settings.pairings
        assert desk.harness.core.secrets_problem is None
