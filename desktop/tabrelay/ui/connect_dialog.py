"""Connect an MCP client: create its named token, then copy a ready snippet or, after asking,
merge Tabrelay into that client's config file (backed up, other servers kept).

The token is shown once, in this dialog, and only for clients that connect over HTTP; clients
that start programs get ``tabrelay mcp-stdio --client NAME``, which reads it from the keychain.
"""

from __future__ import annotations

import asyncio
import json

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tabrelay.config.mcp_clients import NewClient
from tabrelay.config.settings import CLIENT_NAME
from tabrelay.core import Core
from tabrelay.endpoint import MCP_PATH
from tabrelay.errors import ConfigError, TabrelayError
from tabrelay.system.clients import (
    CLIENTS,
    SERVER_NAME,
    ClientKind,
    Endpoint,
    MergeResult,
    merge_into_config,
    stdio_line,
)
from tabrelay.system.launcher import tabrelay_command
from tabrelay.ui.prompts import Confirm, ask
from tabrelay.ui.tasks import BackgroundTasks

OTHER = "other"
SNIPPET_MIN_HEIGHT = 150
SNIPPET_LINES = 16  # a snippet up to this many lines shows whole; a longer one scrolls


def endpoint_url(core: Core) -> str:
    port = core.endpoint.port if core.endpoint is not None else core.settings.mcp_port
    return f"http://127.0.0.1:{port}{MCP_PATH}"


def free_name(taken: set[str], base: str) -> str:
    if base not in taken:
        return base
    number = 2
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


def other_snippet(endpoint: Endpoint) -> str:
    """For any other MCP client: the raw facts and the common ``mcpServers`` shape."""
    entry = {
        "type": "http",
        "url": endpoint.url,
        "headers": {"Authorization": f"Bearer {endpoint.token}"},
    }
    return (
        f"Streamable HTTP: {endpoint.url}\n"
        f"HTTP+SSE (older clients): {endpoint.url.removesuffix(MCP_PATH)}/sse\n"
        f"Header: Authorization: Bearer {endpoint.token}\n"
        f"stdio: {stdio_line(endpoint)}\n\n"
        + json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
    )


