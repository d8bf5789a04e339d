"""The first run as a person meets it, on a Debian desktop: Xvfb with openbox and a tray,
GNOME Keyring unlocked at login, the app started as `make run` starts it (`.venv/bin/tabrelay`,
default ports, a fresh home) and Chromium with the unpacked extension.

The person's part is played with the keyboard and mouse through ``xdotool``, on the real
windows: the pairing dialog (one click on Allow), the keychain's unlock prompt (Escape). The
app, the CLI and the stdio bridge run as separate processes, as they do for a person.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from e2e.chromium import chromium_path
from e2e.harness import ExtensionBrowser, wait_until
from support.desktop import DESKTOP_MISSING, DesktopSession
from support.mcp import mcp_client, text_of
from support.processes import log_tail, stop_group
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore
from tabrelay.protocol.constants import DEFAULT_MCP_PORT, DEFAULT_RELAY_PORT

TABRELAY = str(Path(sys.executable).with_name("tabrelay"))  # what `make run` starts
CHROMIUM = chromium_path()
PAIRING_TITLE = "^Pair a browser extension"
UNLOCK_PROMPT = "^Unlock "  # GNOME Keyring's "Unlock Login Keyring"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(420),
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's Chromium is not installed"),
    pytest.mark.skipif(DESKTOP_MISSING is not None, reason=str(DESKTOP_MISSING)),
]


def _port_taken(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class Person:
    """The person at this desktop: the app they started, their terminal, their clicks."""

    def __init__(self, desk: DesktopSession, home: Path) -> None:
        self.desk = desk
        self.paths = Paths.resolve({"TABRELAY_HOME": str(home)})
        # PYTHONFAULTHANDLER: a hung app dumps its threads' stacks on SIGABRT (see below).
        self.env = desk.env | {"TABRELAY_HOME": str(home), "PYTHONFAULTHANDLER": "1"}
        self.app: subprocess.Popen[bytes] | None = None

    def start_app(self) -> None:
        self.desk.env = self.env
        self.app = self.desk.start(TABRELAY, [])

    def quit_app(self) -> None:
        assert self.app is not None
        stop_group(self.app, grace=15)
        assert self.app.returncode == 0, self.app_output()
        self.app = None

    def app_output(self) -> str:
        return log_tail(self.desk.logs / "tabrelay.out", 120)

    def app_log(self) -> str:
        return (
            self.paths.log_file.read_text(errors="replace") if self.paths.log_file.exists() else ""
        )

    async def app_says(self, pattern: str, *, after: int = 0, timeout: float = 30) -> None:
        await wait_until(
            lambda: re.search(pattern, self.app_log()[after:]),
            timeout=timeout,
            message=f"the app's log says {pattern!r}",
        )

    def command(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        """`tabrelay ARGS` typed in a terminal of the desktop (the launcher's command)."""
        return subprocess.run(
            [TABRELAY, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )

    async def click_allow(self, dialog: str) -> None:
        """A click on the dialog's Allow button, the bottom-right button of its window, once
        it has woken up (0.8 s after the dialog shows; a click before that does nothing, so
        the person clicks again)."""
        await asyncio.sleep(1.0)
        for _ in range(5):
            self.desk.click(dialog, right=50, bottom=26)
            with contextlib.suppress(TimeoutError):
                await wait_until(
                    lambda: dialog not in self.desk.window_ids(PAIRING_TITLE),
                    timeout=2,
                    message="the dialog closes",
                )
                return
        raise AssertionError("Allow could not be clicked")

    def tray_icon(self) -> bool:
        return self.desk.tray_holds("Tabrelay")


@contextlib.asynccontextmanager
async def extension_browser() -> AsyncIterator[ExtensionBrowser]:
    assert CHROMIUM is not None
    browser = await ExtensionBrowser.launch(CHROMIUM)
    try:
        yield browser
    finally:
        await browser.close()


async def test_from_a_fresh_home_to_an_agent_call_and_through_a_locked_keychain(
    tmp_path: Path,
) -> None:
    taken = [p for p in (DEFAULT_RELAY_PORT, DEFAULT_MCP_PORT) if _port_taken(p)]
    if taken:
        pytest.skip(
            f"ports {taken} are in use (a Tabrelay running here?): the first run needs them"
        )
    with DesktopSession(tmp_path) as desk:
        person = Person(desk, tmp_path / "tabrelay")
        try:
            await _first_run(desk, person)
        except BaseException:
            if person.app is not None and person.app.poll() is None:
                person.app.send_signal(signal.SIGABRT)  # where it is stuck, if it is
                with contextlib.suppress(subprocess.TimeoutExpired):
                    person.app.wait(10)
            print("--- the app's log ---", person.app_log()[-4000:], sep="\n")
            print("--- the app's output ---", person.app_output(), sep="\n")
            raise


async def _first_run(desk: DesktopSession, person: Person) -> None:
    started = time.monotonic()
    person.start_app()
    await person.app_says(r"Tabrelay ready in")
    await wait_until(person.tray_icon, timeout=20, message="the tray icon shows")
    assert "secrets live in the keychain" in person.app_log()

    # --- the extension loads, finds the app by itself and asks to pair: one click -------
    async with extension_browser() as browser:
        dialog = await asyncio.to_thread(desk.window, PAIRING_TITLE)
        assert desk.active_window() != dialog, "the dialog does not take the keyboard"
        popup = await browser.open_popup()
        try:
            assert await popup.text_of("#headline") == "Approve this browser in the Tabrelay app"
        finally:
            await popup.close()
        await person.click_allow(dialog)
        state = await browser.wait_for_state("connected", timeout=20)
        assert state["port"] == DEFAULT_RELAY_PORT
        paired_at = time.monotonic() - started
        credential = await browser.stored_token_digest()
        assert desk.window_ids(PAIRING_TITLE) == []

        # --- a client made with the CLI while the app runs works at once ----------------
        made = person.command("client", "add", "agent")
        assert made.returncode == 0, made.stderr
        token = re.search(r"token \(shown only now\):\s+(\S+)", made.stdout)
        assert token is not None, made.stdout
        await browser.open_page("about:blank")
        async with mcp_client(f"http://127.0.0.1:{DEFAULT_MCP_PORT}", token[1]) as agent:
            status = await agent.call_tool("browser_status", {})
            assert not status.is_error and "Chromium" in text_of(status), text_of(status)
        first_call_at = time.monotonic() - started
        bridge = StdioServerParameters(
            command=TABRELAY, args=["mcp-stdio", "--client", "agent"], env=person.env
        )
        async with Client(bridge) as over_stdio:
            tabs = await over_stdio.call_tool("browser_list_tabs", {})
            assert not tabs.is_error, text_of(tabs)

        # --- restart with the keychain locked; the person cancels its prompt ------------
        person.quit_app()
        assert person.tray_icon() is False
        desk.lock_keyring()
        logged = len(person.app_log())
        person.start_app()
        prompt = await asyncio.to_thread(desk.window, UNLOCK_PROMPT, timeout=30)
        # Tabrelay names the prompt as its own once it has waited a second for it.
        await asyncio.to_thread(desk.window, "^Your keychain — Tabrelay$", timeout=10)
        desk.keys(prompt, "Escape")
        await person.app_says(r"keychain is locked", after=logged)
        await wait_until(person.tray_icon, timeout=20, message="the tray icon shows")

        # The CLI and the bridge find the secrets where the app does, and say it is locked.
        where = person.command("secrets", "where", timeout=20)
        assert where.returncode == 1
        assert where.stdout.startswith("Secrets live in: keychain"), where.stdout
        assert "keychain is locked" in where.stdout
        assert desk.window_ids(UNLOCK_PROMPT) == [], "a look, not a second prompt"
        # An MCP client starting the bridge: its read asks too, and is cancelled again.
        refused = asyncio.create_task(
            asyncio.to_thread(person.command, "mcp-stdio", "--client", "agent")
        )
        prompt = await asyncio.to_thread(desk.window, UNLOCK_PROMPT, timeout=30)
        desk.keys(prompt, "Escape")
        bridge_said = await asyncio.wait_for(refused, 30)
        assert bridge_said.returncode != 0
        assert "keychain is locked" in bridge_said.stderr, bridge_said.stderr
        settings = SettingsStore(person.paths.settings_file).load()
        assert settings.secrets_place == "keychain"
        assert not person.paths.secrets_file.exists(), "no second store appeared"

        # The browser waits (it is not told to pair again) ...
        state = await browser.relay_state()
        assert state is not None and state["state"] != "rejected", state
        assert await browser.stored_token_digest() == credential
        # ... and once the person unlocks their keychain (for another program: the app
        # notices by itself), it is back with its credential, without a click in Tabrelay.
        await asyncio.to_thread(desk.unlock_keyring)
        await browser.wait_for_state("connected", timeout=60)
        assert await browser.stored_token_digest() == credential
        assert len(SettingsStore(person.paths.settings_file).load().pairings) == 1
        async with mcp_client(f"http://127.0.0.1:{DEFAULT_MCP_PORT}", token[1]) as agent:
            tabs = await agent.call_tool("browser_list_tabs", {})
            assert not tabs.is_error and "about:blank" in text_of(tabs), text_of(tabs)
    person.quit_app()
    print(f"first run: paired {paired_at:.1f} s, first agent call {first_call_at:.1f} s")
