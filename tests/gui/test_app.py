"""The app as a process: ``tabrelay`` starts the tray app, a second launch hands over to it, it
stops cleanly on SIGTERM, and where no GUI can run it says so in one line and runs headless.
The crash hook logs and shows what nobody caught."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.conftest import expect, within
from tabrelay.config.paths import Paths
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.errors import StartupError
from tabrelay.system.doctor import running_instance
from tabrelay.ui.crash import CrashHandler
from tabrelay.ui.single_instance import InstanceServer, instance_name

START_TIMEOUT = 30.0


def on_free_ports(paths: Paths) -> None:
    def free(settings: Settings) -> None:
        settings.relay_port = 0
        settings.mcp_port = 0

    SettingsStore(paths.settings_file).update(free)


def launch(paths: Paths, **env: str | None) -> subprocess.Popen[str]:
    environment = dict(os.environ)
    environment["TABRELAY_HOME"] = str(paths.config_dir.parent)
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return subprocess.Popen(
        [sys.executable, "-m", "tabrelay"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_running(paths: Paths, process: subprocess.Popen[str]) -> dict[str, object]:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"exited early: {process.communicate()[1][-2000:]}")
        instance = running_instance(paths)
        if instance is not None:
            return instance
        time.sleep(0.1)
    raise TimeoutError("the app did not come up")


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        _out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _out, err = process.communicate()
    return process.returncode, err


@pytest.fixture
def app_home(home: Paths) -> Paths:
    on_free_ports(home)
    return home


def test_tabrelay_starts_the_tray_app_and_a_second_launch_hands_over(app_home: Paths) -> None:
    started = time.monotonic()
    first = launch(app_home, QT_QPA_PLATFORM="offscreen")
    try:
        instance = wait_running(app_home, first)
        print(f"\napp ready (endpoint answering) {time.monotonic() - started:.2f} s after exec")
        assert instance["pid"] == first.pid
        second = launch(app_home, QT_QPA_PLATFORM="offscreen")
        assert second.wait(timeout=20) == 0
        assert "already running; its dashboard is shown" in second.communicate()[1]
        assert first.poll() is None
    finally:
        code, err = stop(first)
    assert code == 0, err[-2000:]
    assert not app_home.instance_file.exists()
    log = app_home.log_file.read_text(encoding="utf-8")
    assert "Tabrelay ready in" in log
    assert "Traceback" not in log


def test_sigterm_stops_an_idle_tray_app_within_five_seconds(app_home: Paths) -> None:
    """Idle, the app waits in Qt's C++ loop, where a Python signal handler would not run until
    some event came: the signal must wake it."""
    process = launch(app_home, QT_QPA_PLATFORM="offscreen")
    try:
        wait_running(app_home, process)
        time.sleep(1.0)  # let it go idle
        sent = time.monotonic()
        os.killpg(process.pid, signal.SIGTERM)
        code = process.wait(timeout=20)
        stopped = time.monotonic() - sent
    finally:
        stop(process)
    assert code == 0
    assert stopped < 5.0, f"stopped {stopped:.1f} s after SIGTERM"
    assert running_instance(app_home) is None


def test_without_a_display_tabrelay_runs_headless_and_says_so(app_home: Paths) -> None:
    process = launch(app_home, QT_QPA_PLATFORM=None, DISPLAY=None, WAYLAND_DISPLAY=None)
    try:
        wait_running(app_home, process)
    finally:
        code, err = stop(process)
    assert code == 0
    assert err.splitlines()[0] == (
        "tabrelay: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); "
        "running headless instead (`tabrelay serve`)"
    )


def test_when_qt_cannot_start_tabrelay_runs_headless_and_says_so(app_home: Paths) -> None:
    # An X display that does not exist: Qt's xcb plugin fails and Qt would abort.
    assert not Path("/tmp/.X11-unix/X31999").exists()
    process = launch(app_home, QT_QPA_PLATFORM="xcb", DISPLAY=":31999", WAYLAND_DISPLAY=None)
    try:
        wait_running(app_home, process)
    finally:
        code, err = stop(process)
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("tabrelay:")]
    assert lines[0].startswith("tabrelay: the tray app cannot start here (")
    assert lines[0].endswith("running headless instead (`tabrelay serve`)")


async def test_a_second_launch_asks_the_running_app_to_show_its_dashboard(
    home: Paths, qtbot: QtBot
) -> None:
    server = InstanceServer(instance_name(home))
    assert server.listen()
    try:
        shown = expect(server.show_requested)
        asker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sys; from PySide6.QtCore import QCoreApplication; "
            "from tabrelay.ui.single_instance import ask_running_instance_to_show as ask; "
            "app = QCoreApplication([]); sys.exit(0 if ask(sys.argv[1]) else 3)",
            server.name,
        )
        await within(shown, 20)
        assert await within(asker.wait(), 20) == 0
        # Nobody listens once it is gone: a later launch becomes the app.
        server.close()
        assert InstanceServer(server.name).listen()
    finally:
        server.close()


def test_the_crash_hook_logs_and_shows_each_error_once_in_a_while(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    shown: list[tuple[str, str]] = []
    now = [0.0]
    crash = CrashHandler(
        log_file=tmp_path / "tabrelay.log",
        show=lambda title, message: shown.append((title, message)),
        clock=lambda: now[0],
    )
    caplog.set_level(logging.ERROR, logger="tabrelay.crash")
    try:
        raise ValueError("boom")
    except ValueError as error:
        crash.excepthook(type(error), error, error.__traceback__)
        crash.excepthook(type(error), error, error.__traceback__)
    assert len(shown) == 1
    title, message = shown[0]
    assert title == "Tabrelay hit an unexpected error"
    assert "ValueError: boom" in message and str(tmp_path / "tabrelay.log") in message
    assert "Traceback" in caplog.text and "boom" in caplog.text

    crash.report(StartupError("port 23001 is used by another program"))
    assert shown[-1] == ("Tabrelay could not start", "port 23001 is used by another program")
    now[0] = 100.0
    crash.loop_exception(asyncio.new_event_loop(), {"exception": ValueError("boom")})
    assert len(shown) == 3  # shown again once the repeat window has passed


async def test_a_headless_tabrelay_holding_the_ports_is_replaced_when_the_person_agrees(
    app_home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    from tabrelay import app

    environment = {**os.environ, "TABRELAY_HOME": str(app_home.config_dir.parent)}
    serve = subprocess.Popen(
        [sys.executable, "-m", "tabrelay", "serve"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        await asyncio.to_thread(wait_running, app_home, serve)
        asked: list[str] = []

        async def answer(icon: object, title: str, text: str, *args: object) -> int:
            asked.append(text)
            return QMessageBox.StandardButton.Yes.value

        monkeypatch.setattr(app, "_show_box", answer)
        replaced = await within(app._replace_headless(app_home, StartupError("port taken")), 30)
        assert replaced
        assert f"(process {serve.pid})" in asked[0]
        assert await within(asyncio.to_thread(serve.wait), 10) == 0
    finally:
        stop(serve)
