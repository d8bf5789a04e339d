"""Open handoffs as the dashboard shows them: a banner above every page while an agent waits for
the person to do something in a tab, with Done, Cancel and the time left.

The reason and the tab's title come from an agent and a page: they are shown as plain text with
hidden characters spelled out, never as markup. The banner only asks ``Handoffs`` to end one;
the tool call waiting on it answers the agent. The tray shows the same handoffs (``tray.py``),
with the words from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from PySide6.QtCore import Qt, QTimer, SignalInstance, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from tabrelay.tools.state.handoffs import EndedBy, Handoffs, OpenHandoff
from tabrelay.ui.text import one_line

BANNER_STYLE = "background: #E8F0FE; color: #174EA6; padding: 6px; border-radius: 4px;"


def handoff_headline(handoff: OpenHandoff, limit: int = 300) -> str:
    """ "An agent asks you to: <reason> — tab “<title>”", every part made safe to read."""
    reason = one_line(handoff.reason, limit)
    tab = one_line(handoff.title or handoff.url or f"tab {handoff.tab_id}", 120)
    return f"An agent asks you to: {reason} — tab “{tab}”"


def time_left(deadline: float, now: float) -> str:
    """What is left until ``deadline``: "4 min 05 s left", "12 s left", "time is up"."""
    seconds = int(deadline - now)
    if seconds <= 0:
        return "time is up"
    if seconds < 60:
        return f"{seconds} s left"
    return f"{seconds // 60} min {seconds % 60:02d} s left"


def handoff_detail(handoff: OpenHandoff, now: float) -> str:
    """Who asked and how long is left: "claude-code · 4 min 05 s left · https://…"."""
    parts = [one_line(handoff.client, 80)] if handoff.client else []
    parts.append(time_left(handoff.deadline, now))
    if handoff.url:
        parts.append(one_line(handoff.url, 120))
    return " · ".join(parts)


class HandoffRow(QWidget):
    """One open handoff: what the agent asks, who and how long, Done and Cancel."""

    def __init__(self, handoff: OpenHandoff, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.handoff = handoff
        self.setObjectName(f"handoff:{handoff.id}")
        self.headline = QLabel(handoff_headline(handoff), self)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)  # an agent's words, a page's title
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.headline.font()
        font.setBold(True)
        self.headline.setFont(font)
        self.detail = QLabel(self)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.done_button = QPushButton("Done", self)
        self.done_button.setToolTip("You finished: the agent goes on in this tab")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("You will not do it: the agent is told it was cancelled")
        words = QVBoxLayout()
        words.setContentsMargins(0, 0, 0, 0)
        words.addWidget(self.headline)
        words.addWidget(self.detail)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(words, 1)
        layout.addWidget(self.done_button)
        layout.addWidget(self.cancel_button)

    def tick(self, now: float) -> None:
        self.detail.setText(handoff_detail(self.handoff, now))


class HandoffsBanner(QWidget):
    """The dashboard's banner of open handoffs; hidden while there is none."""

    def __init__(
        self,
        handoffs: Handoffs,
        changed: SignalInstance,
        *,
        by: EndedBy = "dashboard",
        clock: Callable[[], float] = time.time,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.handoffs = handoffs
        self.by = by
        self._clock = clock
        self.rows: dict[str, HandoffRow] = {}
        self.setObjectName("handoffsBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(f"#handoffsBanner {{ {BANNER_STYLE} }}")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(8, 4, 8, 4)
        self.note = QLabel(self)  # the last end that came too late, if any
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.hide()
        self._layout.addWidget(self.note)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        changed.connect(self.refresh)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Show the handoffs open now (rows that stay keep their widgets)."""
        current = {h.id: h for h in self.handoffs.open()}
        for handoff_id in [i for i in self.rows if i not in current]:
            gone = self.rows.pop(handoff_id)
            gone.hide()
            gone.deleteLater()
        for handoff_id, handoff in current.items():
            row: HandoffRow | None = self.rows.get(handoff_id)
            if row is None:
                row = self.rows[handoff_id] = HandoffRow(handoff, self)
                row.done_button.clicked.connect(lambda _=False, i=handoff_id: self.end(i, "done"))
                row.cancel_button.clicked.connect(
                    lambda _=False, i=handoff_id: self.end(i, "cancelled")
                )
                self._layout.insertWidget(self._layout.count() - 1, row)
            row.handoff = handoff
        self._tick()
        self.setVisible(bool(self.rows))
        if self.rows:
            self.note.hide()
            self._timer.start()
        else:
            self._timer.stop()

    def end(self, handoff_id: str, outcome: Literal["done", "cancelled"]) -> bool:
        """End one handoff as the person chose; ``False`` if it had ended already."""
        ended = self.handoffs.end(handoff_id, outcome, by=self.by)
        self.refresh()
        if not ended:
            self.note.setText("That handoff had already ended (timed out, or its tab closed).")
            self.note.show()
            self.show()
        return ended

    @Slot()
    def _tick(self) -> None:
        now = self._clock()
        for row in self.rows.values():
            row.tick(now)
