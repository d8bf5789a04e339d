"""GUI tests: pytest-qt offscreen, async tests on a qasync loop sharing pytest-qt's QApplication.

ENVIRONMENT.md "Qt + asyncio": inside async tests, never call blocking ``qtbot.wait*`` while
another task must run; ``expect(signal)`` connects a future to a signal before the action and
``within`` awaits it with a bound.

``async with desktop() as desk`` runs the whole UI over a real core on free ports, with short
delays so no test waits long. It is entered inside the test, not as an async fixture: pytest-qt
processes Qt events between a fixture's setup and the test, and under qasync that would run the
core's asyncio callbacks while no loop is running.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import qasync
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QApplication

from support.harness import RelayHarness, running_core
from tabrelay.config.paths import Paths
from tabrelay.system.autostart import Autostart
from tabrelay.ui.approval_dialog import DialogApprover
from tabrelay.ui.collector import GuiThreadCollector
from tabrelay.ui.desktop import DesktopUi
from tabrelay.ui.pairing import DialogPairingApprover

T = TypeVar("T")
ALLOW_DELAY = 0.05  # the tests' Allow delay; test_approval_dialog checks the real one


def _qasync_loop() -> asyncio.AbstractEventLoop:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    return qasync.QEventLoop(app)  # type: ignore[no-any-return]


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _qasync_loop}


@pytest.fixture(scope="module", autouse=True)
def gui_thread_collector(qapp: QApplication) -> Iterator[GuiThreadCollector]:
    """Garbage is collected on the GUI thread only, as in the app (tabrelay/ui/collector.py).

    Per module: the suites after these run without a Qt loop and need automatic collection back.
    """
    collector = GuiThreadCollector()
    collector.start()
    yield collector
    collector.stop()


def expect(signal: SignalInstance) -> asyncio.Future[tuple[Any, ...]]:
    """A future for the next emission of ``signal`` (connect before the action)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args)
            # Not from inside the emission: disconnect once it is over.
            loop.call_soon(_disconnect, signal, fire)

    signal.connect(fire)
    return future


def _disconnect(signal: SignalInstance, slot: Callable[..., None]) -> None:
    with contextlib.suppress(RuntimeError, TypeError):  # the sender may be gone already
        signal.disconnect(slot)


async def unlocked(dialog: Any) -> None:
    """Wait until a dialog's Allow buttons wake up (they may already have)."""
    woke = expect(dialog.allow_unlocked)
    if not dialog.allow_enabled:
        await within(woke)


async def within(awaitable: Awaitable[T], timeout: float = 5.0) -> T:
    async with asyncio.timeout(timeout):
        return await awaitable


async def settled(task: asyncio.Future[Any] | None, timeout: float = 5.0) -> None:
    """Wait for a task the UI started whose failure the UI itself reports (not re-raised)."""
    assert task is not None
    await within(asyncio.wait({task}), timeout)


async def until(
    condition: Callable[[], Any], *, timeout: float = 5.0, message: str = "condition"
) -> Any:
    """Poll a condition the code under test has no signal for; bounded."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{message} not met within {timeout:g} s")
        await asyncio.sleep(0.01)


@dataclass
class Desk:
    harness: RelayHarness
    ui: DesktopUi
    approver: DialogApprover
    pairing: DialogPairingApprover
    quit_requests: list[bool]
    xdg: Path


DesktopFactory = Callable[..., AbstractAsyncContextManager[Desk]]


@pytest.fixture
def desktop(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DesktopFactory:
    """``async with desktop() as desk``: the UI over a running core, the fake extension paired."""
    monkeypatch.setenv("HOME", str(tmp_path / "person"))  # client config files land here
    xdg = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return lambda **core: _desktop(home, xdg, **core)


@asynccontextmanager
async def _desktop(home: Paths, xdg: Path, **core: Any) -> AsyncIterator[Desk]:
    approver = DialogApprover(allow_delay=ALLOW_DELAY, notice_delay=0.1)
    pairing = DialogPairingApprover(allow_delay=ALLOW_DELAY)
    quits: list[bool] = []
    async with running_core(
        home,
        approver=pairing,  # type: ignore[arg-type]
        tool_approver=approver,  # type: ignore[arg-type]
        **core,
    ) as harness:
        ui = DesktopUi(
            harness.core,
            approver=approver,
            pairing_approver=pairing,
            autostart=Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(xdg)}),
            on_quit=lambda: quits.append(True),
            tray_available=False,
            event_interval=0.02,
        )
        try:
            yield Desk(harness, ui, approver, pairing, quits, xdg)
        finally:
            approver.deny_all()
            await ui.close()
            if ui.dashboard_built:
                ui.dashboard.deleteLater()
