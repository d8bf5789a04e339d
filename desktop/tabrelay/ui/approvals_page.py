"""The dashboard's Approvals page: requests waiting for the person, and the rules, editable.

Saved rules live in the settings (written in a thread, validated, never half-written); session
rules live in the gate until the app quits and can be removed here. A rule typed here is the
person's consent, so any tool may be allowed, with a warning for the powerful ones.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from PySide6.QtCore import QAbstractTableModel, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tabrelay.approval.gate import ApprovalRequest
from tabrelay.approval.policy import ANY_TOOL, DECISIONS, NEVER_ALWAYS_TOOLS, normalize_origin
from tabrelay.config.settings import PolicyRule, Settings
from tabrelay.core import Core
from tabrelay.errors import SettingsError
from tabrelay.tools.catalog import BY_NAME
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.prompts import finished
from tabrelay.ui.table_model import ModelIndex, RowsModel
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import one_line

Scope = Literal["saved", "session"]
EXPIRY_CHOICES: tuple[tuple[str, float | None], ...] = (
    ("Never", None),
    ("In 1 hour", 1.0),
    ("In 8 hours", 8.0),
    ("In 1 day", 24.0),
    ("In 7 days", 24.0 * 7),
)


def site_origin(text: str) -> str | None:
    """The origin a rule's site field names (``None`` for any site).

    Raises:
        ValueError: not an http(s) origin such as ``https://example.com``.
    """
    text = text.strip()
    if not text:
        return None
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("A site is an http:// or https:// origin, like https://example.com")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("The port is not a number between 0 and 65535") from None
    if not parts.hostname or parts.username or parts.password:
        raise ValueError("A site needs a host name, like https://example.com")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("A rule applies to a whole site: leave out the path, like https://x.com")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return normalize_origin(f"{parts.scheme}://{host}" + (f":{port}" if port else ""))


@dataclass(frozen=True, slots=True)
class RuleRow:
    rule: PolicyRule
    scope: Scope


class RulesModel(RowsModel[RuleRow]):
    COLUMNS = ("Tool", "Decision", "Site", "Client", "Expires", "Kept")

    def set_rules(self, saved: list[PolicyRule], session: list[PolicyRule]) -> None:
        rows = [RuleRow(r, "saved") for r in saved] + [RuleRow(r, "session") for r in session]
        if rows == self._rows:
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        row, column = cell
        rule = row.rule
        if column == "Tool":
            return "every tool" if rule.tool == ANY_TOOL else rule.tool
        if column == "Decision":
            return rule.decision
        if column == "Site":
            return one_line(rule.site, 80) if rule.site else "any site"
        if column == "Client":
            return rule.client or "any client"
        if column == "Expires":
            if rule.expires_at is None:
                return "never"
            return time.strftime("%Y-%m-%d %H:%M", time.localtime(rule.expires_at))
        return "saved" if row.scope == "saved" else "until Tabrelay quits"


class PendingModel(RowsModel[ApprovalRequest]):
    COLUMNS = ("Client", "Tool", "Site", "Tab", "Time left")

    def __init__(
        self, *, clock: Callable[[], float] = time.time, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._clock = clock

    def set_requests(self, requests: list[ApprovalRequest]) -> None:
        if [r.id for r in requests] == [r.id for r in self._rows]:
            self.refresh_column("Time left")
            return
        self.beginResetModel()
        self._rows = list(requests)
        self.endResetModel()

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        request, column = cell
        if column == "Client":
            return one_line(request.client, 40)
        if column == "Tool":
            return request.tool
        if column == "Site":
            return one_line(request.origin, 80) if request.origin else "—"
        if column == "Tab":
            return one_line(request.tab_title or "", 60) if request.tab_id is not None else "—"
        left = request.created_at + request.timeout - self._clock()
        return f"{max(0, int(left + 0.999))} s"


class RuleDialog(QDialog):
    """Add or edit one saved rule; nothing is saved until the fields are valid."""

    def __init__(
        self,
        *,
        clients: list[str],
        rule: PolicyRule | None = None,
        clock: Callable[[], float] = time.time,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit rule — Tabrelay" if rule else "Add rule — Tabrelay")
        self._clock = clock
        self._original = rule
        self.tool_box = QComboBox(self)
        self.tool_box.setEditable(True)
        self.tool_box.addItem("* (every tool)", ANY_TOOL)
        for name in sorted(BY_NAME):
            self.tool_box.addItem(name, name)
        self.decision_box = QComboBox(self)
        for decision in DECISIONS:
            self.decision_box.addItem(decision, decision)
        self.site_edit = QLineEdit(self)
        self.site_edit.setPlaceholderText("any site — or e.g. https://example.com")
        self.client_box = QComboBox(self)
        self.client_box.addItem("any client", None)
        for name in clients:
            self.client_box.addItem(name, name)
        self.expiry_box = QComboBox(self)
        for label, hours in EXPIRY_CHOICES:
            self.expiry_box.addItem(label, hours)
        self.error = QLabel(self)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #B3261E;")
        self.warning = QLabel(self)
        self.warning.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Tool:", self.tool_box)
        form.addRow("Decision:", self.decision_box)
        form.addRow("Site:", self.site_edit)
        form.addRow("Client:", self.client_box)
        form.addRow("Expires:", self.expiry_box)
        form.addRow(self.warning)
        form.addRow(self.error)
        form.addRow(self.buttons)
        if rule is not None:
            self._load(rule)
        for signal in (
            self.tool_box.currentTextChanged,
            self.decision_box.currentIndexChanged,
            self.site_edit.textChanged,
        ):
            signal.connect(self._validate)
        self._validate()

    def _load(self, rule: PolicyRule) -> None:
        found = self.tool_box.findData(rule.tool)
        if found >= 0:
            self.tool_box.setCurrentIndex(found)
        else:
            self.tool_box.setEditText(rule.tool)
        self.decision_box.setCurrentIndex(self.decision_box.findData(rule.decision))
        self.site_edit.setText(rule.site or "")
        client = self.client_box.findData(rule.client) if rule.client else 0
        if client < 0:
            self.client_box.addItem(rule.client or "", rule.client)
            client = self.client_box.count() - 1
        self.client_box.setCurrentIndex(client)
        if rule.expires_at is not None:
            self.expiry_box.addItem(
                time.strftime("Keep: %Y-%m-%d %H:%M", time.localtime(rule.expires_at)), -1.0
            )
            self.expiry_box.setCurrentIndex(self.expiry_box.count() - 1)

    def _tool(self) -> str:
        text = self.tool_box.currentText().strip()
        data = self.tool_box.currentData()
        if data is not None and self.tool_box.itemText(self.tool_box.currentIndex()) == text:
            return str(data)
        return text.split(" ", 1)[0]

    @Slot()
    def _validate(self) -> bool:
        problem = ""
        try:
            site_origin(self.site_edit.text())
        except ValueError as exc:
            problem = str(exc)
        tool = self._tool()
        if not tool:
            problem = problem or "Choose a tool, or * for every tool."
        self.error.setText(problem)
        self.error.setVisible(bool(problem))
        decision = self.decision_box.currentData()
        risky = tool == ANY_TOOL or tool in NEVER_ALWAYS_TOOLS
        self.warning.setText(
            "⚠ Allowing this lets agents run it without asking — including JavaScript in your "
            "logged-in pages. Prefer a site and a client."
            if decision == "allow" and risky
            else ""
        )
        self.warning.setVisible(bool(self.warning.text()))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not problem)
        return not problem

    def rule(self) -> PolicyRule:
        """The rule the fields describe (call after the dialog was accepted)."""
        hours = self.expiry_box.currentData()
        if hours == -1.0 and self._original is not None:
            expires = self._original.expires_at
        else:
            expires = None if hours is None else self._clock() + float(hours) * 3600
        return PolicyRule(
            tool=self._tool(),
            decision=self.decision_box.currentData(),
            site=site_origin(self.site_edit.text()),
            client=self.client_box.currentData(),
            expires_at=expires,
        )


RuleEditor = Callable[[PolicyRule | None], Awaitable[PolicyRule | None]]


class ApprovalsPage(QWidget):
    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        tasks: BackgroundTasks,
        *,
        show_dialog: Callable[[], None],
        deny_all: Callable[[], None],
        edit_rule: RuleEditor | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self._edit_rule = edit_rule or self._rule_dialog
        self.pending_model = PendingModel(parent=self)
        self.rules_model = RulesModel(parent=self)

        pending_box = QGroupBox("Waiting for your answer", self)
        self.pending_view = self._table(self.pending_model)
        self.show_button = QPushButton("Answer…", self)
        self.deny_all_button = QPushButton("Deny all", self)
        self.show_button.clicked.connect(lambda: show_dialog())
        self.deny_all_button.clicked.connect(lambda: deny_all())
        pending_buttons = QHBoxLayout()
        pending_buttons.addWidget(self.show_button)
        pending_buttons.addWidget(self.deny_all_button)
        pending_buttons.addStretch()
        pending_layout = QVBoxLayout(pending_box)
        pending_layout.addWidget(self.pending_view)
        pending_layout.addLayout(pending_buttons)

        rules_box = QGroupBox("Rules", self)
        explain = QLabel(
            "Without a rule, read-only tools (status, tabs, reading, screenshots) run and every "
            "other tool asks. The most specific rule wins; among equals, the strictest. "
            "Session rules come from “Allow for this session” and end when Tabrelay quits.",
            self,
        )
        explain.setWordWrap(True)
        self.rules_view = self._table(self.rules_model)
        self.add_button = QPushButton("Add…", self)
        self.edit_button = QPushButton("Edit…", self)
        self.remove_button = QPushButton("Remove", self)
        self.add_button.clicked.connect(self.add_rule)
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.rules_view.doubleClicked.connect(self.edit_selected)
        rule_buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            rule_buttons.addWidget(button)
        rule_buttons.addStretch()
        rules_layout = QVBoxLayout(rules_box)
        rules_layout.addWidget(explain)
        rules_layout.addWidget(self.rules_view)
        rules_layout.addLayout(rule_buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(pending_box, 1)
        layout.addWidget(rules_box, 2)

        bridge.approvals_changed.connect(self.refresh)
        bridge.settings_changed.connect(self.refresh)
        self.rules_view.selectionModel().selectionChanged.connect(self._selection_changed)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    def _table(self, model: QAbstractTableModel) -> QTableView:
        view = QTableView(self)
        view.setModel(model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.verticalHeader().hide()
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        return view

    @Slot()
    def refresh(self) -> None:
        gate = self.core.gate
        self.pending_model.set_requests(sorted(gate.pending.values(), key=lambda r: r.id))
        self.rules_model.set_rules(list(self.core.settings.policy_rules), list(gate.session_rules))
        has_pending = bool(gate.pending)
        self.show_button.setEnabled(has_pending)
        self.deny_all_button.setEnabled(has_pending)
        self._selection_changed()

    def selected(self) -> RuleRow | None:
        rows = self.rules_view.selectionModel().selectedRows()
        return self.rules_model.row_at(rows[0].row()) if rows else None

    @Slot()
    def _selection_changed(self) -> None:
        row = self.selected()
        self.edit_button.setEnabled(row is not None and row.scope == "saved")
        self.remove_button.setEnabled(row is not None)

    async def _rule_dialog(self, rule: PolicyRule | None) -> PolicyRule | None:
        dialog = RuleDialog(
            clients=[c.name for c in self.core.settings.clients], rule=rule, parent=self
        )
        accepted = await finished(dialog) == QDialog.DialogCode.Accepted.value
        return dialog.rule() if accepted else None

    # --- changes ----------------------------------------------------------------------------

    async def _save(self, change: Callable[[Settings], None]) -> None:
        await asyncio.to_thread(self.core.settings_store.update, change)
        self.refresh()

    @Slot()
    def add_rule(self) -> asyncio.Task[None]:
        async def run() -> None:
            rule = await self._edit_rule(None)
            if rule is not None:
                await self._save(lambda settings: settings.policy_rules.append(rule))

        return self.tasks.start(run())

    @Slot()
    def edit_selected(self) -> asyncio.Task[None] | None:
        row = self.selected()
        if row is None or row.scope != "saved":
            return None
        old = row.rule

        async def run() -> None:
            new = await self._edit_rule(old)
            if new is None:
                return

            def replace(settings: Settings) -> None:
                rules = settings.policy_rules
                if old not in rules:
                    raise SettingsError("the rule was changed elsewhere meanwhile; look again")
                rules[rules.index(old)] = new

            await self._save(replace)

        return self.tasks.start(run())

    @Slot()
    def remove_selected(self) -> asyncio.Task[None] | None:
        row = self.selected()
        if row is None:
            return None
        rule = row.rule
        if row.scope == "session":
            gate = self.core.gate
            gate.session_rules = [r for r in gate.session_rules if r is not rule]
            self.refresh()
            return None

        def remove(settings: Settings) -> None:
            settings.policy_rules = [r for r in settings.policy_rules if r != rule]

        return self.tasks.start(self._save(remove))
