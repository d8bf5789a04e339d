"""The tray app's composition root: Qt, one qasync loop, the core unchanged, the desktop UI.

``tabrelay`` with no command lands here (through ``cli.py``). It sets up logging with
redaction as ``tabrelay serve`` does, makes sure it is the only tray app for this Tabrelay
home (a second launch brings up the first one's dashboard), builds the GUI approvers, starts
the core with them, and runs until Quit, SIGINT/SIGTERM or the session ends. If Qt cannot
start at all (no usable platform plugin), it says so in one line and runs headless instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import qasync
from PySide6.QtCore import QMessageLogContext, QSocketNotifier, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMessageBox

from tabrelay.config.files import restrict_umask
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore, first_decision_pending
from tabrelay.errors import StartupError
from tabrelay.system.autostart import Autostart
from tabrelay.system.doctor import running_instance
from tabrelay.system.launcher import tabrelay_command
from tabrelay.system.logs import Redactor, setup_logging
from tabrelay.system.signals import stop_on_signals
from tabrelay.ui.collector import GuiThreadCollector
from tabrelay.ui.crash import CrashHandler
from tabrelay.ui.icons import app_icon, app_icon_path
from tabrelay.ui.keychain import FIRST_TIME, WAITING, KeychainNotice
from tabrelay.ui.single_instance import InstanceServer, instance_name

if TYPE_CHECKING:
    from tabrelay.core import Core
    from tabrelay.ui.desktop import DesktopUi

    Driver = Callable[[Core, DesktopUi], Awaitable[None]]

logger = logging.getLogger(__name__)
qt_logger = logging.getLogger("qt")

REPLACE_TIMEOUT = 10.0
_QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}
_ui_started = False


def _qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's messages go to our log; a fatal one before the UI is up means "run headless"."""
    qt_logger.log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)
    if kind == QtMsgType.QtFatalMsg and not _ui_started:
        reason = next((line for line in message.splitlines() if line.strip()), "Qt failed")
        print(
            f"tabrelay: the tray app cannot start here ({reason.strip()}); "
            "running headless instead (`tabrelay serve`)",
            file=sys.stderr,
            flush=True,
        )
        # Qt aborts the process after a fatal message; replace it with the headless app first.
        command = [*tabrelay_command(), "serve"]
        os.execv(command[0], command)  # noqa: S606 - our own command, no shell


def main(paths: Paths | None = None, *, verbose: bool = False, driver: Driver | None = None) -> int:
    """Run the tray app; the process exit code.

    ``driver`` (``make screenshots``) runs once the app is up, with the core and the UI, and
    the app quits when it returns; an exception it raises is raised here after a clean stop.
    """
    global _ui_started
    restrict_umask()  # before anything is written: everything this process creates is private
    started = time.monotonic()
    paths = paths or Paths.resolve()
    paths.tighten()  # an older install, or a file someone widened
    redactor = Redactor()
    setup_logging(
        redactor, log_file=paths.log_file, level=logging.DEBUG if verbose else logging.INFO
    )
    qInstallMessageHandler(_qt_message)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    _ui_started = True
    app.setApplicationName("Tabrelay")
    app.setOrganizationName("Tabrelay")
    app.setDesktopFileName("tabrelay")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # closing a dialog must not stop the loop

    instance = InstanceServer(instance_name(paths))
    if not instance.listen():
        print("tabrelay: Tabrelay is already running; its dashboard is shown", file=sys.stderr)
        return 0
    crash = CrashHandler(log_file=paths.log_file)
    collector = GuiThreadCollector(app)
    collector.start()
    try:
        result: int = qasync.run(_run(app, paths, redactor, instance, crash, started, driver))
        return result
    finally:
        collector.stop()
        instance.close()
        crash.uninstall()


