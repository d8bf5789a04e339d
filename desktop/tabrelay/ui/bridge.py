"""The one place core callbacks become Qt signals (the OnionShare pattern).

The core calls plain listeners: the browser registry and the approval gate on the loop's
thread, the command log from a worker thread. ``CoreBridge`` subscribes to each once and
re-emits Qt signals on the GUI thread, coalesced so a burst of tab events is one repaint and
the CDP stream arrives in batches about ten times a second, never one signal per event. Until
the Events page exists (the dashboard is built on first use) it also keeps the newest events,
as they came, for the page to start from. What the person's status shows (settings, the
keychain, a browser asking to pair or refused) is not polled: the bridge subscribes to each of
its owners and re-reads the status on the GUI thread when one of them speaks. Open handoffs,
recordings and demonstrations each come through one ``ChangeSignal``: their listeners may be
told on any thread, and the pages hear one ``changed`` a little later on the GUI thread.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from tabrelay.core import Core
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import HubEvent, Subscription
from tabrelay.relay.registry import Change
from tabrelay.store.commandlog import CommandEntry
from tabrelay.ui.events_model import CAPACITY

logger = logging.getLogger(__name__)

EVENT_INTERVAL = 0.1  # seconds between event batches: about ten inserts a second
BROWSER_COALESCE = 0.1
EVENT_QUEUE = 20_000  # the hub drops the oldest beyond this while the UI is busy
CHANGE_COALESCE = 0.05  # seconds: a burst of recorded steps is one repaint

# An owner's ``add_listener``: takes a callback (told with whatever the owner tells), returns
# the way to stop.
AddListener = Callable[[Any], Callable[[], None]]


class ChangeSignal(QObject):
    """One owner's listeners as one Qt signal on the GUI thread, coalesced.

    ``watch(owner.add_listener)`` subscribes; the owner may tell from the loop or a worker
    thread, with any arguments. ``changed`` is emitted once per burst, ``coalesce`` seconds
    after the first change of it; the page re-reads the owner then.
    """

    changed = Signal()
    _told = Signal()  # from any thread

    def __init__(self, *, coalesce: float = CHANGE_COALESCE, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe: list[Callable[[], None]] = []
        self._timer = QTimer(self, singleShot=True, interval=max(0, int(coalesce * 1000)))
        self._timer.timeout.connect(self.changed)
        self._told.connect(self._schedule, Qt.ConnectionType.QueuedConnection)

    def watch(self, add_listener: AddListener) -> None:
        self._unsubscribe.append(add_listener(self._heard))

    def _heard(self, *_args: Any, **_kwargs: Any) -> None:
        self._told.emit()

    @Slot()
    def _schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self._timer.stop()


class CoreBridge(QObject):
    """Qt signals for what the core reports; see the module docstring."""

    browsers_changed = Signal()
    browser_connected = Signal(str)  # the browser's name
    browser_disconnected = Signal(str)
    approvals_changed = Signal()
    command_logged = Signal(object)  # CommandEntry, on the GUI thread
    events_received = Signal(list)  # a batch of HubEvent
    alert_raised = Signal(str, str)  # kind, message
    settings_changed = Signal()

    _logged_in_worker = Signal(object)
    _status_moved = Signal()  # from any thread: an owner of something the status shows spoke

    def __init__(
        self,
        core: Core,
        *,
        event_interval: float = EVENT_INTERVAL,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.last_command_at = 0.0  # time.monotonic() of the newest command log row
        self.tab_activity: dict[tuple[str, int], float] = {}  # (browser, tab) → time.time()
        self._unsubscribe: list[Callable[[], None]] = []
        self._events: Subscription | None = None
        self._alerts: Subscription | None = None
        self._settings_seen: tuple[object, ...] = ()
        # The Events page's ring, kept here until the page takes it (take_recent_events).
        self._recent: deque[HubEvent] | None = deque(maxlen=CAPACITY)
        # Open handoffs; recordings and demonstrations (the Recipes page and the tray).
        self.handoffs_changed = ChangeSignal(parent=self)
        self.recordings_changed = ChangeSignal(parent=self)

        self._browsers_timer = QTimer(self, singleShot=True, interval=int(BROWSER_COALESCE * 1000))
        self._browsers_timer.timeout.connect(self.browsers_changed)
        self._event_timer = QTimer(self, interval=max(1, int(event_interval * 1000)))
        self._event_timer.timeout.connect(self._drain_events)
        self._logged_in_worker.connect(self._logged, Qt.ConnectionType.QueuedConnection)
        self._status_moved.connect(self.refresh_status, Qt.ConnectionType.QueuedConnection)

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Subscribe to the core (after ``core.start()``, which opens the command log)."""
        core = self.core
        self._unsubscribe.append(core.registry.add_listener(self._browser_changed))
        self._unsubscribe.append(core.gate.add_listener(self.approvals_changed.emit))
        self._unsubscribe.append(core.gate.plans.add_listener(self.approvals_changed.emit))
        if core.command_log is not None:
            self._unsubscribe.append(core.command_log.add_listener(self._logged_in_worker.emit))
        # Settings are published from the loop or from the worker thread that wrote them.
        self._unsubscribe.append(core.settings_store.subscribe(lambda _: self._status_moved.emit()))
        self._unsubscribe.append(core.tokens.add_listener(self._status_moved.emit))
        self._unsubscribe.append(core.pairing.add_listener(self._status_moved.emit))
        self._events = core.hub.subscribe(maxlen=EVENT_QUEUE)
        self._alerts = core.hub.subscribe(maxlen=100, accept=lambda e: e.kind == "alert")
        self._settings_seen = self._settings_signature()
        self.handoffs_changed.watch(core.handoffs.add_listener)
        self.recordings_changed.watch(core.recorder.add_listener)
        self.recordings_changed.watch(core.demonstrations.add_listener)
        self._event_timer.start()

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.handoffs_changed.close()
        self.recordings_changed.close()
        for subscription in (self._events, self._alerts):
            if subscription is not None:
                subscription.close()
        self._event_timer.stop()
        self._browsers_timer.stop()
        self._recent = None

    @property
    def dropped_events(self) -> int:
        """Events the hub dropped because the UI fell behind (shown on the Events page)."""
        return self._events.dropped if self._events is not None else 0

    # --- browsers ---------------------------------------------------------------------------

    def _browser_changed(self, change: Change, browser: Browser) -> None:
        if change == "connected":
            self.browser_connected.emit(browser.name)
        elif change == "disconnected":
            self.browser_disconnected.emit(browser.name)
            for key in [k for k in self.tab_activity if k[0] == browser.id]:
                del self.tab_activity[key]
        if change != "updated":
            self.refresh_status()  # a browser let in is no longer one refused
        if not self._browsers_timer.isActive():
            self._browsers_timer.start()

    # --- the command log --------------------------------------------------------------------

    @Slot(object)
    def _logged(self, entry: CommandEntry) -> None:
        self.last_command_at = time.monotonic()
        if entry.browser is not None and entry.tab_id is not None:
            self.tab_activity[(entry.browser, entry.tab_id)] = entry.time
        self.command_logged.emit(entry)

    # --- events -----------------------------------------------------------------------------

    def take_recent_events(self) -> list[HubEvent]:
        """Hand over the newest events kept so far, oldest first, and stop keeping them.

        The Events page calls this once, when it is built, and takes later events from
        ``events_received``; at most the page's capacity is kept, and later calls return
        nothing.
        """
        recent, self._recent = self._recent, None
        return list(recent) if recent is not None else []

    def drain_now(self) -> None:
        """Deliver queued events at once (tests; the timer does this in the app)."""
        self._drain_events()

    @Slot()
    def _drain_events(self) -> None:
        if self._alerts is not None and len(self._alerts):
            for alert in self._alerts.drain():
                message = str(alert.params.get("message") or alert.method)
                self.alert_raised.emit(alert.method, message)
            self.refresh_status()  # a browser refused is in the status too
        if self._events is None or not len(self._events):
            return
        batch: list[HubEvent] = self._events.drain()
        for event in batch:
            if event.tab_id is not None and event.browser_id:
                self.tab_activity[(event.browser_id, event.tab_id)] = event.time
        if self._recent is not None:
            self._recent.extend(batch)  # the deque's maxlen drops the oldest
        self.events_received.emit(batch)

    # --- settings ---------------------------------------------------------------------------

    def _settings_signature(self) -> tuple[object, ...]:
        """Changes the person's status shows: settings, where secrets live and whether they
        can be read, a browser asking to pair or refused."""
        core = self.core
        store = core.settings_store
        return store.current.revision, len(store.problems), tuple(core.attention())

    @Slot()
    def refresh_status(self) -> None:
        """Redraw what shows the person's status if it changed (an owner spoke, or an action
        changed it)."""
        signature = self._settings_signature()
        if signature != self._settings_seen:
            self._settings_seen = signature
            self.settings_changed.emit()
