"""The dashboard's Commands page: every tool call from the persisted command log, live.

The newest rows come first. Searching asks the log (in a thread) for matches; new rows that
match the search join live. Export writes the whole log as JSON lines or CSV, off the GUI
thread. The log holds metadata only (DESIGN §4.13), and the details pane shows it verbatim
with hidden characters spelled out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from tabrelay.core import Core
from tabrelay.errors import ConfigError
from tabrelay.store.commandlog import CommandEntry, CommandLog
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.prompts import save_file_name
from tabrelay.ui.table_model import ModelIndex, RowsModel, detail_text, rows_view
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import arguments_text, one_line

SHOWN_ROWS = 1000
# Columns whose tooltip holds the whole text of this entry field.
TOOLTIPS = {
    "Status": "error",
    "Arguments": "arguments",
    "Decision": "decision",
    "Touches": "targets",
    "Effect": "effect",
}
SEARCH_DELAY_MS = 250
STATUS_COLOURS = {
    "denied": "#B3261E",
    "error": "#B3261E",
    "timeout": "#B3261E",
    "cancelled": "#6B6B6B",
}


def matches(entry: CommandEntry, search: str) -> bool:
    """The command log's search (``LIKE %search%`` over these fields), for live rows."""
    needle = search.lower()
    fields = (
        entry.client,
        entry.tool,
        entry.origin,
        entry.arguments,
        entry.targets,
        entry.effect,
        entry.error,
        entry.decision,
    )
    return any(needle in (value or "").lower() for value in fields)


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


