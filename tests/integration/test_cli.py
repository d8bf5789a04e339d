"""The command line as a person runs it: real processes, exit codes, one clear line on errors."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.net import taken_port
from tabrelay.config.paths import Paths
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.store.commandlog import CommandEntry, CommandLog

EXTENSION = "abcdefghijklmnopabcdefghijklmnop"


def run(
    home: Paths, *args: str, timeout: float = 30, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabrelay", *args],
        env=_env(home) | (env or {}),
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
    assert "No browser is paired" in run(home, "pair", "list").stdout
    allowed = run(home, "pair", "allow", f"chrome-extension://{EXTENSION}/", "--minutes", "5")
    assert allowed.returncode == 0 and "may pair once within 5 minutes" in allowed.stdout
    assert run(home, "pair", "allow", EXTENSION).returncode == 0  # idempotent
    waiting = run(home, "pair", "list").stdout.splitlines()
    assert waiting[0].startswith("No browser is paired")
    assert waiting[1].startswith("(allowed to pair until ") and waiting[1].endswith(
        f": {EXTENSION})"
    )
    added = run(home, "pair", "add", EXTENSION)
    credential = re.search(r"\n  ([A-Za-z0-9_-]{43})\n", added.stdout)
    assert added.returncode == 0 and credential is not None
    [paired] = SettingsStore(home.settings_file).load().pairings
    assert paired.extension_id == EXTENSION
    listed = run(home, "pair", "list").stdout
    assert listed.startswith(f"{paired.id}  {EXTENSION}  paired ")
    assert credential.group(1) not in listed, "a credential is shown once, when made"
    assert run(home, "pair", "revoke", paired.id).returncode == 0
    again = run(home, "pair", "revoke", EXTENSION)
    assert again.returncode == 1
    assert (
        again.stderr == f"tabrelay: nothing is paired as {EXTENSION} (see `tabrelay pair list`)\n"
    )
    bad = run(home, "pair", "allow", EXTENSION, "--minutes", "0")
    assert bad.returncode == 2 and "--minutes must be more than 0" in bad.stderr
    coded = run(home, "pair", "allow", EXTENSION, "--code", "k7pq2m")
    assert coded.returncode == 0 and "showing the code K7PQ2M" in coded.stdout
    [grant] = SettingsStore(home.settings_file).load().pairing_grants
    assert grant.code == "K7PQ2M"
    for code in ("K7PQ2", "K7PQ20", "not-a-code"):
        wrong = run(home, "pair", "allow", EXTENSION, "--code", code)
        assert wrong.returncode == 2 and "is not a pairing code" in wrong.stderr


def test_there_is_no_shared_token_to_show_and_rotation_unpairs_every_browser(home: Paths) -> None:
    shown = run(home, "token", "show")
    assert shown.returncode == 1 and "no shared relay token" in shown.stderr
    assert "tabrelay pair add" in shown.stderr
    first = re.search(r"\n  (\S{43})\n", run(home, "pair", "add").stdout)
    assert first is not None
    rotated = run(home, "token", "rotate")
    assert rotated.returncode == 0 and first.group(1) not in rotated.stdout
    assert "(1 paired browser)" in rotated.stdout
    settings = SettingsStore(home.settings_file).load()
    assert settings.pairings == [] and settings.rotations == 1


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
    # Doctor looks and never decides where secrets live: the app (or a command) does.
    assert "[info] secrets: not decided yet" in result.stdout
    assert SettingsStore(home.settings_file).load().secrets_place is None
    assert "[info] app: Tabrelay is not running" in result.stdout
    assert "[WARN] paired browsers" in result.stdout
    token = re.search(r"\n  (\S{43})\n", run(home, "pair", "add").stdout)
    assert token is not None
    after = run(home, "doctor").stdout
    assert "[WARN] secrets: file" in after and "fix: install and unlock" in after
    assert token.group(1) not in after


def test_doctor_fails_when_the_relay_port_is_taken(home: Paths) -> None:
    with taken_port() as port:
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
    with taken_port() as port:
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


# --- clients, policy, log -------------------------------------------------------------------


def test_client_add_shows_the_token_once_with_a_snippet_per_client(home: Paths) -> None:
    added = run(home, "client", "add", "cursor")
    assert added.returncode == 0, added.stderr
    token = re.search(r"\n  ([A-Za-z0-9_-]{43})\n", added.stdout)
    assert token is not None
    for label in ("Claude Desktop", "Claude Code", "Cursor", "VS Code", "Windsurf", "Codex"):
        assert f"## {label}" in added.stdout
    assert "claude mcp add --transport http tabrelay http://127.0.0.1:23002/mcp" in added.stdout
    assert '"mcp-stdio"' in added.stdout  # Claude Desktop goes through the bridge
    assert token.group(1) not in run(home, "client", "list").stdout
    again = run(home, "client", "add", "cursor")
    assert again.returncode == 2 and "exists" in again.stderr
    bad = run(home, "client", "add", "no spaces")
    assert bad.returncode == 2 and "is not a client name" in bad.stderr
    assert run(home, "client", "revoke", "cursor").returncode == 0
    missing = run(home, "client", "revoke", "cursor")
    assert missing.returncode == 1
    assert missing.stderr == "tabrelay: no MCP client is named 'cursor'\n"


def test_client_snippets_carry_the_portable_home_and_a_codex_wait_above_the_approval_wait(
    home: Paths,
) -> None:
    SettingsStore(home.settings_file).update(lambda s: setattr(s, "approval_timeout", 600))
    added = run(home, "client", "add", "codex")
    assert added.returncode == 0, added.stderr
    # "## Label" lines head each client's snippet.
    sections = dict(part.split("\n", 1) for part in added.stdout.split("\n## ")[1:])
    codex = tomllib.loads(sections["Codex"])["mcp_servers"]["tabrelay"]
    desktop = json.loads(sections["Claude Desktop"])["mcpServers"]["tabrelay"]
    portable = {"TABRELAY_HOME": str(home.config_dir.parent)}  # the tests' TABRELAY_HOME
    assert codex["env"] == portable and desktop["env"] == portable
    assert codex["args"] == desktop["args"] == ["mcp-stdio", "--client", "codex"]
    assert codex["tool_timeout_sec"] > 600


def test_client_add_to_a_client_writes_its_config_file_and_a_bad_file_loses_nothing(
    home: Paths, tmp_path: Path
) -> None:
    user = {"HOME": str(tmp_path / "user"), "XDG_CONFIG_HOME": str(tmp_path / "user" / ".config")}
    added = run(home, "client", "add", "cursor", "--to", "cursor", env=user)
    assert added.returncode == 0, added.stderr
    config = tmp_path / "user" / ".cursor" / "mcp.json"
    token = re.search(r"\n  ([A-Za-z0-9_-]{43})\n", added.stdout)
    assert token is not None and f"Added Tabrelay to Cursor's {config}" in added.stdout
    entry = json.loads(config.read_text())["mcpServers"]["tabrelay"]
    assert entry["headers"] == {"Authorization": f"Bearer {token[1]}"}
    assert config.stat().st_mode & 0o777 == 0o600, "it holds a token"
    assert "## Claude Desktop" not in added.stdout, "one client asked for, one written"

    # A config file that does not parse is left exactly as it was; the snippet is printed.
    broken = tmp_path / "user" / ".codex" / "config.toml"
    broken.parent.mkdir(parents=True)
    broken.write_text("[mcp_servers.other\ncommand = 'x'\n")
    refused = run(home, "client", "add", "codex", "--to", "codex", env=user)
    assert refused.returncode == 1
    assert str(broken) in refused.stderr and "by hand" in refused.stderr
    assert broken.read_text() == "[mcp_servers.other\ncommand = 'x'\n"
    assert list(broken.parent.iterdir()) == [broken], "no backup of a file not changed"
    assert "[mcp_servers.tabrelay]" in refused.stdout
    assert "codex" in run(home, "client", "list").stdout, "the client itself was made"

    unknown = run(home, "client", "add", "other", "--to", "notepad", env=user)
    assert unknown.returncode == 2 and "invalid choice: 'notepad'" in unknown.stderr
    assert "other" not in run(home, "client", "list").stdout


def test_policy_rules_from_the_command_line(home: Paths) -> None:
    assert "No rules." in run(home, "policy", "list").stdout
    unknown = run(home, "policy", "set", "browser_teleport", "allow")
    assert unknown.returncode == 2 and "unknown tool 'browser_teleport'" in unknown.stderr
    ok = run(
        home,
        "policy",
        "set",
        "browser_evaluate",
        "allow",
        "--site",
        "Example.COM",
        "--client",
        "cursor",
        "--hours",
        "2",
    )
    assert ok.returncode == 0, ok.stderr
    assert "allow browser_evaluate on https://example.com for cursor until" in ok.stdout
    run(home, "policy", "set", "*", "deny", "--site", "https://bank.example")
    run(home, "policy", "set", "*", "ask", "--site", "https://bank.example")  # replaces it
    listed = run(home, "policy", "list").stdout
    assert "1. allow browser_evaluate on https://example.com for cursor" in listed
    assert "2. ask * on https://bank.example" in listed and "deny" not in listed
    # A rule may name what a call does rather than the tool (issue 25).
    effect = run(home, "policy", "set", "effect:send", "allow", "--site", "chat.example")
    assert effect.returncode == 0 and "allow effect:send on https://chat.example" in effect.stdout
    unknown_effect = run(home, "policy", "set", "effect:teleport", "allow")
    assert unknown_effect.returncode == 2 and "effect:send" in unknown_effect.stderr
    assert "3. allow effect:send on https://chat.example" in run(home, "policy", "list").stdout
    bad_site = run(home, "policy", "set", "*", "allow", "--site", "file:///etc")
    assert bad_site.returncode == 2 and "is not a site" in bad_site.stderr
    assert run(home, "policy", "set", "*", "maybe").returncode == 2
    assert run(home, "policy", "reset").returncode == 0
    assert "No rules." in run(home, "policy", "list").stdout


def test_log_tail_and_export(home: Paths, tmp_path: Path) -> None:
    log = CommandLog(home.command_log_file)
    for n in range(3):
        log.record(
            CommandEntry(
                time=1_700_000_000.0 + n,
                client="cursor",
                tool="browser_navigate",
                arguments=json.dumps({"url": f"https://e.test/{n}"}),
                decision="approved once by the person",
                status="ok",
                duration_ms=40.0,
                result_bytes=60,
                tab_id=4,
                origin="https://e.test",
                targets='e7: button "Buy", in the main frame' if n == 2 else None,
            )
        )
    log.close()
    tail = run(home, "log", "tail", "-n", "2").stdout.splitlines()
    assert len(tail) == 2 and "https://e.test/2" in tail[1] and "cursor" in tail[0]
    assert '→ e7: button "Buy", in the main frame' in tail[1] and "→" not in tail[0]
    target = tmp_path / "calls.csv"
    assert run(home, "log", "export", "--format", "csv", "-o", str(target)).returncode == 0
    assert target.read_text().count("browser_navigate") == 3
    jsonl = run(home, "log", "export").stdout.splitlines()
    assert next(json.loads(line)["arguments"] for line in jsonl) == '{"url": "https://e.test/0"}'
    unwritable = run(home, "log", "export", "-o", str(tmp_path / "missing" / "x.csv"))
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr


def test_secrets_where_and_use_move_every_secret_and_say_so(home: Paths) -> None:
    assert run(home, "client", "add", "agent").returncode == 0
    where = run(home, "secrets", "where")
    # The tests' keyring is keyring's `fail` backend: the file was decided, and said once.
    assert where.returncode == 0 and f"file {home.secrets_file}" in where.stdout
    again = run(home, "secrets", "use", "file")
    assert again.returncode == 0 and "already live in" in again.stdout
    refused = run(home, "secrets", "use", "keychain")
    assert refused.returncode == 1 and "no usable keychain here" in refused.stderr
    assert json.loads(home.secrets_file.read_text()).keys() == {"client:agent"}
    bad = run(home, "secrets", "use", "closet")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_a_second_headless_start_says_already_running(
    home: Paths, served: tuple[subprocess.Popen[str], int]
) -> None:
    """The bug: "Address already in use… choose another port" while the app was running."""
    process, _ = served
    second = run(home, "serve", "--relay-port", "0", "--mcp-port", "0")
    assert second.returncode == 0
    assert f"Tabrelay is already running (process {process.pid}" in second.stderr
    assert "Address already in use" not in second.stderr
