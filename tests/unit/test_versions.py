"""One version for everything: the package, pyproject, the extension, the installers, the CLI.

``desktop/tabrelay/__init__.py`` holds it; everything else reads it or must say the same.
(The built .deb and the frozen ``tabrelay --version`` are checked in tests/integration/test_deb.py.)
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from support.installers import load_installer_module, parse_iss_defines
from tabrelay import __version__
from tabrelay.cli import main

ROOT = Path(__file__).parents[2]


def test_the_version_is_one_every_store_and_installer_accepts() -> None:
    # Chrome: 1-4 dot-separated integers; Debian, Inno Setup and CFBundleShortVersionString too.
    assert re.fullmatch(r"\d+(\.\d+){1,3}", __version__)
    product = load_installer_module("product")
    assert product.version() == __version__


def test_pyproject_reads_the_version_from_the_package() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert "version" not in pyproject["project"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "tabrelay.__version__"}


def test_the_extension_manifest_has_the_apps_version() -> None:
    manifest = json.loads((ROOT / "extension" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == __version__


def test_tabrelay_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"tabrelay {__version__}\n"


def test_the_windows_installer_says_the_same_version() -> None:
    defines = parse_iss_defines((ROOT / "installers" / "windows" / "tabrelay.iss").read_text())
    assert defines["AppVersion"] == __version__


def test_every_bundle_layout_and_the_macos_info_plist_carry_it() -> None:
    layout = load_installer_module("pyinstaller/layout")
    for platform in ("linux", "win32", "darwin"):
        assert layout.layout(platform).version == __version__
    plist = layout.layout("darwin").info_plist
    assert plist["CFBundleShortVersionString"] == plist["CFBundleVersion"] == __version__
    numbers = ", ".join([*__version__.split("."), *["0"] * (4 - len(__version__.split(".")))])
    assert f"filevers=({numbers})" in layout.windows_version_info(__version__, "tabrelay")


def test_the_extension_packer_refuses_a_manifest_with_another_version(tmp_path: Path) -> None:
    packer = load_installer_module("pack_extension")
    extension = tmp_path / "extension"
    for relative in packer.shipped_files():
        target = extension / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / "extension" / relative).read_bytes())
    manifest = json.loads((extension / "manifest.json").read_text())
    manifest["version"] = "9.9.9"
    (extension / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(packer.PackError, match=r"9\.9\.9"):
        packer.check(extension)
