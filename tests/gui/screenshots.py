"""``make screenshots``: the real tray app under Xvfb, with a tray host and real Chromium.

It starts Xvfb, openbox (window frames) and trayer (the system tray), a throwaway Tabrelay home
with its own GNOME Keyring, then the tray app itself through ``tabrelay.app.main`` with a
driver that plays a short session: Chromium with the unpacked extension asks to pair (the
pairing dialog), opens the local test pages, an MCP client lists tabs, reads a page, takes a
screenshot, navigates (approved in the dialog) and tries JavaScript (denied). Along the way it
saves PNGs into ``docs/screenshots/``: the tray menu, the dashboard's Tabs, Events and
Commands pages, the approval dialog and the pairing dialog. Run inside ``dbus-run-session``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support.processes import stop_group  # noqa: E402

OUT = REPO / "docs" / "screenshots"
SCREEN = (1440, 900)
CONVERT = "/usr/bin/convert"  # ImageMagick's; ENVIRONMENT.md: not a stand-in on PATH


def log(message: str) -> None:
    print(f"screenshots: {message}", file=sys.stderr, flush=True)


def free_display() -> int:
    for number in range(90, 200):
        if (
            not Path(f"/tmp/.X{number}-lock").exists()
            and not Path(f"/tmp/.X11-unix/X{number}").exists()
        ):
            return number
    raise RuntimeError("no free X display number")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def process(argv: list[str], **kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A helper process in its own process group, ended as a whole."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        **kwargs,
    )
    try:
        yield proc
    finally:
        stop_group(proc, grace=5)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.05)


def unlock_keyring(env: dict[str, str]) -> None:
    """A real Secret Service for the throwaway home, so the app keeps tokens in a keychain."""
    if not shutil.which("gnome-keyring-daemon") or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        log("no gnome-keyring or D-Bus session: tokens go to the file store")
        return
    result = subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input=b"screenshots",
        capture_output=True,
        env=env,
        timeout=20,
        check=False,
    )
    for line in result.stdout.decode().splitlines():
        key, _, value = line.partition("=")
        if key and value:
            os.environ[key] = value


async def capture(
    display: str, name: str, *, window: Any = None, rect: tuple[int, int, int, int] | None = None
) -> Path:
    """Save a window (with its frame) or a screen region as docs/screenshots/NAME.png."""
    # Let Qt paint and the window manager settle. Never processEvents() here: under qasync
    # that would step other asyncio tasks from inside this one.
    await asyncio.sleep(0.8)
    target = OUT / f"{name}.png"
    if window is not None:
        # The frame as the window manager drew it (title bar included), read once it settled.
        geometry = window.frameGeometry()
        rect = (geometry.x(), geometry.y(), geometry.width(), geometry.height())
    assert rect is not None
    x, y, width, height = rect
    x, y = max(0, x), max(0, y)
    width, height = min(width, SCREEN[0] - x), min(height, SCREEN[1] - y)
    xwd = await asyncio.create_subprocess_exec(
        "xwd", "-root", "-silent", "-display", display, stdout=subprocess.PIPE
    )
    raw, _ = await xwd.communicate()
    convert = await asyncio.create_subprocess_exec(
        CONVERT,
        "xwd:-",
        "-crop",
        f"{width}x{height}+{x}+{y}",
        "+repage",
        "-strip",
        f"png:{target}",
        stdin=subprocess.PIPE,
    )
    await convert.communicate(raw)
    if convert.returncode != 0 or not target.is_file():
        raise RuntimeError(f"could not save {target}")
    log(f"saved {target.relative_to(REPO)}")
    return target


async def until(condition: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(0.1)


def session(display: str, pages: Any) -> Callable[[Any, Any], Awaitable[None]]:
    """The driver: what a person and an agent do, with a screenshot at each step."""

    async def drive(core: Any, ui: Any) -> None:
        from PySide6.QtCore import QPoint

        from e2e.chromium import chromium_path
        from e2e.harness import DefaultPortGuard, ExtensionBrowser
        from support.mcp import mcp_client

        await until(lambda: ui.tray.icon.geometry().width() > 0, "the tray icon shows")
        ui.notifier.tray = None  # keep notification balloons out of the pictures
        dashboard = ui.dashboard
        dashboard.hide()

        binary = chromium_path()
        if binary is None:
            raise RuntimeError("Chromium is missing: `make system-test` installs it")
        async with DefaultPortGuard():
            browser = await ExtensionBrowser.launch(binary)
        try:
            shown: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            ui.pairing_approver.dialog_shown.connect(lambda d: shown.done() or shown.set_result(d))
            await browser.set_relay_port(core.relay.port)
            pairing = await asyncio.wait_for(shown, 30)
            pairing.move(470, 300)
            await until(lambda: pairing.allow_button.isEnabled(), "Allow wakes up")
            await capture(display, "pairing-dialog", window=pairing)
            pairing.allow_button.click()
            extension = await until(lambda: core.registry.all(), "the extension connects", 40)
            relay_browser = extension[0]

            index = await browser.open_page(pages.url("index.html"))
            extra = REPO / "tests" / "e2e" / "pages" / "tools"
            for page_name in ("article.html", "form.html"):
                if (extra / page_name).is_file():
                    await browser.open_page(pages.url(f"tools/{page_name}"))
            for target in await browser.page_targets():
                if target["url"] == "about:blank":  # the window's first, empty tab
                    await browser.cdp.send("Target.closeTarget", {"targetId": target["targetId"]})
            await relay_browser.list_tabs()
            index_tab = await browser.tab_id_of(pages.url("index.html"))

            new = await asyncio.to_thread(core.clients.add, "claude-code")
            await until(lambda: core.client_tokens().get("claude-code") == new.token, "token")
            base = f"http://127.0.0.1:{core.endpoint.port}"
            async with mcp_client(base, new.token, name="claude-code") as client:
                await client.call_tool("browser_status", {})
                await client.call_tool("browser_list_tabs", {})
                await client.call_tool("browser_get_content", {"tab_id": index_tab})
                await client.call_tool("browser_screenshot", {"tab_id": index_tab})

                # The approval dialog, with a second request queued behind it.
                dialog_shown: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                ui.approver.dialog_shown.connect(
                    lambda d: dialog_shown.done() or dialog_shown.set_result(d)
                )
                navigate = asyncio.ensure_future(
                    client.call_tool(
                        "browser_navigate",
                        {"tab_id": index_tab, "url": pages.url("second.html")},
                    )
                )
                dialog = await asyncio.wait_for(dialog_shown, 20)
                evaluate = asyncio.ensure_future(
                    client.call_tool(
                        "browser_evaluate",
                        {"tab_id": index_tab, "expression": "document.cookie.length"},
                    )
                )
                await until(lambda: ui.approver.waiting == 1, "the second request queues")
                dialog.move(380, 150)
                await until(lambda: dialog.allow_enabled, "Allow wakes up")
                await capture(display, "approval-dialog", window=dialog)
                second: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                ui.approver.dialog_shown.connect(lambda d: second.done() or second.set_result(d))
                dialog.once_button.click()
                await asyncio.wait_for(navigate, 20)
                (await asyncio.wait_for(second, 20)).deny_button.click()
                await asyncio.wait_for(evaluate, 20)

                # Events from an attached tab: attach from the dashboard, then reload.
                await core.attach_tab(relay_browser.id, index_tab)
                await index.session.send("Page.reload")
                await client.call_tool("browser_list_tabs", {})

            # The tray menu, opened at the icon.
            ui.tray.menu.aboutToShow.emit()
            icon = ui.tray.icon.geometry()
            menu = ui.tray.menu
            menu.popup(QPoint(icon.x(), icon.y() + icon.height() + 2))
            await until(lambda: menu.isVisible(), "the menu opens")
            menu_frame = menu.frameGeometry()
            left = min(menu_frame.x(), icon.x()) - 260
            await capture(
                display, "tray-menu", rect=(left, 0, SCREEN[0] - left, menu_frame.bottom() + 24)
            )
            menu.hide()

            dashboard.resize(1180, 700)
            dashboard.move(120, 80)
            dashboard.show_page("Tabs")
            dashboard.bring_up()
            tabs = dashboard.tabs_page
            tabs.refresh()
            tabs.select(relay_browser.id, index_tab)
            await capture(display, "dashboard-tabs", window=dashboard)

            dashboard.show_page("Events")
            events = dashboard.events_page
            await until(lambda: events.model.rowCount() > 5, "events arrive", 20)
            events.follow_box.setChecked(False)
            for row in range(events.model.rowCount()):
                event = events.model.event_at(row)
                if event is not None and event.method == "Network.requestWillBeSent":
                    events.view.selectRow(row)
                    events.view.scrollTo(events.model.index(row, 0))
                    break
            await capture(display, "dashboard-events", window=dashboard)

            dashboard.show_page("Commands")
            commands = dashboard.commands_page
            await commands.reload()
            commands.view.selectRow(2)  # the navigation the person approved
            await capture(display, "dashboard-commands", window=dashboard)
        finally:
            await browser.close()

    return drive


def main() -> int:
    for tool in ("Xvfb", "openbox", "trayer", "xwd", CONVERT):
        if not shutil.which(tool):
            log(f"{tool} is missing: run `make screenshots`, which installs it")
            return 1
    OUT.mkdir(parents=True, exist_ok=True)
    number = free_display()
    display = f":{number}"
    scratch = Path(tempfile.mkdtemp(prefix="tabrelay-screenshots-"))
    env = dict(os.environ)
    env.update(
        {
            "DISPLAY": display,
            "HOME": str(scratch / "home"),
            "XDG_RUNTIME_DIR": str(scratch / "runtime"),
            "XDG_DATA_HOME": str(scratch / "data"),
            "XDG_CONFIG_HOME": str(scratch / "config"),
            "TABRELAY_HOME": str(scratch / "tabrelay"),
            "QT_QPA_PLATFORM": "xcb",
        }
    )
    env.pop("WAYLAND_DISPLAY", None)
    env.pop("PYTHON_KEYRING_BACKEND", None)
    for key in ("HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        Path(env[key]).mkdir(parents=True, mode=0o700, exist_ok=True)
    os.environ.update(env)
    os.environ.pop("WAYLAND_DISPLAY", None)
    os.environ.pop("PYTHON_KEYRING_BACKEND", None)
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(
                process(
                    [
                        "Xvfb",
                        display,
                        "-screen",
                        "0",
                        f"{SCREEN[0]}x{SCREEN[1]}x24",
                        "-nolisten",
                        "tcp",
                    ],
                    env=env,
                )
            )
            wait_for(lambda: Path(f"/tmp/.X11-unix/X{number}").exists(), "Xvfb starts")
            stack.enter_context(process(["openbox", "--sm-disable"], env=env))
            time.sleep(0.5)
            if shutil.which("xsetroot"):  # a calm desktop behind the tray (optional)
                subprocess.run(["xsetroot", "-solid", "#5f6b7a"], env=env, check=False)
            stack.enter_context(
                process(
                    [
                        "trayer",
                        "--edge",
                        "top",
                        "--align",
                        "right",
                        "--widthtype",
                        "request",
                        "--height",
                        "28",
                        "--transparent",
                        "false",
                        "--tint",
                        "0x202124",
                        "--SetDockType",
                        "true",
                        "--SetPartialStrut",
                        "true",
                        "--expand",
                        "true",
                        "--padding",
                        "6",
                    ],
                    env=env,
                )
            )
            time.sleep(1.0)  # trayer claims the tray selection
            unlock_keyring(env)

            from e2e.harness import PageServer
            from tabrelay.app import main as app_main
            from tabrelay.config.paths import Paths
            from tabrelay.config.settings import Settings, SettingsStore

            paths = Paths.resolve()

            def ports(settings: Settings) -> None:
                settings.relay_port = free_port()
                settings.mcp_port = free_port()

            SettingsStore(paths.settings_file).update(ports)
            pages = stack.enter_context(PageServer())
            code = app_main(paths, driver=session(display, pages))
            log(f"the app exited with {code}; logs in {paths.log_dir}")
            return code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
