"""What the PyInstaller bundle holds on each OS, as plain data the spec turns into a build.

``tabrelay.spec`` is a thin driver over ``layout(sys.platform)``: the executables (Windows
gets a console ``tabrelay.exe`` and a windowed ``tabrelay-tray.exe`` from one COLLECT; Linux
one ``tabrelay``; macOS one windowed ``Tabrelay`` inside ``Tabrelay.app``), the data files
(``resources/`` and the unpacked extension, at the bundle root where
``tabrelay.system.resources`` looks), the imports PyInstaller cannot see, and the macOS
Info.plist. Keeping it here lets ``tests/unit/test_installers.py`` check every OS's layout on
any machine, against the Inno Setup script and the macOS build script.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTALLERS = Path(__file__).resolve().parents[1]
if str(INSTALLERS) not in sys.path:
    sys.path.insert(0, str(INSTALLERS))

from pack_extension import shipped_files  # noqa: E402 - needs installers/ on sys.path
from product import (  # noqa: E402
    APP_NAME,
    BUNDLE_ID,
    CLI_EXECUTABLE,
    EXTENSION,
    MACOS_EXECUTABLE,
    PACKAGE,
    PACKAGE_INIT,
    PUBLISHER,
    RESOURCES,
    ROOT,
    SUMMARY,
    TRAY_EXECUTABLE_WINDOWS,
    version,
)

ENTRY_SCRIPT = Path(__file__).resolve().parent / "entry.py"
WINDOWS_ICON = INSTALLERS / "windows" / "tabrelay.ico"
MACOS_ICON = INSTALLERS / "macos" / "Tabrelay.icns"
MACOS_ENTITLEMENTS = INSTALLERS / "macos" / "entitlements.plist"
MACOS_MINIMUM = "11.0"

# Imported by name at run time, so PyInstaller's analysis cannot follow them:
# keyring finds its backends through entry points (hence also its metadata), uvicorn loads
# its protocol and loop classes from strings, and tabrelay imports some modules lazily.
HIDDEN_SUBMODULES = ("keyring.backends", "uvicorn", "tabrelay")
HIDDEN_SUBMODULES_BY_PLATFORM = {
    "linux": ("secretstorage",),  # keyring's Secret Service backend (imports jeepney)
    "win32": ("win32ctypes",),  # keyring's Windows Credential Manager backend
    "darwin": (),
}
METADATA = ("keyring",)
# Never imported by the app: test and build tools, and Pillow (pygments' image formatter
# tries it; 19 MB with its libraries).
EXCLUDES = ("tkinter", "_tkinter", "PIL", "pytest", "hypothesis", "mypy", "ruff", "PyInstaller")
# resources/ files that are sources for other files, not something the app reads.
RESOURCE_SKIP_SUFFIXES = {".py", ".pyc"}


@dataclass(frozen=True)
class Executable:
    name: str  # without ".exe"
    console: bool


@dataclass(frozen=True)
class Layout:
    platform: str
    version: str
    collect_name: str  # dist/<collect_name>/
    executables: tuple[Executable, ...]
    icon: Path | None
    datas: tuple[tuple[str, str], ...]
    hidden_submodules: tuple[str, ...]
    metadata: tuple[str, ...] = METADATA
    excludes: tuple[str, ...] = EXCLUDES
    app_bundle: str | None = None  # "Tabrelay.app" on macOS
    bundle_id: str | None = None
    info_plist: dict[str, Any] = field(default_factory=dict)
    entitlements: Path | None = None


def data_files() -> tuple[tuple[str, str], ...]:
    """(source file, folder in the bundle) for ``resources/``, the unpacked extension and the
    package's in-page scripts (``tabrelay/tools/scripts/*.js``, where the package reads them)."""
    found: list[tuple[str, str]] = []
    source = PACKAGE_INIT.parent
    for path in sorted(source.rglob("*.js")):
        found.append((str(path), ("tabrelay" / path.parent.relative_to(source)).as_posix()))
    for path in sorted(RESOURCES.rglob("*")):
        if path.is_file() and path.suffix not in RESOURCE_SKIP_SUFFIXES:
            relative = path.relative_to(ROOT)
            found.append((str(path), relative.parent.as_posix()))
    for shipped in shipped_files(EXTENSION):
        # The unpacked copy keeps the manifest key: loaded from here it has the pinned id.
        found.append((str(EXTENSION / shipped), ("extension" / shipped.parent).as_posix()))
    return tuple(found)


