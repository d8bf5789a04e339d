"""The desktop UI as a whole: bridge, tray, dashboard, dialogs and notifications over one core.

``app.py`` builds the approvers, the core and then this; tests do the same with a core on free
ports. ``DesktopUi`` implements the tray's actions, turns core errors into dialogs, and keeps
"Pause agent access" honest: pausing also denies every request already on screen or queued.
It tells the person when an agent hands them a tab. The dashboard is built on first use: most
of the time the app only sits in the tray.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QMessageBox, QSystemTrayIcon

from tabrelay.approval.gate import ApprovalRequest
from tabrelay.core import KEYCHAIN_ATTENTION, Core
from tabrelay.errors import TabrelayError
from tabrelay.system.autostart import Autostart
from tabrelay.ui.approval_dialog import DialogApprover, tool_title
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.connect_dialog import ConnectClientDialog
from tabrelay.ui.crash import CrashHandler
from tabrelay.ui.handoffs_view import handoff_headline
from tabrelay.ui.keychain import WAITING, KeychainNotice
from tabrelay.ui.notifications import Notifier
from tabrelay.ui.pairing import DialogPairingApprover, PairBrowserDialog
from tabrelay.ui.prompts import ask
from tabrelay.ui.settings_dialog import SettingsDialog
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import visible
from tabrelay.ui.tray import TrayController
from tabrelay.ui.windows import Retired, bring_to_front

if TYPE_CHECKING:
    from tabrelay.ui.dashboard import DashboardWindow

logger = logging.getLogger(__name__)


class DesktopUi(QObject):
    def __init__(
        self,
        core: Core,
        *,
        approver: DialogApprover,
        pairing_approver: DialogPairingApprover,
        autostart: Autostart,
        crash: CrashHandler | None = None,
        on_quit: Callable[[], None] = lambda: None,
        keychain_notice: KeychainNotice | None = None,
        tray_available: bool | None = None,
        event_interval: float | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.approver = approver
        self.pairing_approver = pairing_approver
        self.autostart = autostart
        self.crash = crash
        self._on_quit = on_quit
        self.quitting = False
        self.error_boxes: list[QMessageBox] = []
        self.tasks = BackgroundTasks(on_error=self.show_error, on_crash=self._crashed)
        interval = {} if event_interval is None else {"event_interval": event_interval}
        self.bridge = CoreBridge(core, parent=self, **interval)
        self.bridge.start()

        if tray_available is None:
            tray_available = QSystemTrayIcon.isSystemTrayAvailable()
        self.has_tray = tray_available
        self.tray = TrayController(
            core, self.bridge, self, pairing_pending=lambda: len(pairing_approver.dialogs)
        )
        self.notifier = Notifier(self.tray.icon if tray_available else None)
        self._dashboard: DashboardWindow | None = None
        self.connect_dialog: ConnectClientDialog | None = None
        self.pair_dialog: PairBrowserDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self._retired = Retired()

        self.keychain_notice = keychain_notice or KeychainNotice()
        self._keychain_told = False
        self.bridge.alert_raised.connect(self._alert)
        self.bridge.settings_changed.connect(self._status_changed)
        approver.left_unseen.connect(self._approval_unseen)
        pairing_approver.requested.connect(self._pairing_requested)
        self.tray.icon.messageClicked.connect(self._message_clicked)
        self._handoffs_seen = {h.id for h in core.handoffs.open()}
        self.bridge.handoffs_changed.changed.connect(self._handoffs_changed)
        if tray_available:
            self.tray.show()
        self._status_changed()  # a keychain locked since start-up is news too

    async def close(self) -> None:
        self.quitting = True
        self.tray.hide()
        self.bridge.close()
        await self.tasks.close()
        for dialog in (self.connect_dialog, self.pair_dialog, self.settings_dialog):
            if dialog is not None:
                dialog.close()
        if self._dashboard is not None:
            self._dashboard.hide()

    # --- the dashboard ----------------------------------------------------------------------

    @property
    def dashboard(self) -> DashboardWindow:
        """The dashboard window, built the first time it is asked for.

        A person may never open it: built and hidden it costs ≈ 5 MiB, shown ≈ 15 MiB
        (docs/benchmarks.md, "Idle memory"). Everything it shows is read from the core when it
        is built; the Events page starts from the events the bridge kept until then.
        """
        if self._dashboard is None:
            # Imported here too: its pages' modules are ≈ 1 MiB the tray alone never needs.
            from tabrelay.ui.dashboard import DashboardWindow

            self._dashboard = DashboardWindow(
                self.core,
                self.bridge,
                self.tasks,
                self,
                deny_all=self.approver.deny_all,
                has_tray=self.has_tray,
            )
        return self._dashboard

    @property
    def dashboard_built(self) -> bool:
        """Whether the dashboard exists yet (asking ``dashboard`` builds it)."""
        return self._dashboard is not None

    # --- errors -----------------------------------------------------------------------------

    def show_error(self, error: TabrelayError) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, error.title, error.message)
        box.setWindowTitle(f"{error.title} — Tabrelay")
        self.error_boxes.append(box)
        box.finished.connect(lambda _result: self.error_boxes.remove(box))
        box.open()

    def _crashed(self, error: BaseException) -> None:
        logger.error("a background task failed", exc_info=error)
        if self.crash is not None:
            self.crash.report(error)

    # --- notifications ----------------------------------------------------------------------

    # Only what needs the person: a browser connecting or reconnecting is routine (the tray
    # icon and the Tabs page show it), a refusal, a locked keychain or an alert is not.

    @Slot(str, str)
    def _alert(self, kind: str, message: str) -> None:
        if kind == "browser_rejected":
            if self.core.secrets_problem is None:  # else the keychain's notice said it
                self.notifier.notify("A browser was refused", message, "warning")
        else:
            self.notifier.notify("Tabrelay security alert", message, "critical")

    @Slot()
    def _status_changed(self) -> None:
        problem = self.core.secrets_problem
        if problem is not None and not self._keychain_told:
            self.notifier.notify(
                "Tabrelay cannot read your keychain", KEYCHAIN_ATTENTION[problem.trouble], "warning"
            )
        self._keychain_told = problem is not None

    @Slot(object)
    def _approval_unseen(self, request: ApprovalRequest) -> None:
        site = f" on {visible(request.origin)}" if request.origin else ""
        self.notifier.notify(
            "An agent is waiting for your approval",
            f"{visible(request.client)} wants to {tool_title(request.tool)}{site}.",
            "warning",
        )

    @Slot()
    def _handoffs_changed(self) -> None:
        handoffs = self.core.handoffs.open()
        for handoff in handoffs:
            if handoff.id not in self._handoffs_seen:
                self.notifier.notify(
                    "An agent hands you a tab",
                    f"{handoff_headline(handoff)}. Press Done when you have finished.",
                    "warning",
                    topic="handoff",
                )
        self._handoffs_seen = {h.id for h in handoffs}

    @Slot()
    def _message_clicked(self) -> None:
        if self.notifier.last_topic == "handoff":
            self.open_dashboard()  # its banner has Done and Cancel
        else:
            self.show_approvals()

    @Slot(str)
    def _pairing_requested(self, extension_id: str) -> None:
        self.notifier.notify(
            "A browser extension asks to pair",
            f"chrome-extension://{extension_id} asks to connect. Allow it in the dialog.",
            "warning",
        )

    # --- TrayActions ------------------------------------------------------------------------

    def open_dashboard(self) -> None:
        self.dashboard.bring_up()

    def show_approvals(self) -> None:
        if self.approver.current is not None:
            self.approver.bring_up()
        elif self.pairing_approver.dialogs:
            self.pairing_approver.bring_up()
        else:
            self.dashboard.show_page("Approvals")
            self.dashboard.bring_up()

    def set_paused(self, paused: bool) -> None:
        self.core.gate.set_paused(paused)  # which also withdraws the questions on screen
        self.tray.update_icon()

    def connect_client(self, kind: str | None) -> None:
        if self.connect_dialog is not None:
            self._retired.add(self.connect_dialog)
        self.connect_dialog = ConnectClientDialog(self.core, self.tasks, kind=kind)
        self.connect_dialog.client_created.connect(self._client_created)
        bring_to_front(self.connect_dialog)

    @Slot(str)
    def _client_created(self, _name: str) -> None:
        # A dashboard built later reads the clients when it is built.
        if self._dashboard is not None:
            self._dashboard.clients_page.refresh()

    def pair_browser(self) -> None:
        if self.pair_dialog is None:
            self.pair_dialog = PairBrowserDialog(self.core, self.tasks)
        self.pair_dialog.refresh()
        bring_to_front(self.pair_dialog)

    def autostart_enabled(self) -> bool:
        return self.autostart.is_enabled()

    def set_autostart(self, enabled: bool) -> asyncio.Task[None]:
        """Add or remove the OS's autostart entry: the one record of start at login."""

        async def run() -> None:
            await asyncio.to_thread(self.autostart.set_enabled, enabled)

        return self.tasks.start(run())

    def open_settings(self) -> None:
        if self.settings_dialog is not None:
            self._retired.add(self.settings_dialog)
        self.settings_dialog = SettingsDialog(self.core, self.tasks, self.autostart)
        self.settings_dialog.saved.connect(self._settings_saved)
        bring_to_front(self.settings_dialog)

    @Slot()
    def _settings_saved(self) -> None:
        dialog = self.settings_dialog
        if dialog is not None and dialog.restart_needed:
            self.notifier.notify(
                "Settings saved", "The new ports take effect when Tabrelay restarts."
            )

    def quit(self) -> None:
        self._on_quit()

    def record_demonstration(self) -> object:
        """The Recipes page's "Record what I do…": its tab picker, over the dashboard."""
        dashboard = self.dashboard
        dashboard.bring_up()
        return dashboard.record_demonstration()

    def stop_recording(self) -> asyncio.Task[None]:
        """End every demonstration being recorded (the tray's "Stop recording")."""
        demonstrations = self.core.demonstrations

        async def run() -> None:
            for recording_id, _browser, _tab in demonstrations.active():
                await demonstrations.stop(recording_id)

        return self.tasks.start(run())

    def unlock_keychain(self) -> asyncio.Task[None]:
        """Ask the keychain again; the system's prompt is named as Tabrelay's meanwhile."""

        async def run() -> None:
            await self.keychain_notice.during(self.core.unlock_secrets(), WAITING)
            self.bridge.refresh_status()

        return self.tasks.start(run())

    def use_secrets_file(self) -> asyncio.Task[None]:
        """Keep secrets in the 0600 file from now on; what a locked keychain holds is given
        up only after the person says yes to exactly that."""

        async def run() -> None:
            settings = self.core.settings
            locked = self.core.secrets_problem is not None
            if locked:
                question = (
                    "Tabrelay cannot read your keychain, so what it holds is given up: "
                    f"{len(settings.pairings)} paired browser(s) ask to pair again and "
                    f"{len(settings.clients)} MCP client(s) need new tokens. From now on "
                    "Tabrelay keeps its secrets in a file only you can read. Go on?"
                )
            else:
                question = (
                    "Move every secret out of your keychain into a file only you can read? "
                    "Browsers and clients keep working."
                )
            if not await ask(None, "Use a file instead", question):
                return
            await self.core.use_secrets_file(forget_unreadable=locked)
            self.bridge.refresh_status()

        return self.tasks.start(run())
