"""Pairing browsers: the dialog for an extension asking to pair (DESIGN §4.5), its approver,
and the "Pair a browser…" window (how to pair, the paired browsers, pairing by hand).

The dialog shows without taking the keyboard, Allow wakes up after a short delay, and no key
but Escape answers it: a keystroke meant for another window can neither pair an extension nor
deny it (a stray Return used to deny, leaving the browser a minute of quiet).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QFont, QFontDatabase, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tabrelay.config.settings import PairedBrowser
from tabrelay.core import Core
from tabrelay.protocol.constants import TABRELAY_EXTENSION_ID
from tabrelay.ui.icons import app_icon
from tabrelay.ui.prompts import ask
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import visible
from tabrelay.ui.windows import Retired, bring_to_front, show_unasked

ALLOW_DELAY = 0.8


class PairingDialog(QDialog):
    """ "A browser extension asks to pair with Tabrelay" — Allow / Deny."""

    answered = Signal(bool)
    allow_unlocked = Signal()

    def __init__(
        self,
        extension_id: str,
        code: str | None = None,
        *,
        allow_delay: float = ALLOW_DELAY,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.extension_id = extension_id
        self.code = code
        self.allow_delay = allow_delay
        self._done = False
        self.setWindowTitle("Pair a browser extension? — Tabrelay")
        self.setWindowIcon(app_icon())
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
        self.setMinimumWidth(560)

        headline = QLabel("A browser extension asks to pair with Tabrelay", self)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        headline.setFont(font)
        self.origin_label = QLabel(f"chrome-extension://{visible(extension_id)}", self)
        self.origin_label.setTextFormat(Qt.TextFormat.PlainText)
        self.origin_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.origin_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code_label = QLabel(self)
        self.code_label.setTextFormat(Qt.TextFormat.RichText)
        self.code_label.setWordWrap(True)
        if code is not None:
            self.code_label.setText(
                f"Its code: <b style='font-size:150%; letter-spacing:4px'>{code}</b><br>Allow "
                "only if the Tabrelay extension's popup in your browser shows this same code."
            )
        else:
            self.code_label.setText(
                "It shows no code: an older relay extension, or a program asking in an "
                "extension's name (the Tabrelay extension always shows one)."
            )
        known = extension_id == TABRELAY_EXTENSION_ID
        self.identity = QLabel(
            "✓ This is the id of the Tabrelay extension."
            if known
            else "⚠ This is not the id of the Tabrelay extension from this project. Allow it "
            "only if you know which extension this is.",
            self,
        )
        self.identity.setWordWrap(True)
        if not known:
            self.identity.setStyleSheet("color: #B3261E;")
        explain = QLabel(
            "Pairing gives this browser a credential of its own, so it can connect and let AI "
            "agents use its tabs — each action still goes through your approvals. Allow it only "
            "if you just installed the Tabrelay extension or pressed Pair in its popup: any "
            "program on this computer can ask in an extension's name.",
            self,
        )
        explain.setWordWrap(True)
        self.deny_button = QPushButton("Deny", self)
        self.allow_button = QPushButton("Allow", self)
        for button in (self.deny_button, self.allow_button):
            button.setAutoDefault(False)  # Return presses nothing
        self.allow_button.setEnabled(False)
        self.deny_button.clicked.connect(lambda: self.answer(False))
        self.allow_button.clicked.connect(lambda: self.answer(True))
        buttons = QHBoxLayout()
        buttons.addStretch()
        buttons.addWidget(self.deny_button)
        buttons.addWidget(self.allow_button)
        layout = QVBoxLayout(self)
        layout.addWidget(headline)
        layout.addWidget(self.origin_label)
        layout.addWidget(self.code_label)
        layout.addWidget(self.identity)
        layout.addWidget(explain)
        layout.addLayout(buttons)
        self._allow_timer = QTimer(self)
        self._allow_timer.setSingleShot(True)
        self._allow_timer.timeout.connect(self._enable_allow)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.allow_button.isEnabled():
            self._allow_timer.start(int(self.allow_delay * 1000))

    @Slot()
    def _enable_allow(self) -> None:
        self.allow_button.setEnabled(True)
        self.allow_unlocked.emit()

    @property
    def allow_enabled(self) -> bool:
        return self.allow_button.isEnabled()

    def answer(self, allowed: bool) -> None:
        if self._done or (allowed and not self.allow_button.isEnabled()):
            return
        self._done = True
        self._allow_timer.stop()
        self.answered.emit(allowed)

    def dismiss(self) -> None:
        self._done = True
        self._allow_timer.stop()
        self.hide()

    def reject(self) -> None:
        self.answer(False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            return  # a choice is a click (or Escape): never a key typed for another window
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._done:
            self.answer(False)
        super().closeEvent(event)


class DialogPairingApprover(QObject):
    """The core's ``PairingApprover``: one dialog per asking extension, until answered."""

    requested = Signal(str)  # extension id: for a notification
    dialog_shown = Signal(object)  # PairingDialog

    def __init__(self, *, allow_delay: float = ALLOW_DELAY, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.allow_delay = allow_delay
        self.dialogs: dict[str, PairingDialog] = {}
        self._retired = Retired()

    async def approve_pairing(self, extension_id: str, code: str | None) -> bool:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        dialog = PairingDialog(extension_id, code, allow_delay=self.allow_delay)
        dialog.answered.connect(lambda allowed: _settle(future, allowed))
        self.dialogs[extension_id] = dialog
        show_unasked(dialog)
        self.requested.emit(extension_id)
        self.dialog_shown.emit(dialog)
        try:
            return await future
        finally:
            self.dialogs.pop(extension_id, None)
            dialog.dismiss()
            self._retired.add(dialog)

    def bring_up(self) -> None:
        for dialog in self.dialogs.values():
            bring_to_front(dialog)


def _settle(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)


class PairBrowserDialog(QDialog):
    """How to pair, which browsers are paired (each revocable), and pairing by hand."""

    def __init__(self, core: Core, tasks: BackgroundTasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self.setWindowTitle("Pair a browser — Tabrelay")
        self.setMinimumWidth(560)
        steps = QLabel(
            "<ol>"
            "<li>Install the Tabrelay extension in Chrome, Chromium, Edge or Brave.</li>"
            "<li>It finds this app by itself and asks to pair: a window like this one appears "
            "— press <b>Allow</b>.</li>"
            "<li>The extension's icon shows <b>ON</b> once it is connected.</li>"
            "</ol>"
            "<p>If it cannot reach the app (another port, a locked-down browser), pair by hand: "
            "<b>Pair by hand</b> makes a credential for one browser and copies it; paste it in "
            "the extension's options page.</p>",
            self,
        )
        steps.setWordWrap(True)
        steps.setTextFormat(Qt.TextFormat.RichText)
        self.paired = QListWidget(self)
        self.revoke_button = QPushButton("Unpair", self)
        self.copy_button = QPushButton("Pair by hand", self)
        self.copy_button.setToolTip(
            "Pairs one more browser and copies its credential. Anyone with it can connect as "
            "that browser; paste it only into the Tabrelay extension's options."
        )
        self.status = QLabel(self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.revoke_button)
        row.addStretch()
        row.addWidget(self.copy_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(steps)
        layout.addWidget(QLabel("Paired browsers:", self))
        layout.addWidget(self.paired)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(close)
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.copy_button.clicked.connect(self.pair_by_hand)
        self.paired.currentRowChanged.connect(
            lambda _row: self.revoke_button.setEnabled(self.paired.currentItem() is not None)
        )
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        self.paired.clear()
        connected = {b.pairing_id for b in self.core.registry.all()}
        for paired in self.core.settings.pairings:
            item = QListWidgetItem(describe_pairing(paired, connected=paired.id in connected))
            item.setData(Qt.ItemDataRole.UserRole, paired.id)
            self.paired.addItem(item)
        if not self.core.settings.pairings:
            self.paired.addItem("(none yet)")
            self.paired.item(0).setFlags(Qt.ItemFlag.NoItemFlags)
        self.revoke_button.setEnabled(False)

    @Slot()
    def pair_by_hand(self) -> asyncio.Task[None]:
        async def run() -> None:
            paired, token = await self.core.pairing.pair_now(TABRELAY_EXTENSION_ID)
            QGuiApplication.clipboard().setText(token)
            with contextlib.suppress(RuntimeError):  # the dialog may be closed by now
                self.status.setText(
                    f"Paired {paired.id}; its credential is on the clipboard. Paste it into the "
                    "extension's options page (right-click its icon → Options), then clear the "
                    "clipboard."
                )
                self.refresh()

        return self.tasks.start(run())

    @Slot()
    def revoke_selected(self) -> asyncio.Task[None] | None:
        item = self.paired.currentItem()
        pairing_id = item.data(Qt.ItemDataRole.UserRole) if item else None
        if not pairing_id:
            return None
        question = (
            f"Unpair {pairing_id}? That browser disconnects at once and has to ask again to pair."
        )

        async def run() -> None:
            if not await ask(self, "Unpair browser", question):
                return
            await asyncio.to_thread(self.core.pairing.revoke, pairing_id)
            with contextlib.suppress(RuntimeError):  # the dialog may be closed by now
                self.refresh()

        return self.tasks.start(run())


def describe_pairing(paired: PairedBrowser, *, connected: bool) -> str:
    """One paired browser on a line: name, which extension, since when, and if it is here."""
    when = time.strftime("%Y-%m-%d", time.localtime(paired.paired_at))
    extension = "Tabrelay" if paired.extension_id == TABRELAY_EXTENSION_ID else paired.extension_id
    name = paired.label or "a browser"
    return f"{name} · {extension} · {paired.id} · paired {when}" + (
        " · connected" if connected else ""
    )
