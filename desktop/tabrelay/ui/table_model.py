"""The base of the dashboard's tables: a model of rows with named columns, and its views.

Each page's model subclasses ``RowsModel`` with its ``COLUMNS`` and its ``data``; row and column
counts, headers and row lookup are the same everywhere. Flat tables only: ``parent`` is never
valid. ``rows_view`` and ``detail_text`` build the widgets every page shows them in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QAbstractItemView, QPlainTextEdit, QTableView, QWidget

T = TypeVar("T")
ModelIndex = QModelIndex | QPersistentModelIndex


class RowsModel(QAbstractTableModel, Generic[T]):
    COLUMNS: tuple[str, ...] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[T] = []

    def row_at(self, row: int) -> T | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def cell(self, index: ModelIndex) -> tuple[T, str] | None:
        """The row and column name an index points at, if it points inside the table."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if not 0 <= index.column() < len(self.COLUMNS):
            return None
        return self._rows[index.row()], self.COLUMNS[index.column()]

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None

    def replace_rows(self, rows: list[T], key: Callable[[T], object] | None = None) -> None:
        """Show ``rows``. Where ``key`` lists the same rows as shown, they are swapped in place
        and repainted, so the view keeps its selection and scroll; otherwise the model resets."""
        if key is not None and [key(r) for r in rows] == [key(r) for r in self._rows]:
            self._rows = rows
            self.refresh_all()
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def refresh_column(self, name: str) -> None:
        """Repaint one column of every row (times that age, countdowns)."""
        if self._rows:
            column = self.COLUMNS.index(name)
            self.dataChanged.emit(self.index(0, column), self.index(len(self._rows) - 1, column))

    def refresh_all(self) -> None:
        if self._rows:
            last = self.index(len(self._rows) - 1, len(self.COLUMNS) - 1)
            self.dataChanged.emit(self.index(0, 0), last)


def rows_view(model: QAbstractTableModel, parent: QWidget) -> QTableView:
    """A view of ``model`` as every dashboard table shows one: whole rows, one selected at a
    time, no row numbers."""
    view = QTableView(parent)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().hide()
    return view


def detail_text(placeholder: str, parent: QWidget) -> QPlainTextEdit:
    """The read-only, fixed-width pane that shows the selected row in full."""
    detail = QPlainTextEdit(parent)
    detail.setReadOnly(True)
    detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    detail.setPlaceholderText(placeholder)
    return detail
