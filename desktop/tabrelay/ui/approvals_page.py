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

from PySide6.QtCore import QAbstractTableModel, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tabrelay.approval.gate import ApprovalRequest
from tabrelay.approval.plans import Plan
from tabrelay.approval.policy import ANY_TOOL
from tabrelay.config.settings import PolicyRule, Settings
from tabrelay.core import Core
from tabrelay.errors import SettingsError
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.prompts import finished
from tabrelay.ui.rule_dialog import RuleDialog
from tabrelay.ui.table_model import ModelIndex, RowsModel, rows_view
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import one_line

Scope = Literal["saved", "session"]


@dataclass(frozen=True, slots=True)
class RuleRow:
    rule: PolicyRule
    scope: Scope


class RulesModel(RowsModel[RuleRow]):
    COLUMNS = ("Tool", "Decision", "Site", "Client", "Expires", "Kept")

    def set_rules(self, saved: list[PolicyRule], session: list[PolicyRule]) -> None:
        rows = [RuleRow(r, "saved") for r in saved] + [RuleRow(r, "session") for r in session]
        if rows != self._rows:
            self.replace_rows(rows)

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
    COLUMNS = ("Client", "Tool", "Site", "Tab", "Time left", "Touches")

    def __init__(
        self, *, clock: Callable[[], float] = time.time, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._clock = clock

    def set_requests(self, requests: list[ApprovalRequest]) -> None:
        if [r.id for r in requests] == [r.id for r in self._rows]:
            self.refresh_column("Time left")
        else:
            self.replace_rows(list(requests))

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
        if column == "Touches":
            return self._touches(request)
        left = request.created_at + request.timeout - self._clock()
        return f"{max(0, int(left + 0.999))} s"

    @staticmethod
    def _touches(request: ApprovalRequest) -> str:
        """The first element the call names (and how many more), or where it goes."""
        if not request.targets:
            return one_line(f"goes to {request.destination}", 80) if request.destination else "—"
        more = len(request.targets) - 1 + request.unnamed_targets
        return one_line(request.targets[0].describe(), 100) + (f" (+{more})" if more else "")


class PlansModel(RowsModel[Plan]):
    """The live plans: one approval each for an agent's task."""

    COLUMNS = ("Client", "Task", "Sites", "Actions", "Ends")

    def set_plans(self, plans: list[Plan]) -> None:
        if plans != self._rows:
            self.replace_rows(list(plans))

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        plan, column = cell
        if column == "Client":
            return one_line(plan.client, 40)
        if column == "Task":
            return one_line(plan.draft.purpose, 120)  # the agent's words, shown as text
        if column == "Sites":
            return one_line(", ".join(plan.draft.sites), 160)
        if column == "Actions":
            return ", ".join(a.replace("_", " ") for a in plan.draft.actions)
        return time.strftime("%H:%M", time.localtime(plan.expires_at))


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

        plans_box = QGroupBox("Plans: one approval for an agent's task", self)
        self.plans_model = PlansModel(parent=self)
        self.plans_view = self._table(self.plans_model)
        self.revoke_button = QPushButton("Revoke", self)
        self.revoke_button.clicked.connect(self.revoke_selected)
        plans_explain = QLabel(
            "While a plan runs, the actions it names run on its sites without asking; paying, "
            "sending, deleting and other consequential actions still ask, and so do other sites.",
            self,
        )
        plans_explain.setWordWrap(True)
        plans_layout = QVBoxLayout(plans_box)
        plans_layout.addWidget(plans_explain)
        plans_layout.addWidget(self.plans_view)
        plans_buttons = QHBoxLayout()
        plans_buttons.addWidget(self.revoke_button)
        plans_buttons.addStretch()
        plans_layout.addLayout(plans_buttons)

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
        layout.addWidget(plans_box, 1)
        layout.addWidget(rules_box, 2)

        bridge.approvals_changed.connect(self.refresh)
        bridge.settings_changed.connect(self.refresh)
        self.rules_view.selectionModel().selectionChanged.connect(self._selection_changed)
        self.plans_view.selectionModel().selectionChanged.connect(
            lambda *_: self.revoke_button.setEnabled(
                bool(self.plans_view.selectionModel().selectedRows())
            )
        )
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    def _table(self, model: QAbstractTableModel) -> QTableView:
        view = rows_view(model, self)
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        return view

    @Slot()
    def refresh(self) -> None:
        gate = self.core.gate
        self.pending_model.set_requests(sorted(gate.pending.values(), key=lambda r: r.id))
        self.rules_model.set_rules(list(self.core.settings.policy_rules), list(gate.session_rules))
        self.plans_model.set_plans(gate.plans.live())
        has_pending = bool(gate.pending)
        self.show_button.setEnabled(has_pending)
        self.deny_all_button.setEnabled(has_pending)
        self.revoke_button.setEnabled(bool(self.plans_view.selectionModel().selectedRows()))
        self._selection_changed()

    @Slot()
    def revoke_selected(self) -> None:
        """End the selected plan at once: its actions ask again."""
        rows = self.plans_view.selectionModel().selectedRows()
        plan = self.plans_model.row_at(rows[0].row()) if rows else None
        if plan is not None:
            self.core.gate.plans.revoke(plan.id)
        self.refresh()

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
        try:
            accepted = await finished(dialog) == QDialog.DialogCode.Accepted.value
            return dialog.rule() if accepted else None
        finally:
            dialog.deleteLater()

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
