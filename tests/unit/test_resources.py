"""Resources and commands resolve the same way from the source checkout and a frozen bundle."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tabrelay.system import launcher, resources

ROOT = Path(__file__).parents[2]


@pytest.fixture
def source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)


def frozen_bundle(
    monkeypatch: pytest.MonkeyPatch, contents: Path, executable: Path | None = None
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(contents), raising=False)
    monkeypatch.setattr(sys, "executable", str(executable or contents.parent / "tabrelay"))


def test_from_source_the_checkouts_resources_and_extension_are_found(source: None) -> None:
    assert resources.install_root() == ROOT
    assert resources.resources_dir() == ROOT / "resources"
    assert resources.extension_dir() == ROOT / "extension"
    assert resources.app_icon_file(48) == ROOT / "resources" / "icons" / "tabrelay-48.png"
    assert resources.resource("linux", "tabrelay.desktop.in") is not None
    assert resources.desktop_icon() == str(ROOT / "resources" / "icons" / "tabrelay-256.png")


def test_from_a_frozen_bundle_only_the_bundles_files_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents = tmp_path / "tabrelay" / "_internal"
    (contents / "resources" / "icons").mkdir(parents=True)
    (contents / "resources" / "icons" / "tabrelay-256.png").write_bytes(b"png")
    (contents / "extension").mkdir()
    (contents / "extension" / "manifest.json").write_text("{}")
    frozen_bundle(monkeypatch, contents)
    assert resources.install_root() == contents
    assert resources.resources_dir() == contents / "resources"
    assert resources.extension_dir() == contents / "extension"
    assert resources.desktop_icon() == str(contents / "resources" / "icons" / "tabrelay-256.png")
    assert resources.app_icon_file(16) is None  # not in this bundle; the checkout's is not used


def test_without_shipped_resources_lookups_say_none_and_entries_use_the_theme_icon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wheel install, or a bundle built without data: nothing to find, nothing borrowed.
    frozen_bundle(monkeypatch, tmp_path / "_internal")
    assert resources.resources_dir() is None
    assert resources.resource("icons", "tabrelay-256.png") is None
    assert resources.extension_dir() is None
    assert resources.desktop_icon() == "tabrelay"


def test_the_tray_draws_its_icons_when_no_resources_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QApplication

    from tabrelay.ui import icons

    _app = QApplication.instance() or QApplication([])
    frozen_bundle(monkeypatch, tmp_path / "_internal")
    for state in icons.TrayState:
        assert not icons.tray_icon(state).isNull()
    assert not icons.app_icon().isNull()
    assert icons.app_icon_path() == "tabrelay"


def test_from_source_both_commands_run_this_checkouts_tabrelay(source: None) -> None:
    command = launcher.tabrelay_command()
    assert command == launcher.tray_command()
    assert command[0].startswith(str(Path(sys.executable).parent)) or command[-2:] == [
        "-m",
        "tabrelay",
    ]


def test_a_frozen_linux_or_macos_build_is_one_executable_for_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = Path("/Applications/Tabrelay.app/Contents/MacOS/Tabrelay")
    frozen_bundle(monkeypatch, tmp_path, executable=app)
    assert launcher.tabrelay_command(platform="darwin") == [str(app)]
    assert launcher.tray_command(platform="darwin") == [str(app)]
    frozen_bundle(monkeypatch, tmp_path, executable=Path("/opt/tabrelay/tabrelay"))
    assert launcher.tabrelay_command(platform="linux") == ["/opt/tabrelay/tabrelay"]
    assert launcher.tray_command(platform="linux") == ["/opt/tabrelay/tabrelay"]


def test_a_frozen_windows_build_runs_commands_with_the_console_exe_and_the_tray_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("tabrelay.exe", "tabrelay-tray.exe"):
        (tmp_path / name).write_bytes(b"MZ")
    # The tray is running: an MCP client's stdio config must still get the console executable.
    frozen_bundle(monkeypatch, tmp_path / "_internal", executable=tmp_path / "tabrelay-tray.exe")
    assert launcher.tabrelay_command(platform="win32") == [str(tmp_path / "tabrelay.exe")]
    assert launcher.tray_command(platform="win32") == [str(tmp_path / "tabrelay-tray.exe")]


def test_a_windows_bundle_missing_its_sibling_falls_back_to_the_running_exe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tabrelay.exe").write_bytes(b"MZ")
    frozen_bundle(monkeypatch, tmp_path / "_internal", executable=tmp_path / "tabrelay.exe")
    assert launcher.tray_command(platform="win32") == [str(tmp_path / "tabrelay.exe")]
