"""The settings dialog: ports, timeouts, budget, site lists, tab scope, start at login.

Everything typed is checked before anything is saved, with a message that names the field or
the line; a refused save keeps the dialog open with the person's input intact. Saving goes
through ``SettingsStore.update`` (validated again there, written atomically) in a thread; start
at login goes to the OS's autostart entry, which is its only record.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tabrelay.config.settings import Settings
from tabrelay.core import Core
from tabrelay.errors import TabrelayError
from tabrelay.protocol.urls import InvalidUrl, parse_host, parse_url
from tabrelay.system.autostart import Autostart
from tabrelay.ui.tasks import BackgroundTasks


def site_problem(entry: str) -> str | None:
    """Why ``entry`` is not a site the navigation lists understand, or ``None`` if it is.

    Read by the parser the guard uses, as the browser reads URLs: ``bücher.de``,
    ``EXAMPLE.com.`` or ``0xc0a80101`` are sites; a host with spaces is not.
    """
    text = entry.strip()
    if "://" in text:
        try:
            parsed = parse_url(text)
        except InvalidUrl as invalid:
            return f"not an origin: {invalid}"
        if parsed.scheme not in ("http", "https") or parsed.has_credentials:
            return "an origin starts with http:// or https:// and has a host"
        if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
            return "leave out the path: a site is a whole origin"
        return None
    host = text.removeprefix("*.")
    try:
        parse_host(f"[{host}]" if ":" in host and not host.startswith("[") else host)
    except InvalidUrl:
        return "write a host (example.com), *.example.com, or an origin (https://example.com)"
    return None


def parse_sites(text: str, what: str) -> list[str]:
    """The non-empty lines of a site list.

    Raises:
        ValueError: a line that is not a site, with its number and the reason.
    """
    sites = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        problem = site_problem(entry)
        if problem:
            raise ValueError(f"{what}, line {number} (“{entry[:60]}”): {problem}")
        sites.append(entry)
    return sites


@dataclass
class SettingsForm:
    """What the dialog's fields say, checked."""

    relay_port: int
    mcp_port: int
    approval_timeout: float
    command_timeout: float
    idle_detach_minutes: float
    response_budget_tokens: int
    screenshot_max_width: int
    allow: list[str]
    block: list[str]
    only_allowed: bool
    allow_private_networks: bool
    tab_scope: str
    log_retention_days: float
    autostart: bool  # the OS's autostart entry, its one truth: not a setting (``apply``)
    enable_cdp_tool: bool = False

    def apply(self, settings: Settings) -> None:
        settings.relay_port = self.relay_port
        settings.mcp_port = self.mcp_port
        settings.approval_timeout = self.approval_timeout
        settings.command_timeout = self.command_timeout
        settings.idle_detach_minutes = self.idle_detach_minutes
        settings.response_budget_tokens = self.response_budget_tokens
        settings.screenshot_max_width = self.screenshot_max_width
        settings.navigation.allow = self.allow
        settings.navigation.block = self.block
        settings.navigation.only_allowed = self.only_allowed
        settings.navigation.allow_private_networks = self.allow_private_networks
        settings.tab_scope = "shared" if self.tab_scope == "shared" else "all"
        settings.log_retention_days = self.log_retention_days
        settings.enable_cdp_tool = self.enable_cdp_tool