class CommandsModel(RowsModel[CommandEntry]):
    """Command log rows, newest first, at most ``limit`` of them."""

    COLUMNS = (
        "Time",
        "Client",
        "Tool",
        "Site",
        "Touches",
        "Effect",
        "Arguments",
        "Decision",
        "Status",
        "Duration",
        "Size",
    )

    def __init__(self, *, limit: int = SHOWN_ROWS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.limit = limit

    def set_entries(self, entries: list[CommandEntry]) -> None:
        self.replace_rows(list(entries[: self.limit]))

    def add(self, entry: CommandEntry) -> None:
        if any(row.id == entry.id for row in self._rows[:20]):
            return  # already loaded by a search that raced the live row
        self.beginInsertRows(QModelIndex(), 0, 0)
        self._rows.insert(0, entry)
        self.endInsertRows()
        if len(self._rows) > self.limit:
            self.beginRemoveRows(QModelIndex(), self.limit, len(self._rows) - 1)
            del self._rows[self.limit :]
            self.endRemoveRows()

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None:
            return None
        entry, column = cell
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(entry, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == "Status":
            colour = STATUS_COLOURS.get(entry.status)
            return QColor(colour) if colour else None
        if role == Qt.ItemDataRole.ToolTipRole and column in TOOLTIPS:
            text = getattr(entry, TOOLTIPS[column])
            return one_line(text, 1000) if text else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column in ("Duration", "Size"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _display(entry: CommandEntry, column: str) -> str:
        if column == "Time":
            when = time.localtime(entry.time)
            today = time.localtime()[:3] == when[:3]
            return time.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M", when)
        if column == "Client":
            return one_line(entry.client, 40)
        if column == "Tool":
            return entry.tool
        if column == "Site":
            tab = f"tab {entry.tab_id}" if entry.tab_id is not None else ""
            return one_line(entry.origin or tab, 60)
        if column == "Arguments":
            return one_line(entry.arguments, 120)
        if column == "Decision":
            if entry.status == "denied" and entry.error and entry.decision == "not reached":
                return one_line(entry.error, 80)  # why it was denied says more
            return one_line(entry.decision, 80)
        if column == "Status":
            return entry.status
        if column == "Duration":
            return f"{entry.duration_ms:,.0f} ms"
        if column == "Touches":
            return one_line(entry.targets or "", 160)
        if column == "Effect":
            return one_line(entry.effect or "", 120)
        return format_size(entry.result_bytes)


def describe(entry: CommandEntry) -> str:
    """The details pane: every field, the arguments as the log kept them."""
    fields = asdict(entry)
    fields["time"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
    # Summaries cut by the log are not JSON any more: those show as the text they are.
    with contextlib.suppress(ValueError):
        fields["arguments"] = json.loads(entry.arguments)
    return arguments_text(fields)


class CommandsPage(QWidget):
    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        tasks: BackgroundTasks,
        *,
        save_path: Callable[[str], Awaitable[str | None]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        assert core.command_log is not None, "start the core first"
        self.log: CommandLog = core.command_log
        self.tasks = tasks
        self.model = CommandsModel(parent=self)
        self.search = ""
        self._save_path = save_path or self._ask_save_path
        self.exported: Path | None = None

        self.search_edit = QLineEdit(self)
        self.search_edit.setPlaceholderText(
            "Search client, tool, site, arguments, what it touched, errors…"
        )
        self.search_edit.setClearButtonEnabled(True)
        self.export_button = QPushButton("Export…", self)
        self.export_button.setToolTip("Save the whole command log as JSON lines or CSV")
        top = QHBoxLayout()
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.export_button)

        self.view = rows_view(self.model, self)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(
            CommandsModel.COLUMNS.index("Arguments"), QHeaderView.ResizeMode.Stretch
        )
        # What was touched sits before the arguments; at the dashboard's default width every
        # column shows and the arguments keep the rest.
        widths = {"Time": 70, "Client": 100, "Tool": 140, "Site": 140, "Touches": 220}
        widths |= {"Decision": 150, "Status": 70, "Duration": 70, "Size": 60}
        for name, width in widths.items():
            self.view.setColumnWidth(CommandsModel.COLUMNS.index(name), width)

        self.detail = detail_text("Select a command to see everything the log kept.", self)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.view)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([420, 160])

        self.status = QLabel(self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it repeats the search text
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.reload)
        self.search_edit.textChanged.connect(lambda _text: self._search_timer.start())
        self.export_button.clicked.connect(self._export_clicked)
        self.view.selectionModel().selectionChanged.connect(self._show_detail)
        bridge.command_logged.connect(self._logged)
        self.total = 0
        self.reload()

    # --- loading ----------------------------------------------------------------------------

    @Slot()
    def reload(self) -> asyncio.Task[None]:
        """(Re)load the newest rows matching the search box, in a thread."""
        search = self.search_edit.text().strip()

        def read() -> tuple[list[CommandEntry], int]:
            return self.log.recent(SHOWN_ROWS, search=search or None), self.log.count()

        async def load() -> None:
            entries, total = await asyncio.to_thread(read)
            self.search, self.total = search, total
            self.model.set_entries(entries)
            self._update_status()

        return self.tasks.start(load())

    @Slot(object)
    def _logged(self, entry: CommandEntry) -> None:
        self.total += 1
        if not self.search or matches(entry, self.search):
            self.model.add(entry)
        self._update_status()

    def _update_status(self) -> None:
        shown = self.model.rowCount()
        if self.search:
            text = f"{shown:,} matching “{one_line(self.search, 40)}”"
        else:
            text = f"{self.total:,} commands logged"
            if self.total > shown:
                text += f" · the newest {shown:,} shown (search to find older ones)"
        self.status.setText(text)

    @Slot()
    def _show_detail(self) -> None:
        rows = self.view.selectionModel().selectedRows()
        entry = self.model.row_at(rows[0].row()) if rows else None
        self.detail.setPlainText(describe(entry) if entry else "")

    # --- export -----------------------------------------------------------------------------

    async def _ask_save_path(self, suggested: str) -> str | None:
        filters = ["JSON lines (*.jsonl)", "CSV (*.csv)"]
        return await save_file_name(self, "Export the command log", suggested, filters)

    @Slot()
    def _export_clicked(self) -> asyncio.Task[None]:
        suggested = str(Path.home() / f"tabrelay-commands-{time.strftime('%Y%m%d')}.jsonl")

        async def run() -> None:
            path = await self._save_path(suggested)
            if path:
                await self._export(Path(path))

        return self.tasks.start(run())

    def export(self, path: Path) -> asyncio.Task[None]:
        """Write the whole log to ``path``: CSV for a ``.csv`` name, else JSON lines."""
        return self.tasks.start(self._export(path))

    async def _export(self, path: Path) -> None:
        fmt = "csv" if path.suffix.lower() == ".csv" else "jsonl"

        def write() -> None:
            try:
                with path.open("w", encoding="utf-8", newline="") as out:
                    for chunk in self.log.export(fmt):
                        out.write(chunk)
            except OSError as exc:
                raise ConfigError(f"could not write {path}: {exc}", title="Export failed") from None

        await asyncio.to_thread(write)
        self.exported = path
        self.status.setText(f"Exported the command log to {path}")
