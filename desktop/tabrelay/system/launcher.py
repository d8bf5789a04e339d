"""How to start this Tabrelay again: from a frozen bundle, from a virtualenv, or from source.

MCP client configs (stdio bridge), autostart entries and ``mcp-stdio`` starting the app
headless all need the same answer, and it differs between a PyInstaller bundle and a source
checkout.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def tabrelay_command() -> list[str]:
    """The argv prefix that runs ``tabrelay`` (append the subcommand and its arguments)."""
    if is_frozen():
        return [sys.executable]
    scripts = Path(sys.executable).parent
    for name in ("tabrelay", "tabrelay.exe"):
        candidate = scripts / name
        if candidate.is_file():
            return [str(candidate)]
    found = shutil.which("tabrelay")
    if found:
        return [found]
    return [sys.executable, "-m", "tabrelay"]