class SettingsDialog(QDialog):
    saved = Signal()

    def __init__(
        self,
        core: Core,
        tasks: BackgroundTasks,
        autostart: Autostart,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self.autostart = autostart
        self.setWindowTitle("Settings — Tabrelay")
        self.setMinimumWidth(640)
        settings = core.settings

        self.problems = QLabel(self)
        self.problems.setTextFormat(Qt.TextFormat.PlainText)
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(
            "background: #FDECEA; color: #5F2120; padding: 8px; border-radius: 4px;"
        )
        notes = [*core.settings_store.problems, *core.tokens.all_problems()]
        self.problems.setText("\n".join(notes))
        self.problems.setVisible(bool(notes))

        tabs = QTabWidget(self)
        general = QWidget(tabs)
        form = QFormLayout(general)
        self.approval_timeout = self._spin(5, 3600, settings.approval_timeout, " s")
        self.approval_timeout.setToolTip("No answer in this time means Deny.")
        form.addRow("Approval dialog denies after:", self.approval_timeout)
        self.command_timeout = self._spin(1, 600, settings.command_timeout, " s")
        form.addRow("A browser command fails after:", self.command_timeout)
        self.idle_detach = QDoubleSpinBox(general)
        self.idle_detach.setRange(0, 1440)
        self.idle_detach.setDecimals(1)
        self.idle_detach.setSuffix(" min")
        self.idle_detach.setSpecialValueText("never")
        self.idle_detach.setValue(settings.idle_detach_minutes)
        form.addRow("Detach idle tabs after:", self.idle_detach)
        self.budget = self._spin(1000, 1_000_000, settings.response_budget_tokens, " tokens")
        self.budget.setSingleStep(1000)
        self.budget.setToolTip("Longer tool results are cut with a marker that says how to read on")
        form.addRow("Largest tool result:", self.budget)
        self.screenshot_width = self._spin(100, 8000, settings.screenshot_max_width, " px")
        form.addRow("Screenshots at most:", self.screenshot_width)
        self.scope_all = QRadioButton("All tabs (each action still needs your approval)", general)
        self.scope_shared = QRadioButton("Only tabs I share, and tabs agents open", general)
        self.scope_shared.setToolTip(
            "Shared tabs are those in the “Tabrelay” tab group or attached from the extension's "
            "popup; agents do not even see the others."
        )
        (self.scope_shared if settings.tab_scope == "shared" else self.scope_all).setChecked(True)
        form.addRow("Agents may see:", self.scope_all)
        form.addRow("", self.scope_shared)
        self.autostart_box = QCheckBox("Start Tabrelay when I log in", general)
        self.autostart_box.setChecked(autostart.is_enabled())
        self.autostart_box.setToolTip(autostart.location)
        form.addRow("", self.autostart_box)
        tabs.addTab(general, "General")

        sites = QWidget(tabs)
        sites_form = QFormLayout(sites)
        hint = QLabel(
            "One site per line: a host (example.com, which covers its subdomains), "
            "*.example.com, or an origin (https://example.com:8443).",
            sites,
        )
        hint.setWordWrap(True)
        sites_form.addRow(hint)
        navigation = settings.navigation
        self.block_edit = QPlainTextEdit("\n".join(navigation.block), sites)
        self.allow_edit = QPlainTextEdit("\n".join(navigation.allow), sites)
        sites_form.addRow("Never open:", self.block_edit)
        sites_form.addRow("Allowed:", self.allow_edit)
        self.only_allowed = QCheckBox("Agents may open only the allowed sites", sites)
        self.only_allowed.setChecked(navigation.only_allowed)
        self.private_networks = QCheckBox(
            "Agents may open private-network addresses (routers, intranet)", sites
        )
        self.private_networks.setChecked(navigation.allow_private_networks)
        sites_form.addRow("", self.only_allowed)
        sites_form.addRow("", self.private_networks)
        tabs.addTab(sites, "Sites")

        advanced = QWidget(tabs)
        advanced_form = QFormLayout(advanced)
        self.relay_port = self._spin(1, 65535, settings.relay_port, "")
        self.mcp_port = self._spin(1, 65535, settings.mcp_port, "")
        advanced_form.addRow("Browser relay port:", self.relay_port)
        advanced_form.addRow("MCP port:", self.mcp_port)
        ports_note = QLabel(
            "Ports take effect when Tabrelay restarts. After changing the relay port, set the "
            "same port in the extension's options; after changing the MCP port, connect your "
            "MCP clients again.",
            advanced,
        )
        ports_note.setWordWrap(True)
        advanced_form.addRow(ports_note)
        self.retention_days = self._spin(1, 3650, settings.log_retention_days, " days")
        advanced_form.addRow("Keep the command log for:", self.retention_days)
        self.cdp_box = QCheckBox("Offer agents raw DevTools commands (browser_cdp)", advanced)
        self.cdp_box.setChecked(settings.enable_cdp_tool)
        self.cdp_box.setToolTip(
            "For developers: an agent may send Chrome DevTools Protocol commands to a tab. "
            "Each call still asks you, and the commands that read cookies or open windows "
            "stay blocked. Connected clients see the tool appear or go at once."
        )
        advanced_form.addRow("Expert:", self.cdp_box)
        tabs.addTab(advanced, "Advanced")

        self.error = QLabel(self)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #B3261E;")
        self.error.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.problems)
        layout.addWidget(tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.restart_needed = False

    def _spin(self, low: int, high: int, value: float, suffix: str) -> QSpinBox:
        spin = QSpinBox(self)
        spin.setRange(low, high)
        spin.setValue(int(value))
        spin.setSuffix(suffix)
        spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        return spin

    def form(self) -> SettingsForm:
        """The fields, checked.

        Raises:
            ValueError: what is wrong, naming the field or line.
        """
        if self.relay_port.value() == self.mcp_port.value():
            raise ValueError("The relay port and the MCP port must differ.")
        block = parse_sites(self.block_edit.toPlainText(), "Never open")
        allow = parse_sites(self.allow_edit.toPlainText(), "Allowed")
        if self.only_allowed.isChecked() and not allow:
            raise ValueError(
                "“Only the allowed sites” is on but no site is allowed: agents could open "
                "nothing. Add sites or turn it off."
            )
        return SettingsForm(
            relay_port=self.relay_port.value(),
            mcp_port=self.mcp_port.value(),
            approval_timeout=float(self.approval_timeout.value()),
            command_timeout=float(self.command_timeout.value()),
            idle_detach_minutes=self.idle_detach.value(),
            response_budget_tokens=self.budget.value(),
            screenshot_max_width=self.screenshot_width.value(),
            allow=allow,
            block=block,
            only_allowed=self.only_allowed.isChecked(),
            allow_private_networks=self.private_networks.isChecked(),
            tab_scope="shared" if self.scope_shared.isChecked() else "all",
            log_retention_days=float(self.retention_days.value()),
            autostart=self.autostart_box.isChecked(),
            enable_cdp_tool=self.cdp_box.isChecked(),
        )

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    @Slot()
    def save(self) -> asyncio.Task[None] | None:
        try:
            form = self.form()
        except ValueError as exc:
            self.show_error(str(exc))
            return None
        self.show_error("")
        before = self.core.settings
        self.restart_needed = (form.relay_port, form.mcp_port) != (
            before.relay_port,
            before.mcp_port,
        )
        save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save_button.setEnabled(False)

        async def run() -> None:
            await asyncio.to_thread(self.core.settings_store.update, form.apply)
            if form.autostart != self.autostart.is_enabled():
                await asyncio.to_thread(self.autostart.set_enabled, form.autostart)

        def done(_: None) -> None:
            save_button.setEnabled(True)
            self.saved.emit()
            self.accept()

        def failed(error: TabrelayError) -> None:
            save_button.setEnabled(True)
            self.show_error(error.message)

        return self.tasks.start(run(), on_done=done, on_error=failed)
