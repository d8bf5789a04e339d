"""The Recipes page's small dialogs: a name that is checked before the dialog closes (saving a
recording, naming a parameter), the tab to record a demonstration in, and a saved file shown
as it is on disk.

Each is opened with ``prompts.finished`` (never ``exec``); what a dialog checks it says inline
under the field, so a bad name costs the person nothing they typed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tabrelay.ui.table_model import detail_text
from tabrelay.ui.text import one_line

ERROR_STYLE = "color: #B3261E;"
# Checks what the person typed, and may act on it: None when it is fine, else what to change.
Check = Callable[[str], str | None]


class NameDialog(QDialog):
    """Ask for a name; Save runs ``check`` and closes only when it returns no problem."""

    def __init__(
        self,
        title: str,
        prompt: str,
        check: Check,
        *,
        text: str = "",
        checkbox: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{title} — Tabrelay")
        self._check = check
        self.prompt = QLabel(prompt, self)
        self.prompt.setTextFormat(Qt.TextFormat.PlainText)  # may quote a page's text
        self.prompt.setWordWrap(True)
        self.name_edit = QLineEdit(text, self)
        self.name_edit.selectAll()
        self.secret_box = QCheckBox(checkbox or "", self)
        self.secret_box.setVisible(checkbox is not None)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("error")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(ERROR_STYLE)
        self.error_label.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.name_edit.textEdited.connect(lambda _text: self.error_label.hide())
        layout = QVBoxLayout(self)
        layout.addWidget(self.prompt)
        layout.addWidget(self.name_edit)
        layout.addWidget(self.secret_box)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.resize(460, self.sizeHint().height())

    @property
    def name(self) -> str:
        return self.name_edit.text().strip()

    def accept(self) -> None:
        problem = self._check(self.name)
        if problem is not None:
            self.error_label.setText(problem)
            self.error_label.show()
            self.name_edit.setFocus()
            return
        super().accept()


@dataclass(frozen=True, slots=True)
class TabChoice:
    """A connected tab a demonstration can be recorded in."""

    browser_id: str
    tab_id: int
    title: str
    url: str
    browser: str

    @property
    def label(self) -> str:
        return (
            f"{one_line(self.title or self.url, 100)} — {one_line(self.url, 80)} · {self.browser}"
        )


class TabPickerDialog(QDialog):
    """ "Record what I do…": which tab; Start records the person's steps there until Stop."""

    def __init__(self, tabs: list[TabChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Record what I do — Tabrelay")
        intro = QLabel(
            "Pick the tab to record in. Tabrelay records your clicks, typing, choices, key "
            "presses and navigations there as recipe steps until you press Stop. What you type "
            "into password and one-time-code fields becomes a parameter; its value is never "
            "kept.",
            self,
        )
        intro.setWordWrap(True)
        self.list = QListWidget(self)
        for choice in tabs:
            item = QListWidgetItem(choice.label)
            item.setData(Qt.ItemDataRole.UserRole, choice)
            self.list.addItem(item)
        if tabs:
            self.list.setCurrentRow(0)
        self.empty = QLabel("No browser tab is connected. Pair a browser first.", self)
        self.empty.setVisible(not tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.start_button = QPushButton("Start recording", self)
        self.start_button.setEnabled(bool(tabs))
        buttons.addButton(self.start_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addWidget(buttons)
        self.resize(620, 360)

    def chosen(self) -> TabChoice | None:
        item = self.list.currentItem()
        choice = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return choice if isinstance(choice, TabChoice) else None


class FileDialog(QDialog):
    """A saved recipe's file: where it is and what it holds (read-only, the path copyable)."""

    def __init__(self, path: Path, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{path.name} — Tabrelay")
        self.path_label = QLabel(str(path), self)
        self.path_label.setTextFormat(Qt.TextFormat.PlainText)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = detail_text("", self)
        self.text.setPlainText(text)
        copy = QPushButton("Copy path", self)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(str(path)))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.path_label)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(720, 520)
