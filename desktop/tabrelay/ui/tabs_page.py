"""The dashboard's Tabs page: every connected browser's tabs, live; attach, detach, bring to front.

It also explains Chrome's "started debugging this browser" bar, which the person sees as soon
as a tab is attached, and lets them choose which CDP domains an attached tab reports.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from tabrelay.core import Core
from tabrelay.protocol.messages import TabInfo
from tabrelay.tools.state.guard import origin_of
from tabrelay.tools.state.sessions import DEFAULT_DOMAINS
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.table_model import ModelIndex, RowsModel, rows_view
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import one_line

DOMAINS = ("Page", "Runtime", "Log", "Network")
DEBUG_BAR_TEXT = (
    "<b>About Chrome's “started debugging this browser” bar.</b> Chrome shows it above the "
    "page whenever an extension attaches its debugger to a tab — here, Tabrelay, because an "
    "agent is using the tab or you attached it. Tabrelay attaches only to those tabs and "
    "detaches a tab after {minutes} idle, which removes the bar. Pressing <i>Cancel</i> on "
    "the bar detaches the tab; an agent then has to ask again."
)


@dataclass(frozen=True, slots=True)
class TabRow:
    browser_id: str
    browser_name: str
    tab: TabInfo

    @property
    def key(self) -> tuple[str, int]:
        return (self.browser_id, self.tab.id)


def relative_time(then: float | None, now: float) -> str:
    if not then:
        return "—"
    seconds = max(0, int(now - then))
    if seconds < 5:
        return "just now"
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return time.strftime("%H:%M", time.localtime(then))


class TabsModel(RowsModel[TabRow]):
    """One row per tab of every connected browser."""

    COLUMNS = ("Tab", "Site", "Browser", "Attached", "Last activity")

    def __init__(
        self,
        *,
        activity: Callable[[tuple[str, int]], float | None] = lambda key: None,
        clock: Callable[[], float] = time.time,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._activity = activity
        self._clock = clock

    def set_rows(self, rows: list[TabRow]) -> None:
        """Show these tabs; rows that stay keep their place (and the selection)."""
        self.replace_rows(rows, key=lambda r: r.key)

    def row_of(self, key: tuple[str, int]) -> int:
        for number, row in enumerate(self._rows):
            if row.key == key:
                return number
        return -1

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None:
            return None
        row, column = cell
        tab = row.tab
        if role == Qt.ItemDataRole.DisplayRole:
            if column == "Tab":
                return one_line(tab.title or tab.url or f"tab {tab.id}", 120)
            if column == "Site":
                return one_line(origin_of(tab.url) or tab.url.split("?")[0], 80)
            if column == "Browser":
                return row.browser_name
            if column == "Attached":
                return "Attached" if tab.attached else "—"
            return relative_time(self._activity(row.key), self._clock())
        if role == Qt.ItemDataRole.ToolTipRole and column in ("Tab", "Site"):
            return one_line(f"{tab.title}\n{tab.url}", 2000)
        return None


def collect_rows(core: Core) -> list[TabRow]:
    rows = []
    for browser in sorted(core.registry.all(), key=lambda b: (b.name, b.id)):
        attached = browser.attached_tabs
        for tab in sorted(browser.tabs.values(), key=lambda t: (t.window_id, t.id)):
            shown = tab if tab.attached == (tab.id in attached) else _with_attached(tab, attached)
            rows.append(TabRow(browser.id, browser.name, shown))
    return rows


def _with_attached(tab: TabInfo, attached: frozenset[int]) -> TabInfo:
    return replace(tab, attached=tab.id in attached)


class TabsPage(QWidget):
    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        tasks: BackgroundTasks,
        *,
        pair_browser: Callable[[], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self.model = TabsModel(activity=bridge.tab_activity.get, parent=self)

        self.explainer = QLabel(self)
        self.explainer.setWordWrap(True)
        self.explainer.setObjectName("explainer")
        self.explainer.setTextFormat(Qt.TextFormat.RichText)

        self.view = rows_view(self.model, self)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(TabsModel.COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

        empty = QWidget(self)
        empty_layout = QVBoxLayout(empty)
        self.empty_label = QLabel(empty)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        pair = QPushButton("Pair a browser…", empty)
        pair.clicked.connect(lambda: pair_browser())
        empty_layout.addStretch()
        empty_layout.addWidget(self.empty_label)
        empty_layout.addWidget(pair, 0, Qt.AlignmentFlag.AlignCenter)
        empty_layout.addStretch()

        self.stack = QStackedWidget(self)
        self.stack.addWidget(empty)
        self.stack.addWidget(self.view)

        self.attach_button = QPushButton("Attach", self)
        self.attach_button.setToolTip("Attach the debugger so this tab's events show up")
        self.detach_button = QPushButton("Detach", self)
        self.detach_button.setToolTip("Detach the debugger (removes Chrome's debugging bar)")
        self.front_button = QPushButton("Bring to front", self)
        self.attach_button.clicked.connect(self._attach)
        self.detach_button.clicked.connect(self._detach)
        self.front_button.clicked.connect(self._bring_to_front)
        self.domain_boxes: dict[str, QCheckBox] = {}
        actions = QHBoxLayout()
        for button in (self.attach_button, self.detach_button, self.front_button):
            actions.addWidget(button)
        actions.addSpacing(24)
        actions.addWidget(QLabel("Events from this tab:", self))
        for domain in DOMAINS:
            box = QCheckBox(domain, self)
            box.toggled.connect(self._domains_toggled)
            self.domain_boxes[domain] = box
            actions.addWidget(box)
        actions.addStretch()

        layout = QVBoxLayout(self)
        layout.addWidget(self.explainer)
        layout.addWidget(self.stack, 1)
        layout.addLayout(actions)

        bridge.browsers_changed.connect(self.refresh)
        bridge.settings_changed.connect(self.refresh)
        bridge.settings_changed.connect(self._update_explainer)
        self.view.selectionModel().selectionChanged.connect(self._selection_changed)
        self._clock_timer = QTimer(self)
        self._clock_timer.setInterval(1000)
        self._clock_timer.timeout.connect(lambda: self.model.refresh_column("Last activity"))
        self._clock_timer.start()
        self._update_explainer()
        self.refresh()

    # --- state ------------------------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        selected = self.selected()
        self.model.set_rows(collect_rows(self.core))
        if selected is not None and self.selected() is None:
            row = self.model.row_of(selected.key)
            if row >= 0:
                self.view.selectRow(row)
        self.stack.setCurrentIndex(1 if self.core.registry.all() else 0)
        self.empty_label.setText(empty_text(self.core.attention()))
        self._selection_changed()

    @Slot()
    def _update_explainer(self) -> None:
        minutes = self.core.settings.idle_detach_minutes
        idle = f"{minutes:g} minute{'s' if minutes != 1 else ''}" if minutes > 0 else "a while"
        self.explainer.setText(DEBUG_BAR_TEXT.format(minutes=idle))

    def selected(self) -> TabRow | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row_at(rows[0].row()) if rows else None

    def select(self, browser_id: str, tab_id: int) -> None:
        row = self.model.row_of((browser_id, tab_id))
        if row >= 0:
            self.view.selectRow(row)

    @Slot()
    def _selection_changed(self) -> None:
        row = self.selected()
        attached = bool(row and row.tab.attached)
        self.attach_button.setEnabled(row is not None and not attached)
        self.detach_button.setEnabled(attached)
        browser = self.core.registry.get(row.browser_id) if row else None
        self.front_button.setEnabled(bool(browser and browser.supports("tabs.activate")))
        domains = self.core.sessions.domains(*row.key) if row else DEFAULT_DOMAINS
        for domain, box in self.domain_boxes.items():
            box.blockSignals(True)
            box.setChecked(domain in domains)
            box.setEnabled(row is not None)
            box.blockSignals(False)

    # --- actions ----------------------------------------------------------------------------

    @Slot()
    def _attach(self) -> None:
        row = self.selected()
        if row is not None:
            self.tasks.start(self.core.attach_tab(*row.key))

    @Slot()
    def _detach(self) -> None:
        row = self.selected()
        if row is not None:
            self.tasks.start(self.core.detach_tab(*row.key))

    @Slot()
    def _bring_to_front(self) -> None:
        row = self.selected()
        browser = self.core.registry.get(row.browser_id) if row else None
        if row is not None and browser is not None:
            self.tasks.start(browser.activate_tab(row.tab.id))

    @Slot()
    def _domains_toggled(self) -> None:
        row = self.selected()
        if row is None:
            return
        domains = [d for d, box in self.domain_boxes.items() if box.isChecked()]
        self.core.sessions.set_domains(*row.key, domains)
        browser = self.core.registry.get(row.browser_id)
        if browser is not None and row.tab.id in browser.attached_tabs:
            # Apply now rather than at the next tool call, so the Events page follows at once.
            self.tasks.start(self.core.sessions.prepare(browser, row.tab.id))


def empty_text(attention: list[str]) -> str:
    """The Tabs page with no browser: why (a browser refused, a locked keychain), else how to
    get one."""
    if attention:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in attention)
        return f"<h3>No browser is connected</h3><ul>{items}</ul>"
    return (
        "<h3>No browser is connected</h3>"
        "<p>Install the Tabrelay extension in Chrome, Chromium, Edge or Brave. It asks to "
        "pair with this app by itself; allow it here, and its tabs appear on this page.</p>"
    )
