"""Everything Tabrelay writes is private: folders 0700, files 0600, whatever the umask.

Each test runs under umask 022 (a library or a test harness may set it), so a mode that is
right only because the entry point set umask 077 shows up here as a failure.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.logs import logging_restored
from support.modes import mode, not_private
from tabrelay.config.files import atomic_write, file_lock
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import SettingsStore
from tabrelay.store.commandlog import CommandEntry, CommandLog
from tabrelay.system.doctor import Doctor
from tabrelay.system.logs import Redactor, setup_logging

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes; Windows uses ACLs")


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture(name="logging_restored")
def _logging_restored() -> Iterator[None]:
    with logging_restored():
        yield


def entry() -> CommandEntry:
    return CommandEntry(
        time=1_000_000.0,
        client="cursor",
        tool="browser_click",
        arguments="{}",
        decision="allowed by policy",
        status="ok",
        duration_ms=1.0,
    )


def test_the_command_log_and_its_wal_and_shm_files_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    log = CommandLog(home / "data" / "commands.sqlite3")
    try:
        log.record(entry())
        names = {p.name for p in (home / "data").iterdir()}
        assert {"commands.sqlite3", "commands.sqlite3-wal", "commands.sqlite3-shm"} <= names
        assert not_private(home) == []
    finally:
        log.close()


def test_a_command_log_others_could_read_is_closed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "commands.sqlite3"
    CommandLog(path).close()
    path.chmod(0o644)
    log = CommandLog(path)
    try:
        log.record(entry())
        assert mode(path) == 0o600
        assert mode(path.with_name(path.name + "-wal")) == 0o600
    finally:
        log.close()


@pytest.mark.usefixtures("logging_restored")
def test_the_log_file_and_its_rollovers_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    log_file = home / "logs" / "tabrelay.log"
    setup_logging(Redactor(), log_file=log_file, stderr=False)
    logging.getLogger("tabrelay.test").warning("before the rollover")
    [handler] = [h for h in logging.getLogger().handlers if getattr(h, "tabrelay", False)]
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    handler.doRollover()
    logging.getLogger("tabrelay.test").warning("after the rollover")
    handler.flush()
    assert "before the rollover" in log_file.with_name("tabrelay.log.1").read_text()
    assert "after the rollover" in log_file.read_text()
    assert not_private(home) == []


@pytest.mark.usefixtures("logging_restored")
def test_a_log_file_others_could_read_is_closed_when_logging_starts(tmp_path: Path) -> None:
    log_file = tmp_path / "tabrelay.log"
    log_file.write_text("an old line\n")
    log_file.chmod(0o644)
    setup_logging(Redactor(), log_file=log_file, stderr=False)
    assert mode(log_file) == 0o600


def test_lock_files_are_private_new_or_old(tmp_path: Path) -> None:
    new, old = tmp_path / "new.lock", tmp_path / "old.lock"
    old.touch(mode=0o644)
    for path in (new, old):
        with file_lock(path):
            assert mode(path) == 0o600


def test_atomic_write_makes_a_private_folder_and_never_shows_others_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    replace = os.replace

    def spy(src: str, dst: Path) -> None:
        seen.append(mode(Path(src)))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    atomic_write(tmp_path / "home" / "config" / "instance.json", b"{}")
    assert seen == [0o600]
    assert not_private(tmp_path / "home") == []


def test_atomic_write_keeps_an_explicitly_public_mode(tmp_path: Path) -> None:
    # The XDG autostart entry is meant to be readable: 0644 on purpose.
    atomic_write(tmp_path / "tabrelay.desktop", b"[Desktop Entry]\n", mode=0o644)
    assert mode(tmp_path / "tabrelay.desktop") == 0o644


def test_a_settings_file_set_aside_as_bad_stays_private(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: setattr(s, "relay_port", 24001))
    with open(home.settings_file, "w", encoding="utf-8") as broken:  # keeps the file's mode
        broken.write("{oops")
    store.load()
    [bad] = list(home.config_dir.glob("settings.json.*.bad"))
    assert mode(bad) == 0o600


def loose_install(paths: Paths) -> None:
    """An install from before: folders 0755, files 0644, as a umask of 022 leaves them."""
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir, paths.secrets_dir):
        folder.mkdir(parents=True, mode=0o755)
    paths.settings_file.write_text(json.dumps({"relay_port": 24001}))
    paths.log_file.write_text("old\n")
    paths.log_file.with_name("tabrelay.log.3").write_text("older\n")
    paths.command_log_file.write_bytes(b"")
    paths.secrets_file.write_text("{}")
    (paths.config_dir / "settings.json.lock").touch()
    (paths.data_dir / "nested").mkdir(mode=0o755)
    (paths.data_dir / "nested" / "deep.txt").write_text("x")


def test_tightening_closes_an_install_others_could_read(tmp_path: Path) -> None:
    paths = Paths.resolve({"TABRELAY_HOME": str(tmp_path / "home")})
    loose_install(paths)
    assert not_private(tmp_path / "home") != []
    paths.tighten()
    # Left to the secret store, which repairs it and tells the person to rotate the tokens.
    assert not_private(tmp_path / "home") == ["secrets/secrets.json 0o644"]
    tokens = TokenStore.open(paths)
    assert tokens.client_token("cursor") is None
    assert any(str(paths.secrets_file) in problem for problem in tokens.all_problems())
    assert not_private(tmp_path / "home") == []


def test_tightening_never_follows_a_symlink_out_of_the_apps_folders(tmp_path: Path) -> None:
    paths = Paths.resolve({"TABRELAY_HOME": str(tmp_path / "home")})
    loose_install(paths)
    outside_file = tmp_path / "shared.txt"
    outside_file.write_text("someone else's")
    outside_file.chmod(0o644)
    outside_dir = tmp_path / "shared"
    outside_dir.mkdir(mode=0o755)
    (outside_dir / "inside.txt").write_text("x")
    (paths.config_dir / "link-to-file").symlink_to(outside_file)
    (paths.data_dir / "link-to-dir").symlink_to(outside_dir, target_is_directory=True)
    beside = tmp_path / "home" / "not-tabrelays.txt"  # in the home but no app folder's
    beside.write_text("x")
    beside.chmod(0o644)
    paths.tighten()
    assert mode(outside_file) == 0o644
    assert mode(outside_dir) == 0o755
    assert mode(outside_dir / "inside.txt") == 0o644
    assert mode(beside) == 0o644
    assert (paths.config_dir / "link-to-file").is_symlink()
    assert mode(paths.config_dir) == 0o700 and mode(paths.settings_file) == 0o600


def test_doctor_warns_about_a_file_others_can_read_and_says_how_to_fix_it(home: Paths) -> None:
    SettingsStore(home.settings_file).update(lambda s: setattr(s, "relay_port", 0))
    home.tighten()
    home.settings_file.chmod(0o644)
    [check] = [c for c in Doctor(home).run() if c.name == "permissions"]
    assert check.status == "warn"
    assert str(home.settings_file) in check.detail
    assert "chmod -R go=" in check.fix and str(home.config_dir.parent) in check.fix


def test_doctor_says_nothing_about_permissions_when_all_is_private(home: Paths) -> None:
    SettingsStore(home.settings_file).update(lambda s: setattr(s, "relay_port", 0))
    home.tighten()
    assert not_private(home.config_dir.parent) == []
    assert [c for c in Doctor(home).run() if c.name == "permissions"] == []