def normalise_platform(platform: str) -> str:
    if platform.startswith("linux"):
        return "linux"
    if platform in ("win32", "darwin"):
        return platform
    raise ValueError(f"no bundle layout for {platform!r} (Linux, Windows and macOS only)")


def layout(platform: str = sys.platform) -> Layout:
    """The bundle for ``platform`` (a ``sys.platform`` value)."""
    target = normalise_platform(platform)
    the_version = version()
    hidden = HIDDEN_SUBMODULES + HIDDEN_SUBMODULES_BY_PLATFORM[target]
    if target == "win32":
        return Layout(
            platform=target,
            version=the_version,
            collect_name=PACKAGE,
            executables=(
                Executable(CLI_EXECUTABLE, console=True),
                Executable(TRAY_EXECUTABLE_WINDOWS, console=False),
            ),
            icon=WINDOWS_ICON,
            datas=data_files(),
            hidden_submodules=hidden,
        )
    if target == "darwin":
        return Layout(
            platform=target,
            version=the_version,
            collect_name=APP_NAME,
            # Windowed: a console executable in an .app gets LSBackgroundOnly and no UI.
            executables=(Executable(MACOS_EXECUTABLE, console=False),),
            icon=MACOS_ICON,
            datas=data_files(),
            hidden_submodules=hidden,
            app_bundle=f"{APP_NAME}.app",
            bundle_id=BUNDLE_ID,
            info_plist=info_plist(the_version),
            entitlements=MACOS_ENTITLEMENTS,
        )
    return Layout(
        platform=target,
        version=the_version,
        collect_name=PACKAGE,
        executables=(Executable(CLI_EXECUTABLE, console=True),),
        icon=None,  # Linux executables carry no icon; the .deb installs hicolor icons
        datas=data_files(),
        hidden_submodules=hidden,
    )


def info_plist(the_version: str) -> dict[str, Any]:
    """Keys PyInstaller's BUNDLE adds to the Info.plist it writes."""
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleShortVersionString": the_version,
        "CFBundleVersion": the_version,
        "LSUIElement": True,  # a tray (menu bar) app: no Dock icon, no app menu
        "LSMinimumSystemVersion": MACOS_MINIMUM,
        "NSHighResolutionCapable": True,
        "LSApplicationCategoryType": "public.app-category.developer-tools",
        "NSHumanReadableCopyright": f"© {PUBLISHER}. MIT License.",
    }


def windows_version_info(the_version: str, executable: str) -> str:
    """The text of a Windows version resource (PyInstaller's ``version=`` file format).

    Task Manager and the firewall prompt show ``FileDescription``, so it is the app's name.
    """
    numbers = [int(part) for part in the_version.split(".")]
    numbers += [0] * (4 - len(numbers))
    filevers = tuple(numbers)
    strings = {
        "CompanyName": PUBLISHER,
        "FileDescription": APP_NAME,
        "FileVersion": the_version,
        "InternalName": PACKAGE,
        "LegalCopyright": f"© {PUBLISHER}. MIT License.",
        "OriginalFilename": f"{executable}.exe",
        "ProductName": APP_NAME,
        "Comments": SUMMARY,
        "ProductVersion": the_version,
    }
    entries = ",\n          ".join(f"StringStruct({k!r}, {v!r})" for k, v in strings.items())
    return f"""VSVersionInfo(
  ffi=FixedFileInfo(
    filevers={filevers},
    prodvers={filevers},
    mask=0x3f,
    flags=0x0,
    OS=0x40004,
    fileType=0x1,
    subtype=0x0,
    date=(0, 0)
  ),
  kids=[
    StringFileInfo([
      StringTable(
        '040904B0',
        [
          {entries}
        ])
    ]),
    VarFileInfo([VarStruct('Translation', [1033, 1200])])
  ]
)
"""
