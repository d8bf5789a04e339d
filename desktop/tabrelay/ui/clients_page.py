"""The dashboard's Clients page: MCP clients (create, revoke) and their live sessions.

Names come from the settings the core keeps current; activity (last request, open requests and
event streams) from the endpoint, refreshed every second. Creating opens the connect dialog,
which shows the new token once; revoking asks first and takes effect at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tabrelay.core import Core
from tabrelay.endpoint.auth import ClientActivity
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.prompts import Confirm, ask
from tabrelay.ui.table_model import ModelIndex, RowsModel, rows_view
from tabrelay.ui.tabs_page import relative_time
from tabrelay.ui.tasks import BackgroundTasks

ACTIVE_WINDOW = 600.0  # seconds since the last request in which a client counts as active


@dataclass(frozen=True, slots=True)
class ClientRow:
    name: str
    created_at: float
    last_seen: float
    open_requests: int

    def session(self, now: float) -> str:
        """What the person needs to know: is this client using Tabrelay right now?"""
        if self.open_requests > 0:
            count = self.open_requests
            return f"connected · {count} open request{'s' if count != 1 else ''}"
        if not self.last_seen:
            return "not used yet"
        return "active" if now - self.last_seen < ACTIVE_WINDOW else "idle"


def client_rows(core: Core) -> list[ClientRow]:
    activity = core.client_activity()
    rows = []
    for client in core.settings.clients:
        seen = activity.get(client.name, ClientActivity())
        rows.append(ClientRow(client.name, client.created_at, seen.last_seen, seen.open_requests))
    return rows


class ClientsModel(RowsModel[ClientRow]):
    COLUMNS = ("Client", "Session", "Last request", "Created")

    def __init__(
        self, *, clock: Callable[[], float] = time.time, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._clock = clock

    def set_rows(self, rows: list[ClientRow]) -> None:
        self.replace_rows(rows, key=lambda r: r.name)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        row, column = cell
        if column == "Client":
            return row.name
        if column == "Session":
            return row.session(self._clock())
        if column == "Last request":
            return relative_time(row.last_seen or None, self._clock())
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(row.created_at))


class ClientsPage(QWidget):
    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        tasks: BackgroundTasks,
        *,
        connect_client: Callable[[str | None], None],
        confirm: Confirm | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self._confirm = confirm or self._ask
        self.model = ClientsModel(parent=self)

        intro = QLabel(
            "Each MCP client (Claude, Cursor, VS Code…) has its own token. Revoking one stops it "
            "at once and removes its approval rules.",
            self,
        )
        intro.setWordWrap(True)
        self.view = rows_view(self.model, self)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel(
            "No MCP client yet. Press “New client…” (or use the tray's “Connect an MCP client”) "
            "to give an AI app access.",
            self,
        )
        self.empty.setWordWrap(True)
        self.new_button = QPushButton("New client…", self)
        self.revoke_button = QPushButton("Revoke…", self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.revoke_button)
        buttons.addStretch()
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty)
        layout.addLayout(buttons)

        self.new_button.clicked.connect(lambda: connect_client(None))
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.view.selectionModel().selectionChanged.connect(self._selection_changed)
        bridge.settings_changed.connect(self.refresh)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        self.model.set_rows(client_rows(self.core))
        self.empty.setVisible(self.model.rowCount() == 0)
        self._selection_changed()

    def selected(self) -> ClientRow | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row_at(rows[0].row()) if rows else None

    @Slot()
    def _selection_changed(self) -> None:
        self.revoke_button.setEnabled(self.selected() is not None)

    async def _ask(self, title: str, question: str) -> bool:
        return await ask(self, title, question)

    @Slot()
    def revoke_selected(self) -> asyncio.Task[None] | None:
        row = self.selected()
        if row is None:
            return None
        question = (
            f"Revoke “{row.name}”? Its token stops working at once, its approval rules are "
            "removed, and the app using it loses access until you connect it again."
        )

        async def run() -> None:
            if not await self._confirm("Revoke MCP client", question):
                return
            await asyncio.to_thread(self.core.clients.revoke, row.name)
            self.refresh()

        return self.tasks.start(run())
