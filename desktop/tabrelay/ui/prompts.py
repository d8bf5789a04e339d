"""Questions to the person that do not block the event loop.

Qt's static helpers (``QMessageBox.question``, ``QFileDialog.getSaveFileName``) and
``QDialog.exec`` run a nested event loop; under qasync that steps other asyncio tasks from
inside whatever is running, which breaks them (ENVIRONMENT.md, "Qt + asyncio"). These open
the same dialogs with ``open()`` and await the answer instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget


async def finished(dialog: QDialog) -> int:
    """Open ``dialog`` (window-modal, not blocking) and wait until it closes; its result."""
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    dialog.finished.connect(lambda result: None if done.done() else done.set_result(result))
    dialog.open()
    return await done


# A yes/no question to the person: ``ask`` bound to a parent widget, or a test's stand-in.
Confirm = Callable[[str, str], Awaitable[bool]]


async def ask(parent: QWidget | None, title: str, question: str) -> bool:
    """A Yes/No question whose default is No; ``True`` for Yes."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title,
        question,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setWindowTitle(f"{title} — Tabrelay")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    try:
        await finished(box)
        clicked = box.clickedButton()
        return clicked is not None and box.standardButton(clicked) == QMessageBox.StandardButton.Yes
    finally:
        box.deleteLater()  # not left behind among the parent's children


async def save_file_name(
    parent: QWidget | None, title: str, suggested: str, filters: list[str]
) -> str | None:
    """Where to save a file, or ``None`` if the person cancelled."""
    dialog = QFileDialog(parent, title, suggested, ";;".join(filters))
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    try:
        if await finished(dialog) != QDialog.DialogCode.Accepted.value:
            return None
        files = dialog.selectedFiles()
        return files[0] if files else None
    finally:
        dialog.deleteLater()
