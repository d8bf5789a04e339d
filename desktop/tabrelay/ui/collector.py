"""Python's cycle collector, run on the GUI thread only.

An automatic collection runs in whichever thread happens to allocate when a threshold is
crossed. When that is a worker thread (``asyncio.to_thread``: settings, keychain, the command
log) and the garbage holds a Qt object Python owns (a dialog without a parent caught in a
reference cycle with its slots), the C++ object is deleted off the GUI thread: its timers stay
registered with the GUI thread's dispatcher, and the next one to fire goes into freed memory
(a segfault in ``QTimerInfoList::activateTimers``). So automatic collection is off while the UI
runs, and a timer on the GUI thread collects instead, with the interpreter's own thresholds.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 250


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject | None = None, *, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Collect what is left here, then hand collection back to the interpreter."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()

    def collect_due(self) -> int:
        """Collect the oldest generation whose count is over its threshold; objects freed."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        due = [g for g in range(3) if thresholds[g] and counts[g] > thresholds[g]]
        return gc.collect(due[-1]) if due else 0
