"""The keychain's waits, said before they happen: a small window naming the password prompt
the system may show as Tabrelay's, while Tabrelay waits for the keychain (start-up, Unlock).

The system's prompt ("Choose password for new keyring", "Unlock keyring") does not say who
asks; this window does, and it goes away once the keychain has answered.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from tabrelay.ui.icons import app_icon
from tabrelay.ui.windows import bring_to_front

T = TypeVar("T")

FIRST_TIME = (
    "<b>Tabrelay keeps its credentials in your keychain.</b><br>Your system may now ask you "
    "to create or unlock it (for example “Choose password for new keyring”): that request "
    "comes from Tabrelay. If you cancel it, Tabrelay asks you what to do instead."
)
WAITING = (
    "<b>Tabrelay is waiting for your keychain.</b><br>A password prompt from your system may "
    "be open, perhaps behind another window: it comes from Tabrelay. Tabrelay goes on once "
    "you answer it."
)


class KeychainNotice(QDialog):
    """Non-modal: the person may answer the system's prompt, which is another window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("keychainNotice")
        self.setWindowTitle("Your keychain — Tabrelay")
        self.setWindowIcon(app_icon())
        self.setMinimumWidth(440)
        self.text = QLabel(WAITING, self)
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        hide = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        hide.rejected.connect(self.hide)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(hide)

    def say(self, text: str) -> None:
        self.text.setText(text)
        bring_to_front(self)

    async def during(self, work: Awaitable[T], text: str | None = None) -> T:
        """Await ``work``, with this window up from the start when ``text`` is given (else
        only if the keychain makes it wait: ``say(WAITING)`` from ``on_wait``)."""
        if text is not None:
            self.say(text)
        try:
            return await work
        finally:
            self.hide()
