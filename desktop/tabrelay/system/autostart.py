"""Start Tabrelay at login (DESIGN §8): one facade, one class per platform. Off by default.

Linux gets an XDG autostart entry (``$XDG_CONFIG_HOME/autostart/tabrelay.desktop``), macOS a
LaunchAgent (``~/Library/LaunchAgents/<label>.plist``), Windows a value under
``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``. The command comes from
``launcher.tray_command()``, so an entry written from a source checkout runs that checkout's
``tabrelay`` and one written from a frozen build runs the bundle's tray executable; the icon
comes from ``resources.desktop_icon()``, resolved the same way. A portable install's
``TABRELAY_HOME`` is carried along where the platform allows. This module only writes and
removes those entries; it never decides to turn autostart on by itself.
"""

from __future__ import annotations

import importlib
import os
import plistlib
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tabrelay.config.files import atomic_write
from tabrelay.config.paths import HOME_VARIABLE
from tabrelay.errors import ConfigError
from tabrelay.system.launcher import tray_command
from tabrelay.system.resources import desktop_icon

APP_NAME = "Tabrelay"
DESKTOP_FILE = "tabrelay.desktop"
LAUNCH_AGENT_LABEL = "app.tabrelay.tray"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Tabrelay"
COMMENT = "Let AI agents use your open browser, with you in control"

# Desktop Entry Specification, "The Exec key": arguments holding these are quoted.
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


class AutostartEntry(Protocol):
    """What each platform's implementation offers the facade."""

    @property
    def location(self) -> str: ...
    def is_enabled(self) -> bool: ...
    def enable(self, command: Sequence[str], env: Mapping[str, str]) -> None: ...
    def disable(self) -> None: ...


# --- Linux ----------------------------------------------------------------------------------


def desktop_exec(argv: Sequence[str]) -> str:
    """An ``Exec=`` value for ``argv``, quoted and escaped as the Desktop Entry spec asks."""
    parts = []
    for arg in argv:
        if arg and not _RESERVED & set(arg):
            parts.append(arg)
            continue
        inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        parts.append(f'"{inner}"')
    # The string-value escape (``\\``) applies before the quoting rule; ``%`` starts a field code.
    return " ".join(parts).replace("\\", "\\\\").replace("%", "%%")


def desktop_entry(command: Sequence[str], env: Mapping[str, str], *, icon: str) -> str:
    """The text of the XDG autostart entry."""
    argv = list(command)
    if env:
        argv = ["env", *(f"{key}={value}" for key, value in sorted(env.items())), *argv]
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={APP_NAME}\n"
        f"Comment={COMMENT}\n"
        f"Exec={desktop_exec(argv)}\n"
        # Desktops skip the entry once the program is gone (an uninstalled package, THREATS I2).
        f"TryExec={command[0].replace(chr(92), chr(92) * 2)}\n"
        f"Icon={icon}\n"
        "Terminal=false\n"
        "Categories=Network;Utility;\n"
        "StartupNotify=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


