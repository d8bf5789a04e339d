"""The Events page's model: a ring buffer of hub events, filtered, inserted in batches.

Memory is bounded by the ring; each batch the bridge delivers (about ten a second) becomes one
``beginInsertRows`` and, once the ring is full, one ``beginRemoveRows`` for the oldest rows, so
thousands of events per second cost a few repaints, not one per event. Filtering happens here
(no proxy calling Python per row) and cells are formatted only when the view asks for them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal

from tabrelay.relay.events import HubEvent
from tabrelay.ui.table_model import ModelIndex, RowsModel
from tabrelay.ui.text import one_line

CAPACITY = 10_000


def domain_of(event: HubEvent) -> str:
    """The CDP domain (``Network``), or ``tab`` / ``alert`` for the app's own events."""
    return event.method.split(".", 1)[0] if event.kind == "cdp" else event.kind


@dataclass(frozen=True, slots=True)
class EventFilter:
    browser_id: str | None = None
    tab_id: int | None = None
    domain: str | None = None
    method: str = ""

    def accepts(self, event: HubEvent) -> bool:
        if self.browser_id is not None and event.browser_id != self.browser_id:
            return False
        if self.tab_id is not None and event.tab_id != self.tab_id:
            return False
        if self.domain is not None and domain_of(event) != self.domain:
            return False
        return not self.method or self.method.lower() in event.method.lower()

    @property
    def active(self) -> bool:
        return self != EventFilter()


class _Row:
    __slots__ = ("event", "seq", "summary")

    def __init__(self, seq: int, event: HubEvent) -> None:
        self.seq = seq
        self.event = event
        self.summary: str | None = None


def _summary(params: dict[str, Any]) -> str:
    parts = []
    for key, value in list(params.items())[:4]:
        if isinstance(value, dict | list):
            value = "{…}" if isinstance(value, dict) else f"[{len(value)}]"
        parts.append(f"{key}={value}")
    return one_line(", ".join(parts), 160)


class EventsModel(RowsModel[_Row]):
    """The newest ``capacity`` events, of which the filter's are rows (oldest first)."""

    COLUMNS = ("Time", "Browser", "Tab", "Method", "Details")
    choices_changed = Signal()  # a domain or a tab not seen before: the filters can offer it

    def __init__(
        self,
        *,
        capacity: int = CAPACITY,
        browser_name: Callable[[str], str] = lambda browser_id: browser_id,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.capacity = capacity
        self._browser_name = browser_name
        self._all: deque[_Row] = deque(maxlen=capacity)
        self._next_seq = 0
        self.filter = EventFilter()
        self.domains: set[str] = set()
        self.tabs: set[tuple[str, int]] = set()  # (browser id, tab id) seen in events

    @property
    def total(self) -> int:
        """Events held (filtered or not)."""
        return len(self._all)

    def add(self, events: Iterable[HubEvent]) -> None:
        """Append a batch: one insert for the rows that pass the filter, one removal for the
        oldest rows that fell out of the ring."""
        batch = list(events)[-self.capacity :]
        if not batch:
            return
        new_rows = []
        fresh = False
        for event in batch:
            row = _Row(self._next_seq, event)
            self._next_seq += 1
            self._all.append(row)
            domain = domain_of(event)
            if domain not in self.domains:
                self.domains.add(domain)
                fresh = True
            if event.tab_id is not None and (event.browser_id, event.tab_id) not in self.tabs:
                self.tabs.add((event.browser_id, event.tab_id))
                fresh = True
            if self.filter.accepts(event):
                new_rows.append(row)
        oldest_kept = self._all[0].seq
        expired = 0
        while expired < len(self._rows) and self._rows[expired].seq < oldest_kept:
            expired += 1
        if expired:
            self.beginRemoveRows(QModelIndex(), 0, expired - 1)
            del self._rows[:expired]
            self.endRemoveRows()
        if new_rows:
            start = len(self._rows)
            self.beginInsertRows(QModelIndex(), start, start + len(new_rows) - 1)
            self._rows.extend(new_rows)
            self.endInsertRows()
        if fresh:
            self.choices_changed.emit()

    def set_filter(self, event_filter: EventFilter) -> None:
        if event_filter == self.filter:
            return
        self.beginResetModel()
        self.filter = event_filter
        self._rows = [row for row in self._all if event_filter.accepts(row.event)]
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._all.clear()
        self._rows.clear()
        self.endResetModel()

    def event_at(self, row: int) -> HubEvent | None:
        return self._rows[row].event if 0 <= row < len(self._rows) else None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        if not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        event = row.event
        column = index.column()
        if column == 0:
            stamp = time.strftime("%H:%M:%S", time.localtime(event.time))
            return f"{stamp}.{int(event.time * 1000) % 1000:03d}"
        if column == 1:
            return self._browser_name(event.browser_id) if event.browser_id else "Tabrelay"
        if column == 2:
            return "" if event.tab_id is None else str(event.tab_id)
        if column == 3:
            return one_line(
                event.method if event.kind == "cdp" else f"{event.kind}: {event.method}"
            )
        if column == 4:
            if row.summary is None:
                row.summary = _summary(event.params)
            return row.summary
        return None
