"""Qt objects caught in reference cycles are freed on the GUI thread, never in a worker thread
(where freeing one left its timers firing into freed memory: a segfault)."""

from __future__ import annotations

import asyncio
import gc
import threading

from PySide6.QtCore import QObject, Qt, QTimer

from gui.conftest import until
from tabrelay.ui.collector import GuiThreadCollector


class _Cycle:
    """A Python-owned Qt object with a running timer, reachable only through a cycle."""

    def __init__(self, freed_in: list[int]) -> None:
        self.widget = QObject()
        self.timer = QTimer(self.widget)
        self.timer.start(5)
        self.widget.destroyed.connect(
            lambda: freed_in.append(threading.get_ident()), Qt.ConnectionType.DirectConnection
        )
        self.me = self


def _churn() -> list[list[int]]:
    """Allocate enough container objects that an automatic collection would be due here."""
    return [[] for _ in range(5 * gc.get_threshold()[0])]


async def test_a_cycle_holding_a_qt_object_is_freed_on_the_gui_thread(
    gui_thread_collector: GuiThreadCollector,
) -> None:
    assert not gc.isenabled()
    freed_in: list[int] = []
    _Cycle(freed_in)
    kept = await asyncio.to_thread(_churn)
    assert freed_in == [], "nothing is collected in a worker thread"
    await until(lambda: freed_in, message="the collector's timer frees the cycle")
    assert freed_in == [threading.get_ident()]
    del kept


async def test_collection_follows_the_interpreters_thresholds() -> None:
    collector = GuiThreadCollector()
    gc.collect()
    assert collector.collect_due() == 0  # nothing is due right after a collection
    freed_in: list[int] = []
    _Cycle(freed_in)
    kept = _churn()
    assert collector.collect_due() > 0
    assert freed_in == [threading.get_ident()]
    del kept


def test_stopping_hands_collection_back_to_the_interpreter() -> None:
    gc.enable()
    collector = GuiThreadCollector()
    collector.start()
    assert not gc.isenabled()
    collector.stop()
    assert gc.isenabled()
    gc.disable()  # the module's own collector is still running
