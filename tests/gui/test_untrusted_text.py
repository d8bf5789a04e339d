"""Text from agents and pages is shown, never interpreted (THREATS A3, I5), and the questions the
UI asks the person never block the event loop."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from gui.conftest import DesktopFactory, until, within
from tabrelay.approval.gate import ApprovalRequest
from tabrelay.ui.approval_dialog import ApprovalDialog
from tabrelay.ui.prompts import ask
from tabrelay.ui.rule_dialog import RuleDialog
from tabrelay.ui.text import arguments_text, one_line, visible

UI = Path(__file__).parents[2] / "desktop" / "tabrelay"


def test_markup_in_titles_origins_and_client_names_is_shown_literally(qtbot: QtBot) -> None:
    link = '<a href="file:///etc/passwd">Click to continue</a>'
    dialog = ApprovalDialog(
        ApprovalRequest(
            id=1,
            client="cursor",
            tool="browser_click",
            arguments={"ref": "e12"},
            origin="https://example.com",
            tab_title=link,
            tab_id=3,
            client_reported="<b>Trusted system</b>",
        )
    )
    qtbot.addWidget(dialog)
    for label in (dialog.headline, dialog.origin_label, dialog.client_label, dialog.tab_label):
        assert label.textFormat() == Qt.TextFormat.PlainText
        assert not label.openExternalLinks()
    assert link in dialog.tab_label.text()
    assert "“<b>Trusted system</b>” (self-reported)" in dialog.client_label.text()


def test_hidden_characters_are_spelled_out_everywhere_text_is_shortened() -> None:
    assert visible("a\u202eb\u2066c\u00a0d\u200de") == "a\\u202eb\\u2066c\\u00a0d\\u200de"
    assert visible("tab\tand\nnewline") == "tab\\u0009and\\u000anewline"
    assert visible("x\U000e0041y") == "x\\U000e0041y"  # a tag character
    assert one_line("é" * 300, 10) == "é" * 9 + "…"
    assert arguments_text({"t": "\u202e"}) == '{\n  "t": "\\u202e"\n}'


def test_the_ui_never_hands_strings_to_the_operating_system_to_open() -> None:
    sources = [*sorted((UI / "ui").glob("*.py")), UI / "app.py"]
    forbidden = re.compile(
        r"QDesktopServices|openUrl|webbrowser|startfile|os\.system|subprocess|"
        r"setOpenExternalLinks\(True\)"
    )
    found = [
        f"{path.name}: {line.strip()}"
        for path in sources
        for line in path.read_text(encoding="utf-8").splitlines()
        if forbidden.search(line) and not line.lstrip().startswith(("#", '"'))
    ]
    assert found == []


def test_no_dialog_runs_a_nested_event_loop() -> None:
    nested = re.compile(r"\.exec\(\)|QMessageBox\.(question|warning|information|critical)\(")
    nested_dialogs = re.compile(r"QFileDialog\.get|processEvents")
    found = [
        f"{path.name}: {line.strip()}"
        for path in [*sorted((UI / "ui").glob("*.py")), UI / "app.py"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if (nested.search(line) or nested_dialogs.search(line))
        and not line.lstrip().startswith(("#", '"', "Qt's"))
    ]
    assert found == []


async def test_a_question_is_answered_without_blocking_the_loop(qtbot: QtBot) -> None:
    ticks: list[int] = []

    async def ticking() -> None:
        while True:
            ticks.append(1)
            await asyncio.sleep(0.01)

    ticker = asyncio.ensure_future(ticking())
    answer = asyncio.ensure_future(ask(None, "Revoke", "Revoke it?"))
    box = await until(
        lambda: next(
            (
                w
                for w in QApplication.topLevelWidgets()
                if isinstance(w, QMessageBox) and w.isVisible()
            ),
            None,
        )
    )
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.No)
    await until(lambda: len(ticks) > 3, message="the loop runs while the question is open")
    box.button(QMessageBox.StandardButton.Yes).click()
    assert await within(answer) is True
    await until(lambda: not shiboken6.isValid(box), message="the answered box is deleted")
    ticker.cancel()


async def test_adding_a_rule_through_its_dialog_saves_it(desktop: DesktopFactory) -> None:
    async with desktop() as desk:
        page = desk.ui.dashboard.approvals_page
        task = page.add_rule()
        dialog = await until(
            lambda: next(
                (w for w in page.findChildren(RuleDialog) if w.isVisible()),
                None,
            )
        )
        dialog.tool_box.setCurrentIndex(dialog.tool_box.findData("browser_navigate"))
        dialog.site_edit.setText("https://docs.example.com")
        dialog.accept()
        await within(task)
        await until(lambda: not page.findChildren(RuleDialog), message="the dialog is deleted")
        (rule,) = desk.harness.core.settings.policy_rules
        assert (rule.tool, rule.decision, rule.site) == (
            "browser_navigate",
            "allow",
            "https://docs.example.com",
        )