class XdgAutostart:
    def __init__(self, config_home: Path, *, icon: str = "tabrelay") -> None:
        self.path = config_home / "autostart" / DESKTOP_FILE
        self.icon = icon

    @property
    def location(self) -> str:
        return str(self.path)

    def is_enabled(self) -> bool:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        # A person (or a desktop's settings app) may disable the entry without deleting it.
        lines = {line.strip().lower() for line in text.splitlines()}
        return "hidden=true" not in lines and "x-gnome-autostart-enabled=false" not in lines

    def enable(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        text = desktop_entry(command, env, icon=self.icon)
        atomic_write(self.path, text.encode("utf-8"), mode=0o644)

    def disable(self) -> None:
        _remove(self.path)


# --- macOS ----------------------------------------------------------------------------------


def launch_agent(command: Sequence[str], env: Mapping[str, str]) -> bytes:
    """The LaunchAgent plist: run once at login, as an interactive (UI) process."""
    agent: dict[str, Any] = {
        "Label": LAUNCH_AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": False,
        "ProcessType": "Interactive",
        "LimitLoadToSessionType": "Aqua",
    }
    if env:
        agent["EnvironmentVariables"] = dict(env)
    return plistlib.dumps(agent)


class LaunchAgentAutostart:
    def __init__(self, agents_dir: Path) -> None:
        self.path = agents_dir / f"{LAUNCH_AGENT_LABEL}.plist"

    @property
    def location(self) -> str:
        return str(self.path)

    def is_enabled(self) -> bool:
        return self.path.is_file()

    def enable(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        atomic_write(self.path, launch_agent(command, env), mode=0o644)

    def disable(self) -> None:
        _remove(self.path)


# --- Windows --------------------------------------------------------------------------------


class RunKey(Protocol):
    """The values of ``HKCU\\...\\Run``; ``WinregRunKey`` is the real one, tests use a fake."""

    def get(self, name: str) -> str | None: ...
    def set(self, name: str, value: str) -> None: ...
    def delete(self, name: str) -> None: ...


class WinregRunKey:
    """``HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run`` via ``winreg``."""

    def __init__(self) -> None:
        self._winreg: Any = importlib.import_module("winreg")  # Windows only

    def get(self, name: str) -> str | None:
        reg = self._winreg
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY) as key:
                value, _kind = reg.QueryValueEx(key, name)
        except FileNotFoundError:
            return None
        return str(value)

    def set(self, name: str, value: str) -> None:
        reg = self._winreg
        with reg.CreateKeyEx(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
            reg.SetValueEx(key, name, 0, reg.REG_SZ, value)

    def delete(self, name: str) -> None:
        reg = self._winreg
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
                reg.DeleteValue(key, name)
        except FileNotFoundError:
            pass  # already gone


class WindowsRunAutostart:
    def __init__(self, key: RunKey) -> None:
        self.key = key

    @property
    def location(self) -> str:
        return f"HKCU\\{RUN_KEY}\\{RUN_VALUE}"

    def is_enabled(self) -> bool:
        return bool(self.key.get(RUN_VALUE))

    def enable(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        # A Run value is a bare command line; it cannot set environment variables, so a
        # portable TABRELAY_HOME is not carried along here (the facade says so).
        self.key.set(RUN_VALUE, subprocess.list2cmdline(list(command)))

    def disable(self) -> None:
        self.key.delete(RUN_VALUE)


# --- the facade -----------------------------------------------------------------------------


class Autostart:
    """Start at login for this platform: ``is_enabled``, ``set_enabled``, and where it lives.

    Every argument is injectable so tests run each platform's code on any machine.
    """

    def __init__(
        self,
        *,
        platform: str = sys.platform,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        command: Sequence[str] | None = None,
        run_key: RunKey | None = None,
        icon: str | None = None,
    ) -> None:
        self._env = os.environ if env is None else env
        home = home or Path.home()
        self._command = command
        self.platform = platform
        self.entry: AutostartEntry
        if platform == "darwin":
            self.entry = LaunchAgentAutostart(home / "Library" / "LaunchAgents")
        elif platform == "win32":
            self.entry = WindowsRunAutostart(run_key or WinregRunKey())
        else:
            config_home = self._env.get("XDG_CONFIG_HOME") or str(home / ".config")
            self.entry = XdgAutostart(Path(config_home), icon=icon or desktop_icon())

    @property
    def location(self) -> str:
        """Where the entry lives, for the UI (a file path or a registry value)."""
        return self.entry.location

    def command(self) -> list[str]:
        """What runs at login: the tray app, from this install (source or frozen)."""
        if self._command is not None:
            return list(self._command)
        return tray_command(platform=self.platform)

    def environment(self) -> dict[str, str]:
        """Variables the entry carries: a portable install's ``TABRELAY_HOME``."""
        home = self._env.get(HOME_VARIABLE)
        return {HOME_VARIABLE: home} if home else {}

    def is_enabled(self) -> bool:
        return self.entry.is_enabled()

    def set_enabled(self, enabled: bool) -> None:
        """Write or remove the entry (blocking: file or registry I/O).

        Raises:
            ConfigError: the entry could not be written or removed.
        """
        try:
            if enabled:
                self.entry.enable(self.command(), self.environment())
            else:
                self.entry.disable()
        except (OSError, ConfigError) as exc:
            verb = "turn on" if enabled else "turn off"
            raise ConfigError(
                f"could not {verb} start at login ({self.location}): {exc}",
                title="Start at login",
            ) from None


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
