"""The facts every installer shares: names, the bundle id, the executables, and the version.

The PyInstaller spec, the .deb builder, the extension packer and the tests read them from
here; the Inno Setup script and the macOS build script cannot import Python, so
``tests/unit/test_installers.py`` checks that they say the same. The version itself lives in
``desktop/tabrelay/__init__.py`` only; this module reads it without importing the package.
Standard library only: ``make extension`` runs without the virtualenv.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_INIT = ROOT / "desktop" / "tabrelay" / "__init__.py"
RESOURCES = ROOT / "resources"
EXTENSION = ROOT / "extension"

APP_NAME = "Tabrelay"  # what people see: the menu entry, the .app, the Start menu
PACKAGE = "tabrelay"  # the Debian package, the onedir folder, the command
BUNDLE_ID = "app.tabrelay.Tabrelay"  # macOS CFBundleIdentifier
PUBLISHER = "Tabrelay"
SUMMARY = "Let AI agents use your open browser, with you in control"

# Executables in the onedir bundle. Windows gets two from one COLLECT: a console one for the
# command line and MCP stdio (a windowed exe has no stdio), and a windowed one for the tray,
# the Start menu and the Run key (no console window flashing at login). Names differ by more
# than case because Windows and macOS file systems ignore case.
CLI_EXECUTABLE = "tabrelay"
TRAY_EXECUTABLE_WINDOWS = "tabrelay-tray"
# macOS: the .app's executable is both; the command line is
# /Applications/Tabrelay.app/Contents/MacOS/Tabrelay.
MACOS_EXECUTABLE = "Tabrelay"

# Debian: where the bundle goes and the command on PATH.
DEB_INSTALL_DIR = "/opt/tabrelay"
DEB_COMMAND = "/usr/bin/tabrelay"

# hicolor sizes the app icon ships in (resources/icons/tabrelay-<size>.png).
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

_VERSION = re.compile(r'^__version__\s*=\s*"([^"]+)"\s*$', re.MULTILINE)
# PEP 440 release segments only: the same string must be valid for Debian, Inno Setup,
# CFBundleShortVersionString and a Chrome manifest ("1 to 4 dot-separated integers").
_PLAIN_VERSION = re.compile(r"^\d+(\.\d+){1,3}$")


def version() -> str:
    """The one version of Tabrelay, from ``desktop/tabrelay/__init__.py``.

    Raises:
        ValueError: the file has no ``__version__``, or one that not every store accepts.
    """
    match = _VERSION.search(PACKAGE_INIT.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f'no __version__ = "..." line in {PACKAGE_INIT}')
    found = match.group(1)
    if not _PLAIN_VERSION.match(found):
        raise ValueError(
            f"version {found!r} must be 2 to 4 dot-separated numbers: the Chrome manifest, "
            "Inno Setup and macOS accept nothing else"
        )
    return found
