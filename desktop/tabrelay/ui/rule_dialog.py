"""The rule editor: add or edit one saved approval rule, checked before it can be saved.

A rule typed here is the person's consent, so any tool may be allowed; allowing every tool or
the powerful ones (JavaScript, uploads, raw CDP) comes with a warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from tabrelay.approval.effects import EFFECT_RULES, WORDS
from tabrelay.approval.policy import ANY_TOOL, DECISIONS, NEVER_ALWAYS_TOOLS, normalize_origin
from tabrelay.config.settings import PolicyRule
from tabrelay.protocol import urls
from tabrelay.tools.catalog import BY_NAME

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
    if urls.url_scheme(text) not in ("http", "https"):
        raise ValueError("A site is an http:// or https:// origin, like https://example.com")
    try:
        url = urls.parse_url(text)
        origin = urls.site_origin(url)
    except urls.InvalidUrl as invalid:
        raise ValueError(f"The browser would not open this site: {invalid}") from None
    if url.has_credentials:
        raise ValueError("A site needs a host name, like https://example.com")
    if url.path != "/" or url.query is not None or url.fragment is not None:
        raise ValueError("A rule applies to a whole site: leave out the path, like https://x.com")
    return normalize_origin(origin)


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
        for name, kind in EFFECT_RULES.items():  # what a call does, whatever tool does it
            self.tool_box.addItem(f"{name} ({WORDS[kind].lower()})", name)
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
        effect = EFFECT_RULES.get(tool)
        if decision == "allow" and effect is not None:
            warning = (
                f"⚠ Agents will {WORDS[effect].lower()} without asking wherever this rule "
                "holds. Prefer a site and a client."
            )
        elif decision == "allow" and risky:
            warning = (
                "⚠ Allowing this lets agents run it without asking — including JavaScript in "
                "your logged-in pages, and whatever it pays, sends or deletes. Prefer a site "
                "and a client."
            )
        else:
            warning = ""
        self.warning.setText(warning)
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
