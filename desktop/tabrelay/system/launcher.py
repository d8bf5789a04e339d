"""How to start this Tabrelay again: from a frozen bundle, from a virtualenv, or from source.

MCP client configs (stdio bridge), ``mcp-stdio`` starting the app headless, and autostart
entries all need the answer, and it differs between a PyInstaller bundle and a source
checkout. There are two questions: the command line (``tabrelay_command``), which must have
stdio, and the tray app (``tray_command``), which must not open a console window. On Windows
the bundle has an executable for each (``tabrelay.exe``, console; ``tabrelay-tray.exe``,
windowed: ``installers/pyinstaller/``); on Linux and in the macOS app one executable is both.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

# The bundle's executables (installers/product.py names them the same; a test checks).
CLI_EXECUTABLE = "tabrelay"
TRAY_EXECUTABLE_WINDOWS = "tabrelay-tray"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def tabrelay_command(*, platform: str = sys.platform) -> list[str]:
    """The argv prefix that runs ``tabrelay`` with stdio (append the subcommand and arguments)."""
    if is_frozen():
        return [str(_frozen_executable(CLI_EXECUTABLE, platform))]
    scripts = Path(sys.executable).parent
    for name in ("tabrelay", "tabrelay.exe"):
        candidate = scripts / name
        if candidate.is_file():
            return [str(candidate)]
    found = shutil.which("tabrelay")
    if found:
        return [found]
    return [sys.executable, "-m", "tabrelay"]


def tray_command(*, platform: str = sys.platform) -> list[str]:
    """The argv that starts the tray app: what autostart and shortcuts run."""
    if is_frozen():
        return [str(_frozen_executable(TRAY_EXECUTABLE_WINDOWS, platform))]
    return tabrelay_command(platform=platform)


def _frozen_executable(windows_name: str, platform: str) -> Path:
    """On Windows the named sibling of the running executable; elsewhere the running one."""
    running = Path(sys.executable)
    if platform != "win32":
        return running
    sibling = running.with_name(f"{windows_name}.exe")
    return sibling if sibling.is_file() else running
