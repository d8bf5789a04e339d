"""The Connect dialog: the snippet's buttons never cover the snippet, and what it writes or
shows fits this install."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect
from PySide6.QtWidgets import QApplication, QWidget

from gui.conftest import DesktopFactory, within
from tabrelay.system.clients import CLIENTS
from tabrelay.ui.connect_dialog import OTHER, SNIPPET_LINES, ConnectClientDialog


def area(dialog: ConnectClientDialog, widget: QWidget) -> QRect:
    return QRect(widget.mapTo(dialog, QPoint(0, 0)), widget.size())


def assert_nothing_covers_the_snippet(dialog: ConnectClientDialog) -> None:
    # What the person sees once Qt has run the layout the last change asked for.
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    text = area(dialog, dialog.snippet.viewport())
    assert text.height() > 0
    for button in (dialog.copy_button, dialog.merge_button):
        if button.isVisible():
            assert not area(dialog, button).intersects(text), (button.text(), dialog.size())
    assert not area(dialog, dialog.result_label).intersects(text)
    below = area(dialog, dialog.result_label).bottom()
    assert below <= area(dialog, dialog.step_two).bottom() <= dialog.height()


@pytest.mark.parametrize("kind", [*CLIENTS, OTHER])
async def test_the_copy_button_sits_clear_of_the_snippet_at_default_and_minimum_size(
    desktop: DesktopFactory, kind: str
) -> None:
    async with desktop() as desk:
        desk.ui.connect_client(kind)
        dialog = desk.ui.connect_dialog
        assert dialog is not None
        await within(dialog.create_client())  # type: ignore[arg-type]
        assert dialog.step_two.isVisible()
        assert_nothing_covers_the_snippet(dialog)
        # Each client's snippet shows whole, without scrolling (screenshots found Cursor's cut
        # short); the longer "other" one gets the tallest box before it scrolls.
        box = dialog.snippet
        if kind == OTHER:
            assert box.height() >= SNIPPET_LINES * box.fontMetrics().lineSpacing()
        else:
            assert box.verticalScrollBar().maximum() == 0, dialog.size()

        dialog.resize(dialog.minimumSize())
        assert dialog.size() == dialog.minimumSize()
        assert_nothing_covers_the_snippet(dialog)


async def test_a_portable_install_names_its_home_and_the_dialog_says_what_changed_in_a_file(
    desktop: DesktopFactory, tmp_path: Path
) -> None:
    async with desktop() as desk:
        home = str(desk.harness.paths.config_dir.parent)  # the tests' TABRELAY_HOME
        config = tmp_path / "person" / ".cursor" / "mcp.json"
        config.parent.mkdir(parents=True)
        config.write_text("{}")
        config.chmod(0o644)  # readable by others, and about to hold a token
        desk.ui.connect_client(OTHER)
        dialog = desk.ui.connect_dialog
        assert dialog is not None
        await within(dialog.create_client())  # type: ignore[arg-type]
        assert f"TABRELAY_HOME={home}" in dialog.snippet.toPlainText()
        dialog.kind_box.setCurrentIndex(dialog.kind_box.findData("claude-desktop"))
        assert f'"TABRELAY_HOME": "{home}"' in dialog.snippet.toPlainText()

        dialog.kind_box.setCurrentIndex(dialog.kind_box.findData("cursor"))

        async def yes(title: str, question: str) -> bool:
            return True

        dialog._confirm = yes
        await within(dialog.merge())  # type: ignore[arg-type]
        assert "only you can read it" in dialog.result_label.text()
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