class ConnectClientDialog(QDialog):
    """Two steps in one window: name the client, then connect it."""

    client_created = Signal(str)

    def __init__(
        self,
        core: Core,
        tasks: BackgroundTasks,
        *,
        kind: str | None = None,
        confirm: Confirm | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tasks = tasks
        self._confirm = confirm or self._ask
        self.new_client: NewClient | None = None
        self.setWindowTitle("Connect an MCP client — Tabrelay")
        self.setMinimumWidth(620)

        self.kind_box = QComboBox(self)
        for key, client in CLIENTS.items():
            self.kind_box.addItem(client.label, key)
        self.kind_box.addItem("Other MCP client", OTHER)
        self.kind_box.setCurrentIndex(max(0, self.kind_box.findData(kind or OTHER)))
        self.name_edit = QLineEdit(self)
        self.name_edit.setMaxLength(64)
        self.name_hint = QLabel(
            "The name shows in approval dialogs and the command log. Each client gets its own "
            "token, which you can revoke on the dashboard's Clients page.",
            self,
        )
        self.name_hint.setWordWrap(True)
        self.name_error = QLabel(self)
        self.name_error.setTextFormat(Qt.TextFormat.PlainText)
        self.name_error.setObjectName("error")
        self.name_error.setStyleSheet("color: #B3261E;")
        self.create_button = QPushButton("Create client", self)
        self.create_button.setDefault(True)

        form = QFormLayout()
        form.addRow("Client app:", self.kind_box)
        name_row = QHBoxLayout()
        name_row.addWidget(self.name_edit, 1)
        name_row.addWidget(self.create_button)
        form.addRow("Name in Tabrelay:", name_row)
        form.addRow("", self.name_hint)
        form.addRow("", self.name_error)

        # Step two: shown once the client exists.
        self.step_two = QWidget(self)
        self.created_label = QLabel(self.step_two)
        self.created_label.setWordWrap(True)
        self.token_edit = QLineEdit(self.step_two)
        self.token_edit.setReadOnly(True)
        self.token_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.copy_token_button = QPushButton("Copy token", self.step_two)
        self.token_row = QWidget(self.step_two)
        token_layout = QHBoxLayout(self.token_row)
        token_layout.setContentsMargins(0, 0, 0, 0)
        token_layout.addWidget(QLabel("Token (shown only now):", self.token_row))
        token_layout.addWidget(self.token_edit, 1)
        token_layout.addWidget(self.copy_token_button)
        self.snippet = QPlainTextEdit(self.step_two)
        self.snippet.setReadOnly(True)
        self.snippet.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.snippet.setMinimumHeight(SNIPPET_MIN_HEIGHT)
        self.copy_button = QPushButton("Copy", self.step_two)
        self.merge_button = QPushButton("Add to config file…", self.step_two)
        self.result_label = QLabel(self.step_two)
        self.result_label.setTextFormat(Qt.TextFormat.PlainText)
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.merge_button)
        buttons.addStretch()
        two = QVBoxLayout(self.step_two)
        two.setContentsMargins(0, 0, 0, 0)
        two.addWidget(self.created_label)
        two.addWidget(self.token_row)
        two.addWidget(self.snippet, 1)
        two.addLayout(buttons)
        two.addWidget(self.result_label)
        self.step_two.hide()

        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        self._layout = layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.step_two, 1)
        layout.addWidget(close)

        self.kind_box.currentIndexChanged.connect(self._kind_changed)
        self.name_edit.textChanged.connect(self._validate)
        self.create_button.clicked.connect(self.create_client)
        self.copy_button.clicked.connect(self.copy_snippet)
        self.copy_token_button.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.token_edit.text())
        )
        self.merge_button.clicked.connect(self.merge)
        self._kind_changed()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:
            self._fit_wrapped_text()
        return handled

    def _fit_wrapped_text(self) -> None:
        """Keep the window tall enough for its wrapped labels at the narrowest width it allows.

        Qt takes a window's minimum size from its layout's minimum, which counts a word-wrapped
        label as one line (top-level windows get no height-for-width); the lines it left out
        were taken from the rows below, which then overlapped (Copy over the snippet).
        """
        needed = max(
            self._layout.totalMinimumSize().height(),
            self._layout.totalMinimumHeightForWidth(self.minimumWidth()),
        )
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)

    # --- step one ---------------------------------------------------------------------------

    def kind(self) -> ClientKind | None:
        return CLIENTS.get(str(self.kind_box.currentData()))

    @Slot()
    def _kind_changed(self) -> None:
        if self.new_client is None:
            taken = {c.name for c in self.core.settings.clients}
            kind = self.kind()
            self.name_edit.setText(free_name(taken, kind.key if kind else "agent"))
        else:
            self._show_step_two()

    @Slot()
    def _validate(self) -> bool:
        name = self.name_edit.text().strip()
        problem = ""
        if not CLIENT_NAME.match(name):
            problem = "Use 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit."
        elif name in {c.name for c in self.core.settings.clients}:
            problem = f"A client named “{name}” exists; pick another name or revoke it first."
        self.name_error.setText(problem)
        self.name_error.setVisible(bool(problem))
        self.create_button.setEnabled(not problem and self.new_client is None)
        return not problem

    @Slot()
    def create_client(self) -> asyncio.Task[NewClient] | None:
        if not self._validate():
            return None
        name = self.name_edit.text().strip()
        self.create_button.setEnabled(False)

        def failed(error: TabrelayError) -> None:
            self.name_error.setText(error.message)
            self.name_error.show()
            self.create_button.setEnabled(True)

        return self.tasks.start(
            asyncio.to_thread(self.core.clients.add, name), on_done=self._created, on_error=failed
        )

    def _created(self, new: NewClient) -> None:
        self.new_client = new
        self.name_edit.setReadOnly(True)
        self.create_button.hide()
        self.name_hint.hide()
        self.client_created.emit(new.name)
        self._show_step_two()

    # --- step two ---------------------------------------------------------------------------

    def endpoint(self) -> Endpoint:
        assert self.new_client is not None
        return Endpoint(
            url=endpoint_url(self.core),
            token=self.new_client.token,
            client=self.new_client.name,
            command=tuple(tabrelay_command()),
            approval_timeout=self.core.settings.approval_timeout,
        )

    def _show_step_two(self) -> None:
        assert self.new_client is not None
        kind, endpoint = self.kind(), self.endpoint()
        stdio = kind is not None and kind.transport == "stdio"
        label = kind.label if kind else "your MCP client"
        if stdio:
            how = (
                f"{label} starts <code>tabrelay mcp-stdio</code>, which reads the client's token "
                "from your keychain, so the snippet holds no secret."
            )
        elif kind is not None and kind.key == "claude-code":
            how = "Run this command in a terminal (it holds the token; keep it private)."
        else:
            how = "The snippet holds the token: keep it private."
        self.created_label.setText(
            f"<b>Client “{endpoint.client}” created.</b> Set up {label} with the snippet below. "
            + how
        )
        self.token_edit.setText(endpoint.token)
        self.token_row.setVisible(not stdio)
        self.snippet.setPlainText(kind.snippet(endpoint) if kind else other_snippet(endpoint))
        self._fit_snippet()
        path = kind.config_path() if kind else None
        self.merge_button.setVisible(path is not None)
        if path is not None and kind is not None:
            self.merge_button.setText(f"Add to {path.name}…")
            self.merge_button.setToolTip(str(path))
        self.result_label.clear()
        self.step_two.show()
        self.copy_button.setFocus()

    def _fit_snippet(self) -> None:
        """Tall enough to show the snippet whole, up to ``SNIPPET_LINES`` lines (then it
        scrolls), and the window grown to match."""
        box = self.snippet
        self._layout.activate()  # the box's width now, for the lines that wrap
        width = max(box.viewport().width() - 2 * int(box.document().documentMargin()), 1)
        metrics = box.fontMetrics()
        # Wrapping breaks at words, so a wrapped line may take one more row than its width.
        wrapped = sum(
            1 + (advance > width) * (advance // width + 1)
            for advance in map(metrics.horizontalAdvance, box.toPlainText().split("\n"))
        )
        lines = min(wrapped, SNIPPET_LINES)
        frame = 2 * (box.frameWidth() + int(box.document().documentMargin())) + 4
        box.setMinimumHeight(
            max(SNIPPET_MIN_HEIGHT, lines * box.fontMetrics().lineSpacing() + frame)
        )
        self._fit_wrapped_text()
        if self.height() < self.minimumHeight():
            self.resize(self.width(), self.minimumHeight())

    @Slot()
    def copy_snippet(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.toPlainText())
        self.result_label.setText("Copied to the clipboard.")

    async def _ask(self, title: str, question: str) -> bool:
        return await ask(self, title, question)

    @Slot()
    def merge(self) -> asyncio.Task[None] | None:
        """Ask, then add Tabrelay to the chosen client's config file."""
        kind = self.kind()
        path = kind.config_path() if kind else None
        if kind is None or path is None:
            return None
        exists = path.exists()
        question = (
            f"Add the “{SERVER_NAME}” server to {path}?\n\n"
            + (
                "The current file is copied next to it first (…bak-DATE). Other servers and "
                "settings in it stay as they are."
                if exists
                else "The file does not exist yet; Tabrelay creates it."
            )
            + f"\n\nRestart {kind.label} afterwards so it loads the change."
        )
        endpoint = self.endpoint()

        def write() -> MergeResult:
            try:
                return merge_into_config(kind, endpoint, path)
            except OSError as exc:  # the backup copy or the directory
                raise ConfigError(f"could not write {path}: {exc}") from None

        async def run() -> None:
            if not await self._confirm(f"Add Tabrelay to {kind.label}", question):
                return
            result = await asyncio.to_thread(write)
            if not result.changed:
                text = f"{result.path} already has this Tabrelay entry; nothing changed."
            elif result.backup is not None:
                text = (
                    f"Added Tabrelay to {result.path}. The previous file is saved as "
                    f"{result.backup.name}. Restart {kind.label} to use it."
                )
            else:
                text = f"Created {result.path} with Tabrelay. Restart {kind.label} to use it."
            self.result_label.setText(" ".join([text, *result.notes]))

        def failed(error: TabrelayError) -> None:
            self.result_label.setText(f"Not changed: {error.message}")

        return self.tasks.start(run(), on_error=failed)
