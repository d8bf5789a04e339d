"""The real ``tabrelay`` under a loose umask (022) writes nothing another user could read.

Each command runs as ``sh -c 'umask 022; exec python -m tabrelay …'``, as a person's shell or
a service manager might start it: whatever the app writes under TABRELAY_HOME must still be
0700 (folders) and 0600 (files), and an older install others could read is closed on start.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.modes import mode, not_private
from support.processes import stop_group
from tabrelay.config.paths import Paths

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes; Windows uses ACLs")

LOOSE = ["sh", "-c", 'umask 022; exec "$0" "$@"', sys.executable, "-m", "tabrelay"]
EXTENSION = "abcdefghijklmnopabcdefghijklmnop"


def env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TABRELAY_HOME": str(home),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }


def tabrelay(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*LOOSE, *args], env=env(home), capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, f"tabrelay {' '.join(args)}: {result.stderr}"
    return result


def files_under(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()}


def test_everything_serve_and_the_commands_write_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tabrelay(home, "client", "add", "x")  # the first command, in a home that did not exist
    assert not_private(home) == [], "readable by others after the first command"
    process = subprocess.Popen(
        [*LOOSE, "serve", "--relay-port", "0", "--mcp-port", "0"],
        env=env(home),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line or re.search(r"serving relay on ws://", line):
                break
        assert process.poll() is None, "serve stopped before it was ready"
        tabrelay(home, "client", "add", "y")
        tabrelay(home, "pair", "allow", EXTENSION)
        tabrelay(home, "log", "tail")
        running = files_under(home)
        assert not_private(home) == [], "readable by others while serving"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        stop_group(process, grace=5)
    assert {
        "config/settings.json",
        "config/settings.json.lock",
        "data/commands.sqlite3",
        "data/commands.sqlite3-wal",
        "data/commands.sqlite3-shm",
        "data/instance.json",
        "logs/tabrelay.log",
        "secrets/secrets.json",
        "secrets/secrets.json.lock",
    } <= running, f"the app wrote fewer files than expected: {sorted(running)}"
    assert not_private(home) == [], "readable by others after serving"


def test_a_log_export_is_private_even_over_a_file_others_could_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fresh, old = tmp_path / "fresh.jsonl", tmp_path / "old.csv"
    old.write_text("")
    old.chmod(0o644)
    tabrelay(home, "log", "export", "--output", str(fresh))
    tabrelay(home, "log", "export", "--format", "csv", "--output", str(old))
    assert (mode(fresh), mode(old)) == (0o600, 0o600)


def test_an_install_others_could_read_is_closed_on_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    paths = Paths.resolve({"TABRELAY_HOME": str(home)})
    previous = os.umask(0o022)  # the modes an older install was left with
    try:
        for folder in (paths.config_dir, paths.data_dir, paths.log_dir, paths.secrets_dir):
            folder.mkdir(parents=True)
        paths.settings_file.write_text(json.dumps({"relay_port": 24001}))
        paths.log_file.write_text("old\n")
        paths.log_file.with_name("tabrelay.log.2").write_text("older\n")
        paths.secrets_file.write_text("{}")
        outside = tmp_path / "someone-elses.txt"
        outside.write_text("x")
        (paths.data_dir / "link").symlink_to(outside)
    finally:
        os.umask(previous)
    assert not_private(home) != []
    started = tabrelay(home, "client", "add", "z")
    assert not_private(home) == []
    # The secret store repairs its own file and says so: its tokens may have been read.
    assert f"{paths.secrets_file} was readable by other users" in started.stderr
    assert mode(outside) == 0o644, "a symlink out of the app's folders was followed"


def test_a_broken_settings_file_others_could_read_is_set_aside_privately(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True, mode=0o755)
    (home / "config" / "settings.json").write_text("{oops")
    (home / "config" / "settings.json").chmod(0o644)
    tabrelay(home, "pair", "list")
    [bad] = list((home / "config").glob("settings.json.*.bad"))
    assert mode(bad) == 0o600
    assert not_private(home) == []
