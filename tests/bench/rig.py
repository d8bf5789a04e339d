"""The bench rig: Chromium with the real extension, app homes, and the apps as processes.

Everything here sets up what a benchmark measures and is never timed itself. Chromium and the
local pages come from the e2e harness (same flags, same pages); an app home is a temporary
TABRELAY_HOME with the test extension paired, one MCP client, fixed free ports and an "allow
everything" rule (so no call waits for a person); ``AppProcess`` runs ``tabrelay serve`` or
the tray app (offscreen) as a separate process, the way a person runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from httpmcp import RawMcp, http_get

from e2e.agent import Agent
from e2e.chromium import EXTENSION_ID, chromium_path
from e2e.harness import (
    AppUnderTest,
    DefaultPortGuard,
    ExtensionBrowser,
    PageServer,
    free_port,
    wait_until,
)
from support.mcp import mcp_client
from support.processes import log_tail, stop_group
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore, new_token
from tabrelay.config.settings import PairedBrowser, PolicyRule, Settings, SettingsStore
from tabrelay.relay.pairing import Pairing

__all__ = ["EXTENSION_ID", "AppHome", "AppProcess", "PageServer", "extension_browser"]

CLIENT = "bench"
TABRELAY = Path(sys.executable).with_name("tabrelay")


class RigError(Exception):
    """Something the benchmarks need is missing or did not start."""


@dataclass(frozen=True)
class AppHome:
    """A TABRELAY_HOME prepared for benchmarking."""

    root: Path
    paths: Paths
    token: str  # the MCP client's bearer token
    relay_port: int
    mcp_port: int

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        paired: tuple[str, ...] = (EXTENSION_ID,),
        relay_port: int | None = None,
        mcp_port: int | None = None,
        relay_token: str | None = None,
    ) -> AppHome:
        """Pair ``paired``, allow every tool, create the client; fixed free ports by default.

        Each paired extension gets a browser pairing with ``relay_token`` as its credential (a
        new one if not given, for scripted extensions), and may also pair itself once (a real
        extension in a fresh profile fetches its own). Homes that one Chromium visits in turn
        share ``relay_token``: the extension keeps the credential it fetched, as with one
        install.
        """
        root.mkdir(parents=True, exist_ok=True)
        paths = Paths.resolve({"TABRELAY_HOME": str(root)})
        relay_port = free_port() if relay_port is None else relay_port
        mcp_port = free_port() if mcp_port is None else mcp_port
        store = SettingsStore(paths.settings_file)

        tokens = TokenStore.open(paths)
        pairings = [PairedBrowser(id=f"b-bench{n}", extension_id=i) for n, i in enumerate(paired)]
        for pairing in pairings:
            tokens.create_browser_credential(pairing.id, value=relay_token or new_token())

        def prepare(settings: Settings) -> None:
            settings.relay_port = relay_port
            settings.mcp_port = mcp_port
            settings.pairings = pairings
            # The person allowed everything ahead of time: latency, not approval, is measured.
            settings.policy_rules = [PolicyRule(tool="*", decision="allow")]

        store.update(prepare)
        for extension_id in paired:
            Pairing(store, tokens).grant(extension_id)
        token = ClientTokens(store, tokens).add(CLIENT).token
        return cls(root, paths, token, relay_port, mcp_port)

    @property
    def relay_token(self) -> str:
        """The newest browser credential (the real extension's, once it paired itself)."""
        settings = SettingsStore(self.paths.settings_file).load()
        [*_, newest] = [p.id for p in settings.pairings]
        token = TokenStore.open(self.paths).browser_credential(newest)
        assert token is not None
        return token

    @property
    def mcp_base(self) -> str:
        return f"http://127.0.0.1:{self.mcp_port}"

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ, TABRELAY_HOME=str(self.root), **extra)
        env.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        return env


