"""The tray icon and its menu (DESIGN §7). The menu is rebuilt each time it opens.

The icon shows the most urgent state that holds: needs attention (a request waits for the
person), waiting (an agent handed the person a tab and waits for Done), paused, working (a tool
call is running, or just finished), connected, no browser. The status line and tooltip say the
same in words: "Chromium 156 · 7 tabs · 2 clients". Each open handoff has its entry, with Done
and Cancel; "Record what I do…" (or "Stop recording" while one runs) records the person. Each
entry calls the ``TrayActions`` the desktop UI implements, or the core's ``Handoffs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, Protocol

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from tabrelay.core import Core
from tabrelay.system.clients import CLIENTS
from tabrelay.ui.bridge import CoreBridge
from tabrelay.ui.handoffs_view import handoff_headline
from tabrelay.ui.icons import STATE_TEXT, TrayState, tray_icon
from tabrelay.ui.text import one_line

WORKING_AFTER = 2.0  # seconds the icon keeps "working" after the last command finished
ACTIVE_CLIENT = 600.0  # a client seen in the last ten minutes counts (as on the Clients page)


class TrayActions(Protocol):
    def open_dashboard(self) -> None: ...
    def show_approvals(self) -> None: ...
    def set_paused(self, paused: bool) -> None: ...
    def connect_client(self, kind: str | None) -> None: ...
    def pair_browser(self) -> None: ...
    def set_autostart(self, enabled: bool) -> object: ...
    def autostart_enabled(self) -> bool: ...
    def open_settings(self) -> None: ...
    def quit(self) -> None: ...
    def unlock_keychain(self) -> object: ...
    def use_secrets_file(self) -> object: ...
    def record_demonstration(self) -> object: ...
    def stop_recording(self) -> object: ...


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def status_line(core: Core, *, now: float | None = None) -> str:
    """ "Chromium 156 · 7 tabs · 2 clients", or what is missing."""
    now = time.time() if now is None else now
    browsers = core.registry.all()
    tabs = sum(len(b.tabs) for b in browsers)
    active = [
        name
        for name, seen in core.client_activity().items()
        if seen.open_requests > 0 or now - seen.last_seen < ACTIVE_CLIENT
    ]
    clients = plural(len(active), "client")
    if not browsers:
        if core.secrets_problem is not None:
            return f"Keychain locked: browsers wait · {clients}"
        if core.relay is not None and core.relay.rejections:
            return f"A browser was refused · {clients}"
        return f"No browser connected · {clients}"
    who = browsers[0].name if len(browsers) == 1 else plural(len(browsers), "browser")
    return f"{who} · {plural(tabs, 'tab')} · {clients}"


class TrayController(QObject):
    def __init__(
        self,
        core: Core,
        bridge: CoreBridge,
        actions: TrayActions,
        *,
        pairing_pending: Callable[[], int] = lambda: 0,
        clock: Callable[[], float] = time.monotonic,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.bridge = bridge
        self.actions = actions
        self._pairing_pending = pairing_pending
        self._clock = clock
        self.current_state: TrayState | None = None
        self._status: QAction | None = None
        self.menu = QMenu()
        self.menu.setObjectName("trayMenu")
        self.menu.aboutToShow.connect(self.rebuild)
        self.icon = QSystemTrayIcon(self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self.update_icon)
        for signal in (
            bridge.browsers_changed,
            bridge.approvals_changed,
            bridge.command_logged,
            bridge.handoffs_changed.changed,
        ):
            signal.connect(self.update_icon)
        self.update_icon()
        self.rebuild()

    def show(self) -> None:
        self.icon.show()
        self._timer.start()

    def hide(self) -> None:
        self._timer.stop()
        self.icon.hide()

    # --- state ------------------------------------------------------------------------------

    def state(self) -> TrayState:
        core = self.core
        if core.gate.pending or self._pairing_pending() or core.attention():
            return TrayState.ATTENTION
        if core.handoffs.open():
            return TrayState.WAITING
        if core.gate.paused:
            return TrayState.PAUSED
        browsers = core.registry.all()
        running = core.runner is not None and core.runner.active_calls > 0
        recent = self._clock() - self.bridge.last_command_at < WORKING_AFTER
        if browsers and (running or recent):
            return TrayState.WORKING
        return TrayState.CONNECTED if browsers else TrayState.NO_BROWSER

    @Slot()
    def update_icon(self) -> None:
        state = self.state()
        if state is not self.current_state:
            self.current_state = state
            self.icon.setIcon(tray_icon(state))
        line = status_line(self.core)
        notes = self.core.attention()
        handoffs = self.core.handoffs.open() if state is TrayState.WAITING else []
        if notes:
            detail = notes[0]
        elif handoffs:
            detail = handoff_headline(handoffs[0], 100)
        else:
            detail = STATE_TEXT[state]
        self.icon.setToolTip(f"Tabrelay — {line}\n{detail}")
        if self._status is not None and self.menu.isVisible():
            self._status.setText(line)  # live while the menu is open

    # --- the menu ---------------------------------------------------------------------------

    @Slot()
    def rebuild(self) -> None:
        """Fill the menu from the current state (connected to ``aboutToShow``)."""
        menu = self.menu
        menu.clear()
        status = self._status = menu.addAction(status_line(self.core))
        status.setObjectName("status")
        status.setEnabled(False)
        waiting = len(self.core.gate.pending)
        if waiting:
            answer = menu.addAction(f"{plural(waiting, 'approval')} waiting — answer…")
            answer.setObjectName("approvals")
            answer.triggered.connect(lambda: self.actions.show_approvals())
        if self.core.secrets_problem is not None:
            unlock = menu.addAction("Keychain locked — Unlock…")
            unlock.setObjectName("unlockKeychain")
            unlock.triggered.connect(lambda: self.actions.unlock_keychain())
        pairing = self._pairing_pending()
        if pairing:
            pair = menu.addAction(f"{plural(pairing, 'pairing request')} waiting…")
            pair.setObjectName("pairingRequests")
            pair.triggered.connect(lambda: self.actions.show_approvals())
        for handoff in self.core.handoffs.open():
            # The reason is the agent's words: one line, hidden characters spelled out, and
            # "&" doubled so it cannot set a shortcut.
            title = one_line(f"Waiting for you: {handoff.reason}", 80).replace("&", "&&")
            entry = menu.addMenu(title)
            entry.menuAction().setObjectName(f"handoff:{handoff.id}")
            entry.setToolTip(handoff_headline(handoff))
            entry.setToolTipsVisible(True)
            done = entry.addAction("Done")
            done.setObjectName(f"handoff:{handoff.id}:done")
            done.triggered.connect(lambda _=False, i=handoff.id: self.end_handoff(i, "done"))
            cancel = entry.addAction("Cancel")
            cancel.setObjectName(f"handoff:{handoff.id}:cancelled")
            cancel.triggered.connect(lambda _=False, i=handoff.id: self.end_handoff(i, "cancelled"))
        for plan in self.core.gate.plans.live():
            # The purpose is the agent's words: shown as for handoffs.
            title = one_line(f"Plan: {plan.draft.purpose}", 80).replace("&", "&&")
            entry = menu.addMenu(title)
            entry.menuAction().setObjectName(f"plan:{plan.id}")
            entry.setToolTip(one_line(plan.describe(), 200))
            entry.setToolTipsVisible(True)
            end = entry.addAction("End this plan")
            end.setObjectName(f"plan:{plan.id}:end")
            end.triggered.connect(lambda _=False, i=plan.id: self.core.gate.plans.revoke(i))
        menu.addSeparator()

        self._action("Open dashboard", "dashboard", self.actions.open_dashboard)
        pause = self._action("Pause agent access", "pause", None)
        pause.setCheckable(True)
        pause.setChecked(self.core.gate.paused)
        pause.setToolTip("Every agent call is denied at once until you resume")
        pause.toggled.connect(lambda checked: self.actions.set_paused(checked))
        if self.core.demonstrations.active():
            self._action("Stop recording", "stopRecording", self.actions.stop_recording)
        else:
            record = self._action("Record what I do…", "record", self.actions.record_demonstration)
            record.setToolTip("Record your own steps in a tab as a recipe")

        clients = menu.addMenu("Connect an MCP client")
        clients.menuAction().setObjectName("connect")
        for key, kind in CLIENTS.items():
            item = clients.addAction(f"{kind.label}…")
            item.setObjectName(f"connect:{key}")
            item.triggered.connect(lambda _checked=False, k=key: self.actions.connect_client(k))
        clients.addSeparator()
        other = clients.addAction("Other…")
        other.setObjectName("connect:other")
        other.triggered.connect(lambda: self.actions.connect_client(None))
        self._action("Pair a browser…", "pair", self.actions.pair_browser)
        menu.addSeparator()

        login = self._action("Start at login", "autostart", None)
        login.setCheckable(True)
        login.setChecked(self.actions.autostart_enabled())
        login.toggled.connect(lambda checked: self.actions.set_autostart(checked))
        self._action("Settings…", "settings", self.actions.open_settings)
        menu.addSeparator()
        self._action("Quit Tabrelay", "quit", self.actions.quit)

    def end_handoff(self, handoff_id: str, outcome: Literal["done", "cancelled"]) -> bool:
        """Done or Cancel from the menu; ``False`` if the handoff had ended already."""
        ended = self.core.handoffs.end(handoff_id, outcome, by="tray")
        self.update_icon()
        return ended

    def _action(self, text: str, name: str, slot: Callable[[], object] | None) -> QAction:
        action = self.menu.addAction(text)
        action.setObjectName(name)
        if slot is not None:
            action.triggered.connect(lambda _checked=False: slot())
        return action

    def find(self, name: str) -> QAction | None:
        """The menu entry with this object name (tests, screenshots)."""
        for action in self.menu.actions():
            if action.objectName() == name:
                return action
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                for sub in submenu.actions():
                    if sub.objectName() == name:
                        return sub
        return None

    @Slot(QSystemTrayIcon.ActivationReason)
    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        # A left click opens the dashboard (Windows, most Linux trays); the menu stays on the
        # right click. With a request waiting, the click goes to it first.
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            if self.core.gate.pending or self._pairing_pending():
                self.actions.show_approvals()
            else:
                self.actions.open_dashboard()
