"""The dashboard's Events page: the live CDP stream, filtered, pausable, with each event's JSON.

The model (``events_model.py``) keeps a bounded ring and takes batches; this page adds the
filters, pause, clear and the JSON of the selected event. It starts from the events the bridge
kept before the page was built (the dashboard is built on first use).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelection, Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
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
from tabrelay.relay.events import HubEvent
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.events_model import EventFilter, EventsModel
from tabrelay.ui.table_model import detail_text, rows_view
from tabrelay.ui.text import arguments_text, one_line

DETAIL_LIMIT = 100_000  # characters of JSON shown for one event


class EventsPage(QWidget):
    ALL = "__all__"

    def __init__(self, core: Core, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.bridge = bridge
        self.model = EventsModel(browser_name=self._browser_name, parent=self)
        self.paused = False
        self.skipped = 0

        self.browser_box = QComboBox(self)
        self.tab_box = QComboBox(self)
        self.domain_box = QComboBox(self)
        self.method_edit = QLineEdit(self)
        self.method_edit.setPlaceholderText("Method contains… (e.g. requestWillBeSent)")
        self.method_edit.setClearButtonEnabled(True)
        self.pause_button = QPushButton("Pause", self)
        self.pause_button.setCheckable(True)
        self.clear_button = QPushButton("Clear", self)
        self.follow_box = QCheckBox("Follow", self)
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Keep the newest event in view")
        filters = QHBoxLayout()
        for widget in (self.browser_box, self.tab_box, self.domain_box):
            widget.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            filters.addWidget(widget)
        filters.addWidget(self.method_edit, 1)
        filters.addWidget(self.follow_box)
        filters.addWidget(self.pause_button)
        filters.addWidget(self.clear_button)

        self.view = rows_view(self.model, self)
        self.view.setWordWrap(False)
        # Fixed row heights and column widths: the view never measures thousands of rows.
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((100, 130, 95, 260)):
            self.view.setColumnWidth(column, width)

        self.detail = detail_text("Select an event to see its JSON.", self)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.view)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        self.status = QLabel(self)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

        bridge.events_received.connect(self.add_events)
        bridge.browsers_changed.connect(self._refresh_choices)
        self.model.choices_changed.connect(self._refresh_domains)
        self.model.choices_changed.connect(self._refresh_tabs)
        self.browser_box.currentIndexChanged.connect(self._browser_chosen)
        self.tab_box.currentIndexChanged.connect(self._apply_filter)
        self.domain_box.currentIndexChanged.connect(self._apply_filter)
        self.method_edit.textChanged.connect(self._apply_filter)
        self.pause_button.toggled.connect(self.set_paused)
        self.clear_button.clicked.connect(self.clear)
        self.view.selectionModel().selectionChanged.connect(self._show_detail)
        self.add_events(bridge.take_recent_events())
        self._refresh_choices()
        self._refresh_domains()
        self._update_status()

    def _browser_name(self, browser_id: str) -> str:
        browser = self.core.registry.get(browser_id)
        return browser.name if browser is not None else browser_id

    # --- the stream -------------------------------------------------------------------------

    @Slot(list)
    def add_events(self, events: list[HubEvent]) -> None:
        if self.paused:
            self.skipped += len(events)
        else:
            self.model.add(events)
            if self.follow_box.isChecked():
                self.view.scrollToBottom()
        self._update_status()

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_button.setChecked(paused)
        self.pause_button.setText("Resume" if paused else "Pause")
        if not paused:
            self.skipped = 0
        self._update_status()

    @Slot()
    def clear(self) -> None:
        self.model.clear()
        self.detail.clear()
        self._update_status()

    def _update_status(self) -> None:
        parts = [f"{self.model.rowCount():,} shown of {self.model.total:,} kept"]
        parts.append(f"the newest {self.model.capacity:,} are kept")
        if self.paused:
            parts.insert(0, f"Paused — {self.skipped:,} new events not shown")
        dropped = self.bridge.dropped_events
        if dropped:
            parts.append(f"{dropped:,} dropped while the window was busy")
        self.status.setText(" · ".join(parts))

    # --- filters ----------------------------------------------------------------------------

    def _choice(self, box: QComboBox) -> Any:
        data = box.currentData()
        return None if data == self.ALL else data

    @Slot()
    def _refresh_choices(self) -> None:
        current = self.browser_box.currentData()
        self.browser_box.blockSignals(True)
        self.browser_box.clear()
        self.browser_box.addItem("All browsers", self.ALL)
        for browser in self.core.registry.all():
            self.browser_box.addItem(browser.name, browser.id)
        found = self.browser_box.findData(current)
        self.browser_box.setCurrentIndex(max(0, found))
        self.browser_box.blockSignals(False)
        self._refresh_tabs()

    def _refresh_tabs(self) -> None:
        current = self.tab_box.currentData()
        self.tab_box.blockSignals(True)
        self.tab_box.clear()
        self.tab_box.addItem("All tabs", self.ALL)
        browser_id = self._choice(self.browser_box)
        browsers = {b.id: b for b in self.core.registry.all()}
        titles: dict[tuple[str, int], str] = {
            (b.id, tab.id): tab.title or tab.url
            for b in browsers.values()
            for tab in b.tabs.values()
        }
        several = len({key[0] for key in [*titles, *self.model.tabs]}) > 1
        for key in sorted(set(titles) | self.model.tabs):
            if browser_id is not None and key[0] != browser_id:
                continue
            label = f"tab {key[1]}"
            if titles.get(key):
                label += f" · {one_line(titles[key], 40)}"
            if several and browser_id is None:
                browser = browsers.get(key[0])
                label = f"{browser.name if browser else key[0]} · {label}"
            if self.tab_box.findData(key[1]) < 0:
                self.tab_box.addItem(label, key[1])
        found = self.tab_box.findData(current)
        self.tab_box.setCurrentIndex(max(0, found))
        self.tab_box.blockSignals(False)
        self._apply_filter()

    @Slot()
    def _refresh_domains(self) -> None:
        current = self.domain_box.currentData()
        self.domain_box.blockSignals(True)
        self.domain_box.clear()
        self.domain_box.addItem("All domains", self.ALL)
        for domain in sorted(self.model.domains | {"Page", "Runtime", "Log", "Network"}):
            self.domain_box.addItem(domain, domain)
        found = self.domain_box.findData(current)
        self.domain_box.setCurrentIndex(max(0, found))
        self.domain_box.blockSignals(False)

    @Slot()
    def _browser_chosen(self) -> None:
        self._refresh_tabs()

    @Slot()
    def _apply_filter(self) -> None:
        self.model.set_filter(
            EventFilter(
                browser_id=self._choice(self.browser_box),
                tab_id=self._choice(self.tab_box),
                domain=self._choice(self.domain_box),
                method=self.method_edit.text().strip(),
            )
        )
        self._update_status()

    # --- detail -----------------------------------------------------------------------------

    @Slot(QItemSelection, QItemSelection)
    def _show_detail(self, *_: object) -> None:
        rows = self.view.selectionModel().selectedRows()
        event = self.model.event_at(rows[0].row()) if rows else None
        if event is None:
            self.detail.clear()
            return
        document = {
            "kind": event.kind,
            "method": event.method,
            "browser": event.browser_id,
            "tabId": event.tab_id,
            "time": event.time,
            "params": event.params,
        }
        text = arguments_text(document)
        if len(text) > DETAIL_LIMIT:
            text = text[:DETAIL_LIMIT] + f"\n… ({len(text) - DETAIL_LIMIT:,} more characters)"
        self.detail.setPlainText(text)
