"""The dashboard window: Tabs, Events, Commands, Clients, Approvals and Recipes (DESIGN §7).

Closing it hides it; Tabrelay keeps running in the tray (or, without a tray, until Quit). A
banner at the top says what needs the person: an agent waiting for them to finish something in
a tab (Done / Cancel), agent access paused, a keychain that cannot be read (Unlock / Use a file
instead), a browser asking to pair or refused, a settings file that was set aside, secrets kept
in a file.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tabrelay import __version__
from tabrelay.core import KEYCHAIN_ATTENTION, Core
from tabrelay.protocol.constants import RELAY_PATH
from tabrelay.ui.approvals_page import ApprovalsPage
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.clients_page import ClientsPage
from tabrelay.ui.commands_page import CommandsPage
from tabrelay.ui.connect_dialog import endpoint_url
from tabrelay.ui.events_page import EventsPage
from tabrelay.ui.handoffs_view import HandoffsBanner
from tabrelay.ui.icons import app_icon
from tabrelay.ui.recipe_dialogs import TabChoice
from tabrelay.ui.recipes_page import RecipesPage
from tabrelay.ui.tabs_page import TabsPage, collect_rows
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.tray import TrayActions
from tabrelay.ui.windows import bring_to_front

BANNER_STYLE = {
    "warning": "background: #FEF7E0; color: #594300; padding: 8px; border-radius: 4px;",
    "paused": "background: #E8EAED; color: #202124; padding: 8px; border-radius: 4px;",
}


class DashboardWindow(QMainWindow):
    PAGES = ("Tabs", "Events", "Commands", "Clients", "Approvals", "Recipes")

    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        tasks: BackgroundTasks,
        actions: TrayActions,
        *,
        deny_all: Callable[[], None],
        has_tray: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.tray_actions = actions
        self.has_tray = has_tray
        self.setWindowTitle("Tabrelay")
        self.setWindowIcon(app_icon())
        self.resize(1100, 700)

        self.tabs_page = TabsPage(core, bridge, tasks, pair_browser=actions.pair_browser)
        self.events_page = EventsPage(core, bridge)
        self.commands_page = CommandsPage(core, bridge, tasks)
        self.clients_page = ClientsPage(core, bridge, tasks, connect_client=actions.connect_client)
        self.approvals_page = ApprovalsPage(
            core, bridge, tasks, show_dialog=actions.show_approvals, deny_all=deny_all
        )
        self.recipes_page = RecipesPage(
            core.recorder,
            core.recipes,
            core.demonstrations,
            bridge.recordings_changed.changed,
            tasks,
            tabs=lambda: tab_choices(core),
        )
        self.pages = QTabWidget(self)
        for name, page in zip(
            self.PAGES,
            (
                self.tabs_page,
                self.events_page,
                self.commands_page,
                self.clients_page,
                self.approvals_page,
                self.recipes_page,
            ),
            strict=True,
        ):
            self.pages.addTab(page, name)

        self.handoffs_banner = HandoffsBanner(core.handoffs, bridge.handoffs_changed.changed)
        self.paused_banner = QWidget(self)
        self.paused_banner.setStyleSheet(BANNER_STYLE["paused"])
        paused_layout = QHBoxLayout(self.paused_banner)
        paused_layout.setContentsMargins(8, 4, 8, 4)
        paused_text = QLabel(
            "<b>Agent access is paused.</b> Every agent call is denied until you resume.",
            self.paused_banner,
        )
        resume = QPushButton("Resume", self.paused_banner)
        resume.clicked.connect(lambda: actions.set_paused(False))
        paused_layout.addWidget(paused_text, 1)
        paused_layout.addWidget(resume)
        self.keychain_banner = QWidget(self)
        self.keychain_banner.setObjectName("keychainBanner")
        self.keychain_banner.setStyleSheet(BANNER_STYLE["warning"])
        keychain_layout = QHBoxLayout(self.keychain_banner)
        keychain_layout.setContentsMargins(8, 4, 8, 4)
        self.keychain_text = QLabel(self.keychain_banner)
        self.keychain_text.setWordWrap(True)
        self.unlock_button = QPushButton("Unlock", self.keychain_banner)
        self.unlock_button.clicked.connect(lambda: actions.unlock_keychain())
        self.file_button = QPushButton("Use a file instead…", self.keychain_banner)
        self.file_button.clicked.connect(lambda: actions.use_secrets_file())
        keychain_layout.addWidget(self.keychain_text, 1)
        keychain_layout.addWidget(self.unlock_button)
        keychain_layout.addWidget(self.file_button)
        self.warning_banner = QLabel(self)
        self.warning_banner.setTextFormat(Qt.TextFormat.PlainText)  # file paths, error texts
        self.warning_banner.setWordWrap(True)
        self.warning_banner.setStyleSheet(BANNER_STYLE["warning"])
        self.warning_banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.addWidget(self.handoffs_banner)
        layout.addWidget(self.paused_banner)
        layout.addWidget(self.keychain_banner)
        layout.addWidget(self.warning_banner)
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)
        self._build_menus()
        self.endpoints = QLabel(self)
        self.statusBar().addPermanentWidget(self.endpoints)

        bridge.approvals_changed.connect(self.refresh_banners)
        bridge.settings_changed.connect(self.refresh_banners)
        bridge.approvals_changed.connect(self._update_approvals_tab)
        self.refresh_banners()
        self._update_approvals_tab()

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&Tabrelay")
        for text, slot, shortcut in (
            ("Pair a browser…", self.tray_actions.pair_browser, None),
            ("Connect an MCP client…", lambda: self.tray_actions.connect_client(None), None),
            ("Settings…", self.tray_actions.open_settings, QKeySequence.StandardKey.Preferences),
        ):
            action = file_menu.addAction(text)
            action.triggered.connect(lambda _checked=False, s=slot: s())
            if shortcut is not None:
                action.setShortcut(shortcut)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("Quit Tabrelay")
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(lambda _checked=False: self.tray_actions.quit())
        agents = bar.addMenu("&Agents")
        self.pause_action = QAction("Pause agent access", self)
        self.pause_action.setCheckable(True)
        self.pause_action.toggled.connect(lambda checked: self.tray_actions.set_paused(checked))
        agents.addAction(self.pause_action)
        record = agents.addAction("Record what I do…")
        record.triggered.connect(lambda _checked=False: self.record_demonstration())

    def record_demonstration(self) -> object:
        """The Recipes page's "Record what I do…": its tab picker."""
        self.show_page("Recipes")
        return self.recipes_page.record()

    # --- state ------------------------------------------------------------------------------

    @Slot()
    def refresh_banners(self) -> None:
        core = self.core
        paused = core.gate.paused
        self.paused_banner.setVisible(paused)
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)
        problem = core.secrets_problem
        self.keychain_banner.setVisible(problem is not None)
        if problem is not None:
            self.keychain_text.setText(KEYCHAIN_ATTENTION[problem.trouble])
        notes = [*core.settings_store.problems, *core.tokens.all_problems()]
        notes.extend(n for n in core.attention() if n not in KEYCHAIN_ATTENTION.values())
        if core.tokens.insecure and not core.tokens.problems:
            notes.append(
                "Tabrelay keeps its secrets in a file only you can read. To keep them in a "
                "keychain (GNOME Keyring, KWallet, KeePassXC): `tabrelay secrets use keychain`."
            )
        if not self.has_tray:
            notes.append(
                "There is no system tray here, so this window is Tabrelay's home. Closing it "
                "keeps Tabrelay running; start Tabrelay again to bring it back, or use "
                "Tabrelay → Quit."
            )
        self.warning_banner.setText("\n\n".join(notes))
        self.warning_banner.setVisible(bool(notes))
        relay = core.relay.port if core.relay is not None else core.settings.relay_port
        self.endpoints.setText(
            f"Relay ws://127.0.0.1:{relay}{RELAY_PATH} · MCP {endpoint_url(core)} · "
            f"Tabrelay {__version__}"
        )

    @Slot()
    def _update_approvals_tab(self) -> None:
        waiting = len(self.core.gate.pending)
        index = self.PAGES.index("Approvals")
        self.pages.setTabText(index, f"Approvals ({waiting})" if waiting else "Approvals")

    def show_page(self, name: str) -> None:
        self.pages.setCurrentIndex(self.PAGES.index(name))

    def bring_up(self) -> None:
        bring_to_front(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        # The window hides; the app (relay, MCP endpoint, approvals) keeps running.
        event.ignore()
        self.hide()


def tab_choices(core: Core) -> list[TabChoice]:
    """The connected tabs, as the Tabs page lists them, to record a demonstration in."""
    return [
        TabChoice(row.browser_id, row.tab.id, row.tab.title, row.tab.url, row.browser_name)
        for row in collect_rows(core)
    ]