async def _run(
    app: QApplication,
    paths: Paths,
    redactor: Redactor,
    instance: InstanceServer,
    crash: CrashHandler,
    started: float,
    driver: Driver | None = None,
) -> int:
    # The core (and the MCP SDK under it) is slow to import: only after a second launch has
    # handed over to the first one.
    from tabrelay.core import Core, freeze_startup_objects
    from tabrelay.ui.approval_dialog import DialogApprover
    from tabrelay.ui.desktop import DesktopUi
    from tabrelay.ui.pairing import DialogPairingApprover

    loop = asyncio.get_running_loop()
    crash.install(loop)
    notice = KeychainNotice()

    def waiting(now: bool) -> None:  # from the keychain's thread
        loop.call_soon_threadsafe(lambda: notice.say(WAITING) if now else notice.hide())

    first = await asyncio.to_thread(first_decision_pending, paths)
    tokens = await notice.during(
        asyncio.to_thread(TokenStore.open, paths, on_wait=waiting), FIRST_TIME if first else None
    )
    for problem in tokens.all_problems():
        logger.warning("%s", problem)
    approver = DialogApprover()
    pairing = DialogPairingApprover()

    def build() -> Core:  # a failed start leaves a core that must not be started again
        return Core(paths, tokens, redactor=redactor, pairing_approver=pairing, approver=approver)

    core = build()
    try:
        await core.start()
    except StartupError as error:
        if not await _replace_headless(paths, error):
            return 1
        core = build()
        try:
            await core.start()
        except StartupError as again:
            await _show_box(QMessageBox.Icon.Critical, again.title, again.message)
            return 1

    quit_requested = asyncio.Event()
    ui = DesktopUi(
        core,
        approver=approver,
        pairing_approver=pairing,
        autostart=Autostart(icon=app_icon_path()),
        crash=crash,
        on_quit=quit_requested.set,
        keychain_notice=notice,
    )
    instance.show_requested.connect(ui.open_dashboard)
    app.aboutToQuit.connect(quit_requested.set)
    restore_signals = stop_on_signals(loop, quit_requested.set)
    unwake = _wake_on_signals()
    if not ui.has_tray or not core.settings.pairings:
        ui.open_dashboard()  # first run, or nowhere else to find Tabrelay
    freeze_startup_objects()
    driving = asyncio.ensure_future(driver(core, ui)) if driver is not None else None
    if driving is not None:
        driving.add_done_callback(lambda _done: quit_requested.set())
    logger.info(
        "Tabrelay ready in %.2f s (relay port %s, MCP port %s)",
        time.monotonic() - started,
        core.relay.port if core.relay else "?",
        core.endpoint.port if core.endpoint else "?",
    )
    try:
        await quit_requested.wait()
    finally:
        if driving is not None and not driving.done():
            driving.cancel()
        await ui.close()
        await core.stop()
        restore_signals()
        unwake()
    failure = driving.exception() if driving is not None and not driving.cancelled() else None
    if failure is not None:
        raise failure
    return 0


def _wake_on_signals() -> Callable[[], None]:
    """Let Python handle a signal while Qt waits in C++ for events.

    A Python signal handler runs only when the interpreter next runs, and an idle tray app may
    not for many seconds: the C-level handler writes to a socket Qt watches (``set_wakeup_fd``),
    which wakes Qt, and the notifier's slot gives Python its turn. Returns the undo.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)

    def drain() -> None:
        with contextlib.suppress(BlockingIOError):
            while reader.recv(512):
                pass

    notifier.activated.connect(drain)

    def undo() -> None:
        signal.set_wakeup_fd(previous)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()

    return undo


async def _show_box(
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.Ok,
    default: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
) -> int:
    """A message box that does not block the loop (``open``, never ``exec``)."""
    box = QMessageBox(icon, title, text, buttons)
    box.setWindowTitle(f"{title} — Tabrelay")
    if default != QMessageBox.StandardButton.NoButton:
        box.setDefaultButton(default)
    answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    box.finished.connect(lambda result: None if answered.done() else answered.set_result(result))
    box.open()
    await answered
    button = box.standardButton(box.clickedButton()) if box.clickedButton() else None
    return int(button.value) if button is not None else 0


async def _replace_headless(paths: Paths, error: StartupError) -> bool:
    """The port is taken. If a headless Tabrelay holds it, offer to stop it; ``True`` if done."""
    instance = await asyncio.to_thread(running_instance, paths)
    pid = instance.get("pid") if instance else None
    if not isinstance(pid, int) or pid == os.getpid():
        await _show_box(QMessageBox.Icon.Critical, error.title, error.message)
        return False
    yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
    answer = await _show_box(
        QMessageBox.Icon.Question,
        "Tabrelay is already running",
        f"Tabrelay is already running without its window (process {pid}), probably started "
        "by an MCP client. Stop it and run the tray app instead? Agents connected to it "
        "reconnect on their own.",
        yes | no,
        yes,
    )
    if answer != yes.value:
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError as exc:
        await _show_box(QMessageBox.Icon.Critical, error.title, f"Could not stop it: {exc}")
        return False
    deadline = time.monotonic() + REPLACE_TIMEOUT
    while time.monotonic() < deadline:
        if await asyncio.to_thread(running_instance, paths) is None:
            return True
        await asyncio.sleep(0.2)
    await _show_box(QMessageBox.Icon.Critical, error.title, f"Process {pid} did not stop.")
    return False
