"""Desktop notifications: a browser connected or lost, a pairing request, an approval waiting
unseen, a handoff opened, a security alert. Shown through the tray icon (which uses the
desktop's notification service where there is one); every notification is also logged and kept
for the dashboard. Each may name its topic, so a click on the message goes where it is about.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from PySide6.QtWidgets import QSystemTrayIcon

logger = logging.getLogger(__name__)

Kind = Literal["info", "warning", "critical"]
_ICONS = {
    "info": QSystemTrayIcon.MessageIcon.Information,
    "warning": QSystemTrayIcon.MessageIcon.Warning,
    "critical": QSystemTrayIcon.MessageIcon.Critical,
}


@dataclass(frozen=True, slots=True)
class Notification:
    title: str
    message: str
    kind: Kind = "info"
    time: float = field(default_factory=time.time)
    topic: str | None = None  # what a click on it opens ("handoff"); None: the approvals


class Notifier:
    def __init__(self, tray: QSystemTrayIcon | None, *, timeout_ms: int = 8000) -> None:
        self.tray = tray
        self.timeout_ms = timeout_ms
        self.history: deque[Notification] = deque(maxlen=100)

    def notify(
        self, title: str, message: str, kind: Kind = "info", *, topic: str | None = None
    ) -> None:
        self.history.append(Notification(title, message, kind, topic=topic))
        logger.log(logging.WARNING if kind != "info" else logging.INFO, "%s: %s", title, message)
        tray = self.tray
        if tray is not None and tray.isVisible() and QSystemTrayIcon.supportsMessages():
            tray.showMessage(title, message, _ICONS[kind], self.timeout_ms)

    @property
    def last_topic(self) -> str | None:
        """The topic of the newest notification (the one a click on the tray's message is
        about: the tray shows one message at a time)."""
        return self.history[-1].topic if self.history else None
