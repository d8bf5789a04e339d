"""The Connect dialog's layout: the snippet's buttons never cover the snippet."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect
from PySide6.QtWidgets import QApplication, QWidget

from gui.conftest import DesktopFactory, within
from tabrelay.system.clients import CLIENTS
from tabrelay.ui.connect_dialog import OTHER, ConnectClientDialog


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

        dialog.resize(dialog.minimumSize())
        assert dialog.size() == dialog.minimumSize()
        assert_nothing_covers_the_snippet(dialog)
