"""The installers agree with the PyInstaller spec and with each other, on every OS.

Windows (Inno Setup) and macOS (app bundle, dmg) cannot be built here, so these tests read
what would build them: the spec is run with stand-ins for PyInstaller's classes for each OS,
and the Inno Setup script and the macOS build script are parsed and compared with it (app
name, executables, version, icons, bundle id, install paths). The Linux package is built for
real in tests/integration/test_deb.py.
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

import pytest

from support.installers import INSTALLERS, ROOT, load_installer_module, parse_iss_defines
from tabrelay import __version__
from tabrelay.config import paths as paths_module
from tabrelay.system import autostart, launcher, resources
from tabrelay.tools import scripts as tools_scripts

product = load_installer_module("product")
layout_module = load_installer_module("pyinstaller/layout")
icons = load_installer_module("icons")
packer = load_installer_module("pack_extension")
build_deb = load_installer_module("linux/build_deb")

SPEC = INSTALLERS / "pyinstaller" / "tabrelay.spec"
ISS = INSTALLERS / "windows" / "tabrelay.iss"
BUILD_SH = INSTALLERS / "macos" / "build.sh"
PLATFORMS = ("linux", "win32", "darwin")


# --- the spec, run for each OS --------------------------------------------------------------


@dataclass
class SpecRun:
    analysis: dict[str, Any] = field(default_factory=dict)
    exes: list[dict[str, Any]] = field(default_factory=list)
    collect: dict[str, Any] = field(default_factory=dict)
    bundle: dict[str, Any] | None = None


def run_spec(platform: str, workpath: Path, env: dict[str, str] | None = None) -> SpecRun:
    """Execute tabrelay.spec as PyInstaller would, with recording stand-ins for its classes."""
    run = SpecRun()

    class Analysis:
        def __init__(self, scripts: list[str], **kwargs: Any) -> None:
            run.analysis = {"scripts": scripts, **kwargs}
            self.pure, self.scripts, self.binaries = ["pure"], ["scripts"], ["binaries"]
            self.datas = kwargs["datas"]

    class PYZ:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.args = args

    class EXE:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            run.exes.append(kwargs)
            self.name = kwargs["name"]

    class COLLECT:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            run.collect = {"args": args, **kwargs}

    class BUNDLE:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            run.bundle = {"args": args, **kwargs}

    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__file__": str(SPEC),
        "SPECPATH": str(SPEC.parent),
        "DISTPATH": str(workpath / "dist"),
        "workpath": str(workpath / "build"),
        "Analysis": Analysis,
        "PYZ": PYZ,
        "EXE": EXE,
        "COLLECT": COLLECT,
        "BUNDLE": BUNDLE,
        "TABRELAY_TARGET_PLATFORM": platform,
    }
    saved_path, saved_env = list(sys.path), dict(os.environ)
    try:
        os.environ.update(env or {})
        exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), namespace)  # noqa: S102
    finally:
        sys.path[:] = saved_path
        os.environ.clear()
        os.environ.update(saved_env)
    return run


@pytest.fixture(scope="module")
def spec_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SpecRun]:
    return {p: run_spec(p, tmp_path_factory.mktemp(f"spec-{p}")) for p in PLATFORMS}


def test_linux_builds_one_console_executable_without_an_app_bundle(
    spec_runs: dict[str, SpecRun],
) -> None:
    run = spec_runs["linux"]
    assert [(e["name"], e["console"]) for e in run.exes] == [("tabrelay", True)]
    assert run.collect["name"] == "tabrelay"
    assert run.bundle is None


def test_windows_builds_a_console_cli_and_a_windowed_tray_in_one_folder(
    spec_runs: dict[str, SpecRun],
) -> None:
    run = spec_runs["win32"]
    assert [(e["name"], e["console"]) for e in run.exes] == [
        ("tabrelay", True),
        ("tabrelay-tray", False),
    ]
    assert run.collect["name"] == "tabrelay"
    assert len([a for a in run.collect["args"] if hasattr(a, "name")]) == 2
    assert run.bundle is None
    for exe in run.exes:
        assert exe["icon"] == str(INSTALLERS / "windows" / "tabrelay.ico")
        info = Path(exe["version"]).read_text(encoding="utf-8")
        assert f"'ProductVersion', '{__version__}'" in info
        assert f"'OriginalFilename', '{exe['name']}.exe'" in info
        assert "'FileDescription', 'Tabrelay'" in info


def test_macos_builds_a_windowed_tray_only_app_with_the_bundle_id(
    spec_runs: dict[str, SpecRun],
) -> None:
    run = spec_runs["darwin"]
    # A console executable in an .app would get LSBackgroundOnly: no tray, no dialogs.
    assert [(e["name"], e["console"]) for e in run.exes] == [("Tabrelay", False)]
    assert run.collect["name"] == "Tabrelay"
    assert run.bundle is not None
    assert run.bundle["name"] == "Tabrelay.app"
    assert run.bundle["bundle_identifier"] == "app.tabrelay.Tabrelay"
    assert run.bundle["version"] == __version__
    assert run.bundle["icon"] == str(INSTALLERS / "macos" / "Tabrelay.icns")
    plist = run.bundle["info_plist"]
    assert plist["LSUIElement"] is True
    assert plist["CFBundleShortVersionString"] == __version__
    assert plist["CFBundleName"] == "Tabrelay"
    exe = run.exes[0]
    assert exe["codesign_identity"] is None  # ad-hoc unless an identity is given
    assert exe["entitlements_file"] == str(INSTALLERS / "macos" / "entitlements.plist")


def test_macos_signs_with_the_identity_build_sh_passes(tmp_path: Path) -> None:
    identity = "Developer ID Application: Example (TEAMID1234)"
    run = run_spec("darwin", tmp_path, env={"TABRELAY_CODESIGN_IDENTITY": identity})
    assert run.exes[0]["codesign_identity"] == identity
    assert "TABRELAY_CODESIGN_IDENTITY" in BUILD_SH.read_text()


def test_every_bundle_freezes_this_checkout_with_keyrings_backends_and_the_data(
    spec_runs: dict[str, SpecRun],
) -> None:
    for platform, run in spec_runs.items():
        analysis = run.analysis
        assert analysis["scripts"] == [str(INSTALLERS / "pyinstaller" / "entry.py")], platform
        assert analysis["pathex"] == [str(ROOT / "desktop")]
        hidden = set(analysis["hiddenimports"])
        # keyring picks its backend through entry points: the modules and the metadata.
        assert {"keyring.backends.SecretService", "keyring.backends.macOS"} <= hidden
        assert {"keyring.backends.Windows", "keyring.backends.fail"} <= hidden
        assert "uvicorn.protocols.http.h11_impl" in hidden
        assert "tabrelay.app" in hidden
        destinations = {Path(source).name: dest for source, dest in analysis["datas"]}
        assert any(
            name.startswith("keyring-") and name.endswith(".dist-info") for name in destinations
        )
        assert destinations["tabrelay-256.png"] == "resources/icons"
        assert destinations["tabrelay.desktop.in"] == "resources/linux"
        assert destinations["manifest.json"] == "extension"
        assert destinations["service_worker.js"] == "extension/src/background"
        assert "build_icons.py" not in destinations
        assert {"tkinter", "PIL"} <= set(analysis["excludes"])
    assert "secretstorage" in layout_module.layout("linux").hidden_submodules
    assert "win32ctypes" in layout_module.layout("win32").hidden_submodules


def test_the_bundled_data_lands_where_the_app_looks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents = tmp_path / "tabrelay" / "_internal"
    for source, dest in layout_module.data_files():
        (contents / dest).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, contents / dest)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(contents), raising=False)
    assert resources.resources_dir() == contents / "resources"
    for size in resources.APP_ICON_SIZES:
        assert resources.app_icon_file(size) == contents / f"resources/icons/tabrelay-{size}.png"
    scripts = contents / "tabrelay" / "tools" / "scripts"
    assert sorted(p.name for p in scripts.glob("*.js")) == sorted(
        p.name for p in (Path(tools_scripts.__file__).parent).glob("*.js")
    )
    extension = resources.extension_dir()
    assert extension == contents / "extension"
    assert sorted(p.relative_to(extension).as_posix() for p in extension.rglob("*.*")) == sorted(
        str(p) for p in packer.shipped_files()
    )
    # Loaded unpacked from the bundle, the extension keeps its pinned id.
    assert '"key"' in (extension / "manifest.json").read_text()


def test_the_entry_script_is_the_tabrelay_command() -> None:
    text = (INSTALLERS / "pyinstaller" / "entry.py").read_text()
    assert "from tabrelay.cli import main" in text and "sys.exit(main())" in text


# --- names shared by the app, the spec and the installers ------------------------------------


def test_the_app_and_the_installers_name_the_same_executables_and_folders() -> None:
    assert launcher.CLI_EXECUTABLE == product.CLI_EXECUTABLE == "tabrelay"
    assert launcher.TRAY_EXECUTABLE_WINDOWS == product.TRAY_EXECUTABLE_WINDOWS
    # Case-insensitive file systems: the names must differ by more than case.
    names = {product.CLI_EXECUTABLE, product.TRAY_EXECUTABLE_WINDOWS, product.MACOS_EXECUTABLE}
    assert len({name.lower() for name in names}) == 2  # macOS's "Tabrelay" is on its own
    assert product.APP_NAME == paths_module.APP_NAME == autostart.APP_NAME
    assert resources.ICON_THEME_NAME == product.PACKAGE
    assert resources.APP_ICON_SIZES == product.ICON_SIZES


def test_pyinstaller_is_6_or_later_where_it_is_installed() -> None:
    pyinstaller = pytest.importorskip("PyInstaller", reason="the test extra installs PyInstaller")
    major, minor = (int(part) for part in pyinstaller.__version__.split(".")[:2])
    assert (major, minor) >= (6, 10)  # THREATS I1: no pre-6 onefile/sys.path issues


# --- Windows: the Inno Setup script ----------------------------------------------------------


def iss_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "//", "#")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = header.group(1)
            sections[current] = []
        elif current:
            sections[current].append(line)
    return sections


def iss_entry(line: str) -> dict[str, str]:
    """One [Files]/[Icons]/... line: ``Name: "value"; Flags: a b``."""
    found = {}
    for key, quoted, bare in re.findall(r'(\w+):\s*(?:"((?:[^"]|"")*)"|([^;]*))\s*(?:;|$)', line):
        found[key] = (quoted.replace('""', '"') if quoted else bare).strip()
    return found


@pytest.fixture(scope="module")
def iss() -> tuple[dict[str, str], dict[str, list[str]]]:
    text = ISS.read_text(encoding="utf-8")
    defines = parse_iss_defines(text)

    def expand(value: str) -> str:
        return re.sub(r"\{#(\w+)\}", lambda m: defines[m.group(1)], value)

    sections = {
        name: [expand(line) for line in lines] for name, lines in iss_sections(text).items()
    }
    return defines, sections


def setup_values(sections: dict[str, list[str]]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in sections["Setup"])


def test_the_windows_installer_is_per_user_in_local_app_data(
    iss: tuple[dict[str, str], dict[str, list[str]]],
) -> None:
    _defines, sections = iss
    setup = setup_values(sections)
    assert setup["PrivilegesRequired"] == "lowest"
    assert setup["DefaultDirName"] == r"{localappdata}\Programs\Tabrelay"
    assert setup["AppName"] == product.APP_NAME
    assert setup["AppVersion"] == __version__
    assert re.fullmatch(r"\{\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}", setup["AppId"])
    assert "PrivilegesRequiredOverridesAllowed" not in setup  # never offers an elevated install
    assert (ISS.parent / setup["SetupIconFile"]).is_file()
    assert setup["SetupIconFile"] == "tabrelay.ico"
    assert setup["UninstallDisplayIcon"] == r"{app}\tabrelay-tray.exe"
    output = (ISS.parent / PureWindowsPath(setup["OutputDir"]).as_posix()).resolve()
    assert output == ROOT / "dist"


def test_the_windows_installer_ships_the_bundle_the_spec_builds(
    iss: tuple[dict[str, str], dict[str, list[str]]], spec_runs: dict[str, SpecRun]
) -> None:
    defines, sections = iss
    run = spec_runs["win32"]
    bundle = (ISS.parent / PureWindowsPath(defines["BundleDir"]).as_posix()).resolve()
    assert bundle == ROOT / "dist" / run.collect["name"]
    [files] = [iss_entry(line) for line in sections["Files"]]
    assert files["Source"] == defines["BundleDir"] + "\\*"
    assert files["DestDir"] == "{app}"
    assert {"recursesubdirs", "createallsubdirs"} <= set(files["Flags"].split())
    exe_names = {f"{e['name']}.exe" for e in run.exes}
    assert {defines["TrayExe"], defines["CliExe"]} == exe_names
    assert defines["TrayExe"] == f"{launcher.TRAY_EXECUTABLE_WINDOWS}.exe"
    icons_ = [iss_entry(line) for line in sections["Icons"]]
    assert icons_[0]["Name"] == "{autoprograms}\\Tabrelay"  # the Start menu entry
    assert all(i["Filename"] == "{app}\\tabrelay-tray.exe" for i in icons_)
    [run_after] = [iss_entry(line) for line in sections["Run"]]
    assert run_after["Filename"] == "{app}\\tabrelay-tray.exe"
    assert "runascurrentuser" not in run_after["Flags"]  # never starts the app elevated


def test_the_windows_autostart_task_writes_the_value_the_app_uses_and_uninstall_removes_it(
    iss: tuple[dict[str, str], dict[str, list[str]]],
) -> None:
    _defines, sections = iss
    tasks = {iss_entry(line)["Name"]: iss_entry(line) for line in sections["Tasks"]}
    assert "unchecked" in tasks["autostart"]["Flags"]  # off by default (DESIGN §8)
    [registry] = [iss_entry(line) for line in sections["Registry"]]
    assert registry["Root"] == "HKCU"
    assert registry["Subkey"] == autostart.RUN_KEY
    assert registry["ValueName"] == autostart.RUN_VALUE
    assert registry["ValueData"] == '"{app}\\tabrelay-tray.exe"'
    assert registry["Tasks"] == "autostart"
    assert "uninsdeletevalue" in registry["Flags"]
    code = "\n".join(sections["Code"])
    # Whoever turned it on (this installer or the tray), the uninstaller turns it off.
    assert (
        f"RegDeleteValue(HKEY_CURRENT_USER, '{autostart.RUN_KEY}', '{autostart.RUN_VALUE}')" in code
    )


def test_the_windows_uninstaller_deletes_the_data_only_when_asked(
    iss: tuple[dict[str, str], dict[str, list[str]]],
) -> None:
    _defines, sections = iss
    code = "\n".join(sections["Code"])
    # platformdirs on Windows: %LOCALAPPDATA%\Tabrelay (and %APPDATA%\Tabrelay when roaming).
    assert paths_module.APP_NAME == "Tabrelay"
    assert "DelTree(ExpandConstant('{localappdata}\\Tabrelay'), True, True, True)" in code
    assert "DelTree(ExpandConstant('{userappdata}\\Tabrelay'), True, True, True)" in code
    asked = re.search(
        r"if \(not UninstallSilent\) and\s*\(MsgBox\((.*?)\) = IDYES\) then", code, re.S
    )
    assert asked is not None and "MB_DEFBUTTON2" in asked.group(1)  # "No" is the default
    assert "DeleteUserData();" in code.split("usPostUninstall", 1)[1]
    # The install folder itself is not what [Code] deletes (the uninstaller removes {app}).
    assert "{localappdata}\\Programs" not in code


# --- macOS: build.sh ---------------------------------------------------------------------------


def shell_assignments(text: str) -> dict[str, str]:
    return dict(re.findall(r'^([A-Z_]+)="([^"$]*)"$', text, re.MULTILINE))


def test_the_macos_build_script_agrees_with_the_spec(spec_runs: dict[str, SpecRun]) -> None:
    text = BUILD_SH.read_text(encoding="utf-8")
    values = shell_assignments(text)
    run = spec_runs["darwin"]
    assert run.bundle is not None
    assert values["APP_NAME"] + ".app" == run.bundle["name"]
    assert values["BUNDLE_ID"] == run.bundle["bundle_identifier"] == product.BUNDLE_ID
    assert values["EXECUTABLE"] == run.exes[0]["name"]
    assert (ROOT / values["SPEC"]) == SPEC
    assert (ROOT / values["ENTITLEMENTS"]).resolve() == Path(run.exes[0]["entitlements_file"])
    assert "product.version()" in text  # the version is read, never typed in
    assert os.access(BUILD_SH, os.X_OK)
    assert subprocess.run(["bash", "-n", str(BUILD_SH)], check=False).returncode == 0


def test_the_macos_build_signs_notarizes_staples_and_makes_a_dmg_in_that_order() -> None:
    text = BUILD_SH.read_text(encoding="utf-8")
    steps = [
        "PyInstaller",
        "codesign --force --sign",
        "--options runtime",
        "codesign --verify --deep --strict",
        "xcrun notarytool submit",
        'xcrun stapler staple "$APP"',
        "hdiutil create",
        'codesign --force --sign "$IDENTITY" --timestamp "$DMG"',
        'xcrun stapler staple "$DMG"',
        "spctl --assess",
    ]
    positions = [text.index(step) for step in steps]
    assert positions == sorted(positions)


def test_the_entitlements_are_the_minimum_a_pyinstaller_app_needs() -> None:
    entitlements = plistlib.loads((INSTALLERS / "macos" / "entitlements.plist").read_bytes())
    assert entitlements == {"com.apple.security.cs.allow-unsigned-executable-memory": True}


# --- icons -------------------------------------------------------------------------------------


def test_the_ico_and_icns_are_packed_from_the_current_pngs() -> None:
    assert icons.ICO_FILE.read_bytes() == icons.ico(), "run python3 installers/icons.py"
    assert icons.ICNS_FILE.read_bytes() == icons.icns(), "run python3 installers/icons.py"


def test_the_ico_holds_each_size_as_a_png() -> None:
    data = icons.ICO_FILE.read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, len(icons.ICO_SIZES))
    for index, size in enumerate(icons.ICO_SIZES):
        side, _, _, _, _, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        assert (side or 256, bits) == (size, 32)
        assert icons.png_size(data[offset : offset + length]) == (size, size)


def test_the_icns_holds_each_element_as_a_png() -> None:
    data = icons.ICNS_FILE.read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    offset, found = 8, []
    while offset < len(data):
        kind, length = (
            data[offset : offset + 4],
            struct.unpack(">I", data[offset + 4 : offset + 8])[0],
        )
        found.append((kind, icons.png_size(data[offset + 8 : offset + length])[0]))
        offset += length
    assert found == list(icons.ICNS_TYPES)


# --- Linux: the package's parts ----------------------------------------------------------------


def test_the_menu_entry_is_the_app_entry_for_the_installed_command() -> None:
    assert build_deb.desktop_entry() == autostart.desktop_entry(
        [product.DEB_COMMAND], {}, icon=product.PACKAGE
    )


def test_the_package_depends_on_the_makefiles_qt_runtime_list() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("needs make")
    database = subprocess.run(
        [make, "-pRrq", "-f", str(ROOT / "Makefile"), "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    line = next(line for line in database.splitlines() if line.startswith("APT_RUN :="))
    assert build_deb.apt_run_packages() == line.split(":=", 1)[1].split()


def test_the_control_file_names_the_package_version_and_dependencies() -> None:
    text = build_deb.control(
        the_version=__version__,
        arch="amd64",
        installed_kib=1234,
        depends=["libc6 (>= 2.36)", "libegl1"],
    )
    fields = dict(
        line.split(": ", 1) for line in text.splitlines() if line and not line.startswith(" ")
    )
    assert fields["Package"] == "tabrelay"
    assert fields["Version"] == __version__
    assert fields["Depends"] == "libc6 (>= 2.36), libegl1"
    assert fields["Installed-Size"] == "1234"
    assert re.fullmatch(r".+ <[^@\s]+@[^@\s]+>", fields["Maintainer"])
    assert text.endswith("\n") and "\n\n" not in text


# --- the extension zip -------------------------------------------------------------------------


def test_make_extension_writes_a_versioned_store_zip_without_the_key(tmp_path: Path) -> None:
    assert packer.main(["--out", str(tmp_path)]) == 0
    target = tmp_path / f"tabrelay-extension-{__version__}.zip"
    with zipfile.ZipFile(target) as zf:
        names = sorted(zf.namelist())
        manifest = zf.read("manifest.json").decode()
        assert zf.testzip() is None
    assert names == sorted(str(p) for p in packer.shipped_files())
    assert "manifest.json" in names and "src/background/service_worker.js" in names
    assert not any(
        n.startswith(("test/", "node_modules/")) or n.endswith("package.json") for n in names
    )
    assert '"key"' not in manifest  # the store refuses it and assigns its own
    assert f'"version": "{__version__}"' in manifest


def test_the_unpacked_zip_keeps_the_key_and_zips_are_reproducible(tmp_path: Path) -> None:
    first = packer.zip_bytes(keep_key=True)
    assert first == packer.zip_bytes(keep_key=True)
    target = packer.pack(tmp_path, keep_key=True)
    assert target.name == f"tabrelay-extension-{__version__}-unpacked.zip"
    with zipfile.ZipFile(target) as zf:
        assert '"key"' in zf.read("manifest.json").decode()


def test_the_packer_refuses_an_import_that_would_not_be_shipped(tmp_path: Path) -> None:
    extension = tmp_path / "extension"
    for relative in packer.shipped_files():
        target = extension / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / "extension" / relative).read_bytes())
    worker = extension / "src" / "background" / "service_worker.js"
    worker.write_text('import { x } from "../../test/fake_chrome.js";\n' + worker.read_text())
    with pytest.raises(packer.PackError, match=r"fake_chrome\.js"):
        packer.check(extension)
    worker.write_text("// @ts-check\n")
    (extension / "src" / "secret.pem").write_text("-----BEGIN PRIVATE KEY-----")
    with pytest.raises(packer.PackError, match=r"secret\.pem"):
        packer.check(extension)
