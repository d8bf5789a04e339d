"""Load the installer scripts (``installers/``, not a package) and read the Inno Setup script."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
INSTALLERS = ROOT / "installers"


def load_installer_module(name: str) -> ModuleType:
    """``product``, ``pack_extension``, ``icons``, ``pyinstaller/layout``, ``linux/build_deb``."""
    folder, _, stem = name.rpartition("/")
    # The scripts import each other by plain name, as they do when run from installers/.
    for path in (INSTALLERS, INSTALLERS / folder):
        if str(path) not in sys.path:
            sys.path.append(str(path))
    return importlib.import_module(stem)


def parse_iss_defines(text: str) -> dict[str, str]:
    """The ``#define Name "value"`` lines of an Inno Setup script."""
    return dict(re.findall(r'^#define\s+(\w+)\s+"([^"]*)"\s*$', text, re.MULTILINE))
