"""``tabrelay doctor``: what works, what does not, and how to fix it.

Each check returns a ``Check`` with a status, what it found and, when something is wrong, the
fix in one sentence. Checks only read; the one exception is the keychain probe, which writes
and deletes a throwaway entry. Never prints a secret.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import shutil
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from tabrelay import __version__
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore
from tabrelay.config.settings import SettingsStore
from tabrelay.errors import TabrelayError
from tabrelay.protocol.constants import HEALTH_PATH

Status = Literal["ok", "info", "warn", "fail"]

BROWSER_COMMANDS = (
    "google-chrome",
    "google-chrome-stable",
    "chromium",
    "chromium-browser",
    "microsoft-edge",
    "brave-browser",
)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def running_instance(paths: Paths) -> dict[str, object] | None:
    """The running app's instance record if its relay answers ``/healthz``, else ``None``."""
    try:
        info = json.loads(paths.instance_file.read_text(encoding="utf-8"))
        port = int(info["relay_port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{HEALTH_PATH}", timeout=2) as reply:
            health = json.loads(reply.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if not isinstance(health, dict) or health.get("status") != "ok":
        return None
    return {**info, "browsers": health.get("browsers", 0)}


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether Tabrelay could listen on ``port`` now: bound as the servers bind it (address
    reuse outside Windows), so a port that just closed (TIME_WAIT) counts as free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if os.name != "nt":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


LOOK_ONLY = partial(TokenStore.open, decide=False)  # doctor looks; the app decides


class Doctor:
    def __init__(
        self,
        paths: Paths,
        *,
        open_tokens: Callable[[Paths], TokenStore] = LOOK_ONLY,
    ):
        self.paths = paths
        self._open_tokens = open_tokens

    def run(self) -> list[Check]:
        store = SettingsStore(self.paths.settings_file)
        checks = [self._version(), self._settings(store), *self._secrets(), *self._permissions()]
        settings = store.current
        instance = running_instance(self.paths)
        checks.append(self._running(instance))
        if instance is None:
            checks.append(self._port("relay port", settings.relay_port, "relay_port"))
            checks.append(self._port("MCP port", settings.mcp_port, "mcp_port"))
        checks.append(
            Check("paired browsers", "ok", f"{len(settings.pairings)} paired")
            if settings.pairings
            else Check(
                "paired browsers",
                "warn",
                "no browser is paired yet",
                "install the Tabrelay extension, open its popup and approve it in the tray",
            )
        )
        checks.append(self._browsers())
        checks.extend(self._environment())
        return checks

    def _version(self) -> Check:
        return Check(
            "version",
            "info",
            f"Tabrelay {__version__}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}",
        )

    def _settings(self, store: SettingsStore) -> Check:
        store.load()
        if store.problems:
            return Check(
                "settings",
                "warn",
                " ".join(store.problems),
                "check the .bad file, fix it and move it back, or keep the defaults",
            )
        return Check("settings", "ok", str(self.paths.settings_file))

    def _secrets(self) -> list[Check]:
        try:
            tokens = self._open_tokens(self.paths)
            if tokens.place is None and tokens.problem is None:
                return [Check("secrets", "info", tokens.description)]
            if tokens.problem is None:
                with contextlib.suppress(KeychainUnavailable):  # kept in tokens.problem
                    tokens.client_token("doctor-probe")  # a read proves the store answers
        except TabrelayError as exc:
            return [Check("secrets", "fail", exc.message, "see the message; then run doctor again")]
        if tokens.problem is not None:
            return [
                Check(
                    "secrets",
                    "fail",
                    f"{tokens.description}: {tokens.problem.message}",
                    "unlock your keychain and run doctor again, or keep the secrets in a file: "
                    "`tabrelay secrets use file`",
                )
            ]
        detail = tokens.description
        checks = [
            Check(
                "secrets",
                "warn",
                detail,
                "install and unlock a keychain (GNOME Keyring, KWallet, KeePassXC), then "
                "`tabrelay secrets use keychain`, to keep tokens out of files",
            )
            if tokens.insecure
            else Check("secrets", "ok", detail)
        ]
        checks.extend(Check("secrets", "warn", p) for p in tokens.all_problems())
        return checks

    def _permissions(self) -> list[Check]:
        """A warning when others may read the app's files; nothing when all is private."""
        loose = self.paths.find_loose()
        if not loose:
            return []
        shown = ", ".join(str(p) for p in loose[:3])
        more = f" and {len(loose) - 3} more" if len(loose) > 3 else ""
        home = self.paths.home
        roots = " ".join(shlex.quote(str(r)) for r in ((home,) if home else self.paths.own_dirs))
        return [
            Check(
                "permissions",
                "warn",
                f"other users may read {shown}{more}",
                f"run `chmod -R go= {roots}` (with sudo if another user owns them)",
            )
        ]

    def _running(self, instance: dict[str, object] | None) -> Check:
        if instance is None:
            return Check("app", "info", "Tabrelay is not running", "start it with `tabrelay`")
        return Check(
            "app",
            "ok",
            f"running (pid {instance['pid']}, relay port {instance['relay_port']}, "
            f"{instance['browsers']} browser(s) connected)",
        )

    def _port(self, name: str, port: int, setting: str) -> Check:
        if port == 0 or port_is_free(port):
            return Check(name, "ok", f"{port} is free")
        return Check(
            name,
            "fail",
            f"port {port} is used by another program",
            f"quit that program or set {setting} in {self.paths.settings_file}",
        )

    def _browsers(self) -> Check:
        found = [c for c in BROWSER_COMMANDS if shutil.which(c)]
        if found:
            return Check("browsers", "ok", "found " + ", ".join(found))
        return Check(
            "browsers",
            "info",
            "no Chrome, Chromium, Edge or Brave on PATH",
            "install one, then the Tabrelay extension (docs/install.md)",
        )

    def _environment(self) -> list[Check]:
        checks = []
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            checks.append(
                Check(
                    "user",
                    "warn",
                    "running as root",
                    "run Tabrelay as the person whose browser it drives, not as root",
                )
            )
        if sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        ):
            checks.append(
                Check(
                    "display",
                    "info",
                    "no display: the tray app cannot show here",
                    "`tabrelay serve` runs the same core headless",
                )
            )
        return checks