class AppProcess:
    """``tabrelay serve`` (``gui=False``) or the tray app (``gui=True``): with Qt offscreen
    (no tray, so the dashboard opens), or on ``display``, an X display with a tray."""

    def __init__(self, home: AppHome, *, gui: bool, display: str | None = None) -> None:
        self.home = home
        self.gui = gui
        self.display = display
        self.process: subprocess.Popen[bytes] | None = None
        self.spawned_at = 0.0
        self.log_path = home.root / ("gui.log" if gui else "serve.log")

    @property
    def label(self) -> str:
        if not self.gui:
            return "tabrelay serve"
        return "tray app, in a tray (Xvfb)" if self.display else "tray app (qasync)"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def spawn(self) -> None:
        if not TABRELAY.exists():
            raise RigError(f"{TABRELAY} is missing: install the package (make bench does)")
        argv = [str(TABRELAY)] if self.gui else [str(TABRELAY), "serve"]
        extra = {"QT_QPA_PLATFORM": "offscreen"} if self.gui else {}
        if self.gui and self.display:
            # No session bus: Qt would autolaunch a dbus-daemon; the tray falls back to XEmbed.
            extra = {
                "QT_QPA_PLATFORM": "xcb",
                "DISPLAY": self.display,
                "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
            }
        with self.log_path.open("ab") as log:
            self.spawned_at = time.perf_counter()
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.home.env(**extra),
                start_new_session=True,
            )

    async def wait_ready(self, *, timeout: float = 30.0) -> dict[str, float]:
        """Seconds from spawn until the relay's /healthz answers 200 and until an MCP request
        (initialize) is answered; polled every 5 ms."""
        assert self.process is not None
        relay_at = mcp_at = 0.0
        deadline = time.perf_counter() + timeout
        while not (relay_at and mcp_at):
            if self.process.poll() is not None:
                raise RigError(f"{self.label} exited early: {self.log_tail()}")
            if time.perf_counter() > deadline:
                raise RigError(f"{self.label} not ready within {timeout:g} s: {self.log_tail()}")
            if not relay_at:
                with contextlib.suppress(OSError):
                    status, _ = await http_get(self.home.relay_port, "/healthz")
                    if status == 200:
                        relay_at = time.perf_counter()
            if not mcp_at:
                with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                    async with RawMcp(self.home.mcp_port, self.home.token) as client:
                        await client.initialize()
                        mcp_at = time.perf_counter()
            await asyncio.sleep(0.005)
        return {"relay": relay_at - self.spawned_at, "mcp": mcp_at - self.spawned_at}

    async def browsers(self) -> int:
        status, body = await http_get(self.home.relay_port, "/healthz")
        return int(json.loads(body)["browsers"]) if status == 200 else 0

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    async def stop(self) -> None:
        if self.process is not None:
            await asyncio.to_thread(stop_group, self.process, grace=15)


@asynccontextmanager
async def app_process(home: AppHome, *, gui: bool) -> AsyncIterator[AppProcess]:
    app = AppProcess(home, gui=gui)
    app.spawn()
    try:
        yield app
    finally:
        await app.stop()


@asynccontextmanager
async def tray_display() -> AsyncIterator[str | None]:
    """An X display (Xvfb) with a system tray (trayer), or ``None`` where either is missing
    (``make bench`` installs Xvfb; trayer comes with the screenshot tools)."""
    xvfb, trayer = shutil.which("Xvfb"), shutil.which("trayer")
    if xvfb is None or trayer is None:
        yield None
        return
    number = next(
        n for n in range(90, 200)
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists()
    )  # fmt: skip
    display = f":{number}"
    quiet = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
    }
    server = subprocess.Popen(
        [xvfb, display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        start_new_session=True,
        **quiet,  # type: ignore[call-overload]
    )
    tray: subprocess.Popen[bytes] | None = None
    try:
        await wait_for(
            lambda: Path(f"/tmp/.X11-unix/X{number}").exists(), timeout=10, message="Xvfb"
        )
        tray = subprocess.Popen(
            [trayer], env={**os.environ, "DISPLAY": display}, start_new_session=True, **quiet
        )
        await asyncio.sleep(1.0)  # trayer takes the tray selection; nothing to poll for
        yield display
    finally:
        for process in (tray, server):
            if process is not None and process.poll() is None:
                process.terminate()
                await asyncio.to_thread(process.wait)


def require_chromium() -> str:
    binary = chromium_path()
    if binary is None:
        raise RigError("Debian's Chromium is not installed (/usr/bin/chromium); make bench does")
    return binary


@asynccontextmanager
async def extension_browser(relay_port: int) -> AsyncIterator[ExtensionBrowser]:
    """Chromium with a fresh profile and the extension pointed at ``relay_port``."""
    async with DefaultPortGuard():
        browser = await ExtensionBrowser.launch(require_chromium())
        try:
            await browser.set_relay_port(relay_port)
        except BaseException:
            await browser.close()
            raise
    try:
        yield browser
    finally:
        await browser.close()


@dataclass(frozen=True)
class InProcess:
    app: AppUnderTest
    chromium: ExtensionBrowser
    agent: Agent  # the MCP SDK client, named "bench"


@asynccontextmanager
async def app_in_process(directory: Path) -> AsyncIterator[InProcess]:
    """The app in this process with a fresh home in ``directory``, Chromium with the
    extension connected to it, and an MCP client."""
    home = AppHome.create(directory)
    async with (
        AppUnderTest(home.paths, paired=(EXTENSION_ID,)) as app,
        extension_browser(app.port) as chromium,
        mcp_client(app.harness.base_mcp(), home.token, name="bench") as client,
    ):
        await wait_for(lambda: app.browsers(), timeout=20, message="the extension")
        yield InProcess(app, chromium, Agent(client))


async def no_standing_rules(app: AppUnderTest) -> None:
    """Take away the bench home's "allow everything": the person is asked as if new."""

    def clear(settings: Settings) -> None:
        settings.policy_rules = []

    await asyncio.to_thread(app.harness.core.settings_store.update, clear)


async def wait_for(condition: Any, *, timeout: float, message: str) -> Any:
    return await wait_until(condition, timeout=timeout, interval=0.02, message=message)
