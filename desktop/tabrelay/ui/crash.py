"""The crash hook: an error nobody caught is logged (redacted) and shown, never swallowed.

Installed as ``sys.excepthook`` (exceptions in Qt slots land there) and as the asyncio loop's
exception handler. A ``TabrelayError`` shows its own title and message; anything else shows
its type, message and where the log is. Repeats of the same error within a short time are
logged but not shown again, so a failing timer cannot bury the person in dialogs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from tabrelay.errors import TabrelayError

logger = logging.getLogger("tabrelay.crash")

REPEAT_WINDOW = 30.0  # seconds in which the same error is shown only once


class CrashHandler:
    def __init__(
        self,
        *,
        log_file: Path | None,
        show: Callable[[str, str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log_file = log_file
        self._show = show or self._message_box
        self._clock = clock
        self._shown: dict[str, float] = {}
        self._boxes: list[QWidget] = []
        self._previous_hook = sys.excepthook

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        sys.excepthook = self.excepthook
        if loop is not None:
            loop.set_exception_handler(self.loop_exception)

    def uninstall(self) -> None:
        sys.excepthook = self._previous_hook

    def excepthook(
        self,
        kind: type[BaseException],
        error: BaseException,
        traceback: TracebackType | None,
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            self._previous_hook(kind, error, traceback)
            return
        logger.error("unexpected error", exc_info=(kind, error, traceback))
        self.report(error)

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, BaseException):
            logger.error("%s", context.get("message", "error in the event loop"), exc_info=error)
            self.report(error)
        else:
            logger.error("event loop: %s", context.get("message"))

    def report(self, error: BaseException) -> None:
        """Show ``error`` to the person (once per ``REPEAT_WINDOW`` for the same error)."""
        if isinstance(error, TabrelayError):
            title, message = error.title, error.message
        else:
            title = "Tabrelay hit an unexpected error"
            where = f"\n\nDetails are in {self.log_file}." if self.log_file else ""
            message = (
                f"{type(error).__name__}: {error}{where}\n\nTabrelay keeps running; if "
                "something looks wrong, quit and start it again."
            )
        key = f"{type(error).__name__}: {error}"
        now = self._clock()
        if now - self._shown.get(key, -REPEAT_WINDOW) < REPEAT_WINDOW:
            return
        self._shown[key] = now
        self._show(title, message)

    def _message_box(self, title: str, message: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Critical, title, message)
        box.setWindowTitle(f"{title} — Tabrelay")
        self._boxes.append(box)
        box.finished.connect(lambda _result: self._boxes.remove(box))
        box.open()  # never exec(): the loop must keep running
