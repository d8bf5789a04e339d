"""The command line as a person runs it: real processes, exit codes, one clear line on errors."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tabrelay.config.paths import Paths
from tabrelay.config.settings import Settings, SettingsStore

EXTENSION = "abcdefghijklmnopabcdefghijklmnop"


def run(home: Paths, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabrelay", *args],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _env(home: Paths) -> dict[str, str]:
    return {**os.environ, "TABRELAY_HOME": str(home.config_dir.parent)}


def test_version(home: Paths) -> None:
    result = run(home, "--version")
    assert (result.returncode, result.stdout) == (0, "tabrelay 0.1.0\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["frobnicate"], "invalid choice"),
        (["pair"], "required"),
        (["pair", "allow"], "required: EXTENSION_ID"),
        (["pair", "allow", "not-an-id"], "is not an extension id"),
        (["serve", "--relay-port", "99999"], "not between 0 and 65535"),
        (["serve", "--relay-port", "many"], "not a port number"),
    ],
)
def test_usage_errors_exit_2_with_one_line(home: Paths, args: list[str], message: str) -> None:
    result = run(home, *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("tabrelay")


def test_pairing_from_the_command_line(home: Paths) -> None:
    assert "No extension is paired" in run(home, "pair", "list").stdout
    assert run(home, "pair", "allow", f"chrome-extension://{EXTENSION}/").returncode == 0
    assert run(home, "pair", "allow", EXTENSION).returncode == 0  # idempotent
    listed = run(home, "pair", "list").stdout.splitlines()
    assert len(listed) == 1 and listed[0].startswith(EXTENSION)
    assert run(home, "pair", "revoke", EXTENSION).returncode == 0
    again = run(home, "pair", "revoke", EXTENSION)
    assert again.returncode == 1
    assert again.stderr == f"tabrelay: extension {EXTENSION} is not paired\n"


def test_token_show_and_rotate(home: Paths) -> None:
    first = run(home, "token", "show").stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", first)
    assert run(home, "token", "show").stdout.strip() == first
    rotated = run(home, "token", "rotate")
    assert rotated.returncode == 0 and first not in rotated.stdout
    assert run(home, "token", "show").stdout.strip() != first
    assert SettingsStore(home.settings_file).load().secrets_revision == 1


def test_a_broken_settings_file_is_reported_not_fatal(home: Paths) -> None:
    home.config_dir.mkdir(parents=True)
    home.settings_file.write_text("{oops")
    result = run(home, "pair", "list")
    assert result.returncode == 0
    assert "settings are not valid JSON" in result.stderr
    assert list(home.config_dir.glob("*.bad"))


def test_doctor_reports_each_check_and_how_to_fix_it(home: Paths) -> None:
    SettingsStore(home.settings_file).update(_free_ports)
    result = run(home, "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[ok  ] settings" in result.stdout
    assert "[WARN] secrets: file" in result.stdout and "fix: install and unlock" in result.stdout
    assert "[info] app: Tabrelay is not running" in result.stdout
    assert "[WARN] paired extensions" in result.stdout
    token = run(home, "token", "show").stdout.strip()
    assert token not in result.stdout


def test_doctor_fails_when_the_relay_port_is_taken(home: Paths) -> None:
    with _taken_port() as port:
        SettingsStore(home.settings_file).update(lambda s: setattr(s, "relay_port", port))
        result = run(home, "doctor")
    assert result.returncode == 1
    assert f"[FAIL] relay port: port {port} is used by another program" in result.stdout


# --- serve ----------------------------------------------------------------------------------


@pytest.fixture
def served(home: Paths) -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tabrelay", "serve", "--relay-port", "0"],
        env=_env(home),
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    port = 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        match = re.search(r"serving relay on ws://127\.0\.0\.1:(\d+)/", line)
        if match:
            port = int(match.group(1))
            break
    assert port, "serve did not report its port"
    yield process, port
    if process.poll() is None:
        process.kill()
        process.wait(10)


def test_serve_answers_health_checks_and_stops_cleanly_on_sigterm(
    home: Paths, served: tuple[subprocess.Popen[str], int]
) -> None:
    process, port = served
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
        assert json.loads(reply.read()) == {"status": "ok", "version": "0.1.0", "browsers": 0}
    instance = json.loads(home.instance_file.read_text())
    assert instance["pid"] == process.pid and instance["relay_port"] == port
    doctor = run(home, "doctor")
    assert f"running (pid {process.pid}, relay port {port}" in doctor.stdout
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 0
    assert not home.instance_file.exists()


def test_serve_listens_only_on_loopback(served: tuple[subprocess.Popen[str], int]) -> None:
    import psutil

    process, _ = served
    listening = [
        c.laddr for c in psutil.Process(process.pid).net_connections() if c.status == "LISTEN"
    ]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening)


def test_serve_with_the_port_taken_exits_1_with_one_line(home: Paths) -> None:
    with _taken_port() as port:
        result = run(home, "serve", "--relay-port", str(port))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("tabrelay:")]
    assert lines == [
        f"tabrelay: cannot listen on 127.0.0.1:{port} for the browser relay: Address already "
        "in use. Is another Tabrelay (or another program) using the port? Quit it or choose "
        "another relay port."
    ]
    assert not home.instance_file.exists()


def test_serve_refuses_a_non_loopback_host(home: Paths) -> None:
    def expose(settings: Settings) -> None:
        settings.host = "0.0.0.0"

    SettingsStore(home.settings_file).update(expose)
    result = run(home, "serve", "--relay-port", "0")
    assert result.returncode == 1
    assert "tabrelay: refusing to listen on 0.0.0.0" in result.stderr


def _free_ports(settings: Settings) -> None:
    settings.relay_port = 0
    settings.mcp_port = 0


class _taken_port:
    def __enter__(self) -> int:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
