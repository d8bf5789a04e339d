"""The events benchmark's app side: the real core and desktop UI on one qasync loop, offscreen.

``bench_events.py`` starts this as its own process (so the sender does not share its CPU or its
loop) with a prepared TABRELAY_HOME. It prints one JSON line with the relay port when ready.
A QTimer heartbeat every 5 ms measures how late the loop gets to it: the UI's stalls. Lines
on stdin steer it: ``arm`` resets the meter and counts (answer: ``armed``); ``hide`` and
``show`` close and open the dashboard. Garbage is collected as in the app (app.py): on the GUI
thread's timer, with the objects of the start frozen. When the ``Bench.end`` event reaches the
Events page's model it prints what arrived.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")

import qasync  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from stats import percentile  # noqa: E402

from support.fake_extension import EXTENSION_ID  # noqa: E402
from support.harness import running_core  # noqa: E402
from tabrelay.config.paths import Paths  # noqa: E402
from tabrelay.core import freeze_startup_objects  # noqa: E402
from tabrelay.relay.events import HubEvent  # noqa: E402
from tabrelay.system.autostart import Autostart  # noqa: E402
from tabrelay.ui.approval_dialog import DialogApprover  # noqa: E402
from tabrelay.ui.bridge import CoreBridge  # noqa: E402
from tabrelay.ui.collector import GuiThreadCollector  # noqa: E402
from tabrelay.ui.desktop import DesktopUi  # noqa: E402
from tabrelay.ui.pairing import DialogPairingApprover  # noqa: E402

HEARTBEAT_MS = 5


def say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


class StallMeter:
    """How late a 5 ms timer fires: the longest time the loop could not run anything else."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(self._tick)
        self.lateness: list[float] = []
        self.last = time.perf_counter()

    def start(self) -> None:
        self.reset()
        self.timer.start()

    def reset(self) -> None:
        self.lateness = []
        self.last = time.perf_counter()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(max(0.0, (now - self.last) * 1000 - HEARTBEAT_MS))
        self.last = now


class StallSampler:
    """While the heartbeat is overdue by 40 ms, sample the loop thread's stack every 5 ms
    from another thread: where the stalls are spent, by innermost frames."""

    OVERDUE = 0.04

    def __init__(self, meter: StallMeter) -> None:
        self.meter = meter
        self.samples: collections.Counter[str] = collections.Counter()
        self._thread_id = threading.get_ident()
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def reset(self) -> None:
        self.samples = collections.Counter()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            if time.perf_counter() - self.meter.last < self.OVERDUE:
                continue
            frame = sys._current_frames().get(self._thread_id)
            stack = []
            while frame is not None and len(stack) < 4:
                code = frame.f_code
                where = f"{Path(code.co_filename).parent.name}/{Path(code.co_filename).name}"
                if code is GcPauses._callback.__code__:
                    stack.append("[gc]")
                elif not stack and code.co_name == "run_forever":
                    stack.append("[Qt]")  # no Python frame above the event loop: C++ runs
                else:
                    stack.append(f"{where}:{code.co_name}")
                frame = frame.f_back
            self.samples[" < ".join(stack[:3])] += 1

    def top(self, count: int = 6) -> list[tuple[str, int]]:
        return self.samples.most_common(count)


class GcPauses:
    """The longest garbage collection: it holds the GIL, so no other thread sees it."""

    def __init__(self) -> None:
        self.reset()
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def reset(self) -> None:
        self.worst_ms = 0.0
        self.worst_generation = -1
        self.total_ms = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        ms = (time.perf_counter() - self._started) * 1000
        self.total_ms += ms
        if ms > self.worst_ms:
            self.worst_ms, self.worst_generation = ms, info["generation"]


