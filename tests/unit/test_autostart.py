"""Start at login: each platform's entry is really written and removed, from source or frozen."""

from __future__ import annotations

import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from tabrelay.errors import ConfigError
from tabrelay.system import autostart as autostart_module
from tabrelay.system.autostart import (
    Autostart,
    desktop_entry,
    desktop_exec,
    launch_agent,
)

RESOURCES = Path(__file__).parents[2] / "resources"


class FakeRunKey:
    """An in-memory HKCU\\...\\Run key."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete(self, name: str) -> None:
        self.values.pop(name, None)


def unquote_exec(value: str) -> list[str]:
    """Read an Exec= value back as the Desktop Entry spec says: string escapes, then quoting."""
    text = value.replace("\\\\", "\\").replace("%%", "%")
    args: list[str] = []
    current, quoted, escaped, started = "", False, False, False
    for char in text:
        if escaped:
            current, escaped = current + char, False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted, started = not quoted, True
        elif char == " " and not quoted:
            if started:
                args.append(current)
            current, started = "", False
        else:
            current, started = current + char, True
    if started:
        args.append(current)
    return args


def test_autostart_is_off_until_turned_on_and_the_xdg_entry_is_written_and_removed(
    tmp_path: Path,
) -> None:
    xdg = tmp_path / "xdg-config"
    entry = Autostart(
        platform="linux",
        env={"XDG_CONFIG_HOME": str(xdg)},
        home=tmp_path,
        command=["/opt/tabrelay/bin/tabrelay"],
    )
    desktop = xdg / "autostart" / "tabrelay.desktop"
    assert entry.location == str(desktop)
    assert not entry.is_enabled()

    entry.set_enabled(True)
    assert entry.is_enabled()
    text = desktop.read_text(encoding="utf-8")
    assert text.startswith("[Desktop Entry]\n")
    assert "Exec=/opt/tabrelay/bin/tabrelay\n" in text
    assert "Type=Application\n" in text
    assert desktop.stat().st_mode & 0o777 == 0o644

    entry.set_enabled(False)
    assert not desktop.exists()
    assert not entry.is_enabled()
    entry.set_enabled(False)  # turning it off twice is fine


def test_without_xdg_config_home_the_entry_goes_under_dot_config(tmp_path: Path) -> None:
    entry = Autostart(platform="linux", env={}, home=tmp_path, command=["tabrelay"])
    entry.set_enabled(True)
    assert (tmp_path / ".config" / "autostart" / "tabrelay.desktop").is_file()


def test_an_entry_the_desktop_disabled_counts_as_off(tmp_path: Path) -> None:
    entry = Autostart(platform="linux", env={}, home=tmp_path, command=["tabrelay"])
    entry.set_enabled(True)
    path = Path(entry.location)
    path.write_text(path.read_text() + "Hidden=true\n")
    assert not entry.is_enabled()


def test_a_portable_home_and_odd_paths_survive_the_exec_line(tmp_path: Path) -> None:
    command = ["/home/ann/My Apps/tabrelay $1/bin/tabrelay", "100%"]
    env = {"TABRELAY_HOME": '/media/usb/Tabrelay "data"'}
    entry = Autostart(
        platform="linux", env={**env, "XDG_CONFIG_HOME": str(tmp_path)}, command=command
    )
    entry.set_enabled(True)
    exec_line = next(
        line for line in Path(entry.location).read_text().splitlines() if line.startswith("Exec=")
    )
    assert unquote_exec(exec_line.removeprefix("Exec=")) == [
        "env",
        'TABRELAY_HOME=/media/usb/Tabrelay "data"',
        *command,
    ]


def test_from_source_the_entry_runs_this_checkouts_tabrelay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    entry = Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(tmp_path)})
    command = entry.command()
    assert command[0].startswith(str(Path(sys.executable).parent)) or command[-2:] == [
        "-m",
        "tabrelay",
    ]
    entry.set_enabled(True)
    assert f"Exec={desktop_exec(command)}\n" in Path(entry.location).read_text()


def test_from_a_frozen_build_the_entry_runs_the_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/Tabrelay/Tabrelay")
    entry = Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert entry.command() == ["/opt/Tabrelay/Tabrelay"]
    entry.set_enabled(True)
    assert "Exec=/opt/Tabrelay/Tabrelay\n" in Path(entry.location).read_text()


def test_from_a_frozen_windows_build_the_run_value_starts_the_windowed_tray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "Tabrelay"
    bundle.mkdir()
    for name in ("tabrelay.exe", "tabrelay-tray.exe"):
        (bundle / name).write_bytes(b"MZ")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    # Turned on from the console executable (`tabrelay` in a terminal), it still names the tray.
    monkeypatch.setattr(sys, "executable", str(bundle / "tabrelay.exe"))
    key = FakeRunKey()
    entry = Autostart(platform="win32", env={}, run_key=key)
    entry.set_enabled(True)
    assert key.values == {"Tabrelay": subprocess.list2cmdline([str(bundle / "tabrelay-tray.exe")])}


def test_from_a_frozen_macos_app_the_launch_agent_starts_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executable = "/Applications/Tabrelay.app/Contents/MacOS/Tabrelay"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", executable)
    entry = Autostart(platform="darwin", env={}, home=tmp_path)
    entry.set_enabled(True)
    agent = plistlib.loads(Path(entry.location).read_bytes())
    assert agent["ProgramArguments"] == [executable]


def test_a_frozen_entry_names_the_bundles_icon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "_internal"
    (bundle / "resources" / "icons").mkdir(parents=True)
    icon = bundle / "resources" / "icons" / "tabrelay-256.png"
    icon.write_bytes(b"png")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "tabrelay"))
    entry = Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    entry.set_enabled(True)
    text = Path(entry.location).read_text()
    assert f"Icon={icon}\n" in text
    assert f"Exec={tmp_path / 'tabrelay'}\n" in text


def test_the_macos_launch_agent_is_written_and_removed(tmp_path: Path) -> None:
    entry = Autostart(
        platform="darwin",
        env={"TABRELAY_HOME": "/Users/ann/portable"},
        home=tmp_path,
        command=["/Applications/Tabrelay.app/Contents/MacOS/Tabrelay"],
    )
    plist = tmp_path / "Library" / "LaunchAgents" / "app.tabrelay.tray.plist"
    assert entry.location == str(plist)
    assert not entry.is_enabled()
    entry.set_enabled(True)
    agent = plistlib.loads(plist.read_bytes())
    assert agent["ProgramArguments"] == ["/Applications/Tabrelay.app/Contents/MacOS/Tabrelay"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] is False
    assert agent["EnvironmentVariables"] == {"TABRELAY_HOME": "/Users/ann/portable"}
    assert entry.is_enabled()
    entry.set_enabled(False)
    assert not plist.exists()


def test_the_windows_run_value_is_set_and_deleted_through_the_registry() -> None:
    key = FakeRunKey()
    key.set("OtherApp", r"C:\Other\other.exe")
    entry = Autostart(
        platform="win32",
        env={},
        run_key=key,
        command=[r"C:\Program Files\Tabrelay\Tabrelay.exe"],
    )
    assert entry.location.endswith(r"CurrentVersion\Run\Tabrelay")
    assert not entry.is_enabled()
    entry.set_enabled(True)
    assert key.values == {
        "OtherApp": r"C:\Other\other.exe",
        "Tabrelay": r'"C:\Program Files\Tabrelay\Tabrelay.exe"',
    }
    assert entry.is_enabled()
    entry.set_enabled(False)
    assert key.values == {"OtherApp": r"C:\Other\other.exe"}


def test_a_failure_to_write_is_a_readable_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    entry = Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(blocker)}, command=["x"])
    with pytest.raises(ConfigError) as raised:
        entry.set_enabled(True)
    assert raised.value.title == "Start at login"
    assert "could not turn on start at login" in raised.value.message


def test_the_packagers_templates_match_what_the_app_writes() -> None:
    command = ["/usr/bin/tabrelay"]
    template = (RESOURCES / "linux" / "tabrelay.desktop.in").read_text(encoding="utf-8")
    rendered = (
        template.replace("@EXEC@", desktop_exec(command))
        .replace("@TRYEXEC@", command[0])
        .replace("@ICON@", "tabrelay")
    )
    assert rendered == desktop_entry(command, {}, icon="tabrelay")

    plist = (RESOURCES / "macos" / f"{autostart_module.LAUNCH_AGENT_LABEL}.plist.in").read_text()
    from_template = plistlib.loads(plist.replace("@EXEC@", command[0]).encode())
    assert from_template == plistlib.loads(launch_agent(command, {}))
