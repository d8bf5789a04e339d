"""Files that ship beside the code: ``resources/`` (icons, packagers' templates) and the
unpacked extension, found the same way from a source checkout and from a frozen bundle.

Both installs have one root holding ``resources/`` and ``extension/``: the checkout's top
folder, or the PyInstaller bundle's ``sys._MEIPASS`` (``_internal/`` of a onedir build,
``Contents/Frameworks`` of the macOS app, where PyInstaller links the data files in from
``Contents/Resources``). The spec in ``installers/pyinstaller/`` puts them there. A wheel
install carries neither: every lookup then returns ``None`` and the caller falls back (the
tray draws plain icons; autostart entries name the icon theme's ``tabrelay``). Qt-free.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tabrelay.system.launcher import is_frozen

ICON_THEME_NAME = "tabrelay"  # the name the Linux package installs under hicolor
APP_ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def install_root() -> Path:
    """The folder that holds ``resources/`` and ``extension/`` for this install (may lack them)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if is_frozen() and bundle:
        return Path(bundle)
    # desktop/tabrelay/system/resources.py → the checkout's top folder
    return Path(__file__).resolve().parents[3]


def resources_dir() -> Path | None:
    """``resources/`` of this install, or ``None`` where it did not ship (a wheel)."""
    candidate = install_root() / "resources"
    return candidate if (candidate / "icons").is_dir() else None


def resource(*parts: str) -> Path | None:
    """A file or folder under ``resources/``, or ``None`` if this install lacks it."""
    base = resources_dir()
    if base is None:
        return None
    path = base.joinpath(*parts)
    return path if path.exists() else None


def extension_dir() -> Path | None:
    """The unpacked browser extension shipped with this install, to load from the browser."""
    candidate = install_root() / "extension"
    return candidate if (candidate / "manifest.json").is_file() else None


def app_icon_file(size: int = 256) -> Path | None:
    """The app icon's PNG at ``size`` pixels, if this install has it."""
    return resource("icons", f"{ICON_THEME_NAME}-{size}.png")


def desktop_icon() -> str:
    """An ``Icon=`` value for desktop entries: the PNG's path, else the icon theme's name."""
    png = app_icon_file()
    return str(png) if png is not None else ICON_THEME_NAME
