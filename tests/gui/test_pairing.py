"""Pairing: a new extension asking for the config gets a dialog; only Allow pairs it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from e2e.chromium import extension_id_from_key
from gui.conftest import DesktopFactory, expect, unlocked, until, within
from support.fake_extension import OTHER_EXTENSION_ID
from support.http import raw_request
from tabrelay.protocol.constants import CONFIG_PATH
from tabrelay.ui.pairing import TABRELAY_EXTENSION_ID, PairingDialog

ORIGIN = f"chrome-extension://{OTHER_EXTENSION_ID}"


async def ask_config(port: int, code: str = "") -> object:
    path = f"{CONFIG_PATH}?code={code}" if code else CONFIG_PATH
    return (await raw_request(port, path, headers={"Origin": ORIGIN})).json()


async def test_allowing_the_pairing_dialog_pairs_the_extension(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    async with desktop() as desk:
        shown = expect(desk.pairing.dialog_shown)
        assert await ask_config(desk.harness.port, "Q4ZK7M") == {"error": "pairing_required"}
        (dialog,) = await within(shown)
        assert dialog.origin_label.text() == ORIGIN
        assert "Q4ZK7M" in dialog.code_label.text() and "same code" in dialog.code_label.text()
        assert "not the id of the Tabrelay extension" in dialog.identity.text()
        assert not dialog.deny_button.isDefault() and not dialog.allow_button.isDefault()
        assert not dialog.allow_button.isEnabled()
        assert desk.ui.tray.state().value == "attention"
        assert desk.ui.notifier.history[-1].title == "A browser extension asks to pair"

        await unlocked(dialog)
        qtbot.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
        await until(lambda: not desk.harness.core.pairing.pending)
        answer = await ask_config(desk.harness.port, "Q4ZK7M")  # the browser collects it
        assert desk.harness.core.pairing.is_paired(OTHER_EXTENSION_ID)
        credential = desk.harness.credential(OTHER_EXTENSION_ID)
        assert isinstance(answer, dict) and answer["token"] == credential
        assert not desk.pairing.dialogs
        again = await ask_config(desk.harness.port, "Q4ZK7M")
        assert again == {"error": "pairing_required"}, "once"


async def test_a_stray_keystroke_neither_answers_nor_lands_in_the_dialog(
    desktop: DesktopFactory, qtbot: QtBot
) -> None:
    """The dialog that denied itself (issue 13, 4): it took the keyboard while the person typed
    elsewhere, and their Return meant Deny. It now shows without taking the keyboard, and keys
    that are not a deliberate choice answer nothing; Escape (or closing it) denies."""
    async with desktop() as desk:
        shown = expect(desk.pairing.dialog_shown)
        await ask_config(desk.harness.port, "Q4ZK7M")
        (dialog,) = await within(shown)
        assert dialog.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        await unlocked(dialog)
        for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space, Qt.Key.Key_A):
            qtbot.keyClick(dialog, key)
        await asyncio.sleep(0.2)
        assert desk.harness.core.pairing.pending and dialog.isVisible(), "still asking"
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        await until(lambda: not desk.harness.core.pairing.pending)
        assert not desk.harness.core.pairing.is_paired(OTHER_EXTENSION_ID)
        assert await ask_config(desk.harness.port) == {"error": "pairing_required"}
        settings = await asyncio.to_thread(desk.harness.core.settings_store.load)
        assert OTHER_EXTENSION_ID not in [p.extension_id for p in settings.pairings]


def test_the_dialog_recognises_the_tabrelay_extensions_pinned_id(qtbot: QtBot) -> None:
    manifest = Path(__file__).parents[2] / "extension" / "manifest.json"
    key = json.loads(manifest.read_text(encoding="utf-8"))["key"]
    assert extension_id_from_key(key) == TABRELAY_EXTENSION_ID
    dialog = PairingDialog(TABRELAY_EXTENSION_ID)
    qtbot.addWidget(dialog)
    assert dialog.identity.text() == "✓ This is the id of the Tabrelay extension."


async def test_the_pair_a_browser_window_lists_pairings_and_pairs_one_more_by_hand(
    desktop: DesktopFactory,
) -> None:
    from PySide6.QtGui import QGuiApplication

    async with desktop() as desk:
        desk.ui.pair_browser()
        window = desk.ui.pair_dialog
        assert window is not None and window.paired.count() == 1
        paired = desk.harness.token
        await window.pair_by_hand()
        copied = QGuiApplication.clipboard().text()
        assert copied != paired, "a credential of its own for the browser paired by hand"
        assert copied == desk.harness.credential(TABRELAY_EXTENSION_ID)
        assert "options page" in window.status.text()
        assert window.paired.count() == 2
        assert "Tabrelay" in window.paired.item(1).text()