class DrainTimer:
    """Times each delivery of a batch (hub queue → signal → Events page model and view)."""

    def __init__(self) -> None:
        self.reset()
        original = CoreBridge._drain_events
        timer = self

        def timed(bridge: CoreBridge) -> None:
            queued = len(bridge._events) if bridge._events is not None else 0
            started = time.perf_counter()
            original(bridge)
            ms = (time.perf_counter() - started) * 1000
            if ms > timer.worst_ms:
                timer.worst_ms, timer.worst_batch = ms, queued
            timer.largest_batch = max(timer.largest_batch, queued)

        CoreBridge._drain_events = timed  # type: ignore[method-assign]

    def reset(self) -> None:
        self.worst_ms = 0.0
        self.worst_batch = 0
        self.largest_batch = 0


class Counter:
    """Counts what reaches the Events page's model, batch by batch."""

    def __init__(
        self,
        meter: StallMeter,
        ui: DesktopUi,
        drains: DrainTimer,
        sampler: StallSampler,
        collections: GcPauses,
    ) -> None:
        self.collections = collections
        self.meter = meter
        self.ui = ui
        self.drains = drains
        self.sampler = sampler
        self.reset()

    def reset(self) -> None:
        self.events = 0
        self.batches = 0
        self.first_at = 0.0
        self.dropped_before = self.ui.bridge.dropped_events
        self.drains.reset()
        self.sampler.reset()
        self.collections.reset()

    def batch(self, events: list[HubEvent]) -> None:
        self.batches += 1
        if not self.first_at:
            self.first_at = time.monotonic()
        ended = False
        for event in events:
            if event.method == "Bench.end":
                ended = True
            elif event.method != "Bench.start":
                self.events += 1
        if ended:
            lateness = self.meter.lateness or [0.0]
            model = self.ui.dashboard.events_page.model
            say(
                {
                    "end": time.monotonic(),
                    "first": self.first_at,
                    "events": self.events,
                    "batches": self.batches,
                    "dropped": self.ui.bridge.dropped_events - self.dropped_before,
                    "model_rows": model.rowCount(),
                    "worst_stall_ms": max(lateness),
                    "p99_stall_ms": percentile(lateness, 0.99),
                    "ticks": len(lateness),
                    "worst_drain_ms": self.drains.worst_ms,
                    "worst_drain_batch": self.drains.worst_batch,
                    "largest_batch": self.drains.largest_batch,
                    "stall_stacks": self.sampler.top(),
                    "worst_gc_ms": self.collections.worst_ms,
                    "worst_gc_generation": self.collections.worst_generation,
                    "gc_ms": self.collections.total_ms,
                    "gc_tracked": len(gc.get_objects()),
                }
            )


async def main(home: Path) -> None:
    paths = Paths.resolve({"TABRELAY_HOME": str(home)})
    drains = DrainTimer()  # before the bridge connects its timer to the method
    approver = DialogApprover()
    pairing = DialogPairingApprover()
    async with running_core(
        paths,
        paired=(EXTENSION_ID,),
        approver=pairing,  # type: ignore[arg-type]
        tool_approver=approver,  # type: ignore[arg-type]
    ) as harness:
        ui = DesktopUi(
            harness.core,
            approver=approver,
            pairing_approver=pairing,
            autostart=Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(home / "xdg")}),
            tray_available=False,
        )
        ui.open_dashboard()
        ui.dashboard.show_page("Events")
        freeze_startup_objects()  # as app.py does once the UI is up
        meter = StallMeter()
        sampler = StallSampler(meter)
        counter = Counter(meter, ui, drains, sampler, GcPauses())
        ui.bridge.events_received.connect(counter.batch)  # after the Events page's own slot
        meter.start()
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def command(line: str) -> None:
            if line == "arm":
                meter.reset()
                counter.reset()
                say({"armed": True})
            elif line == "hide":
                ui.dashboard.hide()
                say({"hidden": True})
            elif line == "show":
                ui.open_dashboard()
                say({"shown": True})
            elif line in ("quit", ""):
                done.set()

        def read_stdin() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(command, line.strip())
            loop.call_soon_threadsafe(command, "")

        threading.Thread(target=read_stdin, daemon=True).start()
        say({"relay_port": harness.port})
        await done.wait()
        meter.timer.stop()
        sampler.stop()
        await ui.close()


if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    collector = GuiThreadCollector(app)
    collector.start()
    qasync.run(main(Path(sys.argv[1])))
