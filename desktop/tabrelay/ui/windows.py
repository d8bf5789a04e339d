"""Top-level windows: showing one, bringing one to the front, letting one go without a crash.

A window that appears by itself (a request, not the person's click) shows on top without
taking the keyboard: what the person is typing elsewhere keeps going there, so a Return meant
for a terminal or a keychain prompt cannot answer it. ``bring_to_front`` is for the person's
own asking (the tray, a notification, a menu), and activates.

A window made in Python without a parent belongs to its Python wrapper; when the last
reference goes, PySide deletes it at once — which crashes Qt if that happens inside the
window's own signal (an answer button's ``clicked``). ``Retired`` keeps closed windows alive
until Qt deletes them itself on the next turn of the event loop.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


def show_unasked(window: QWidget) -> None:
    window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
    window.showNormal()
    window.raise_()


def bring_to_front(window: QWidget) -> None:
    window.showNormal()
    window.raise_()
    window.activateWindow()


class Retired:
    """Closed windows waiting for ``deleteLater``; see the module docstring."""

    def __init__(self) -> None:
        self._windows: set[QWidget] = set()

    def __len__(self) -> int:
        return len(self._windows)

    def add(self, window: QWidget) -> None:
        window.hide()
        self._windows.add(window)
        window.destroyed.connect(lambda *_: self._windows.discard(window))
        window.deleteLater()
