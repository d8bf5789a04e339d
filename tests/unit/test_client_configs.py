"""MCP client setup: snippets per client, and merging into config files without clobbering.

Every write goes to a real file in a temporary folder: what the person had (other servers,
every key of the Tabrelay entry, comments, the BOM, line endings, the file's mode, a symlink)
survives, what Tabrelay writes parses, and a file it cannot handle is left exactly as it was.
"""

from __future__ import annotations

import json
import math
import stat
import time
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabrelay.cli import APP_START_TIMEOUT
from tabrelay.config.settings import Settings
from tabrelay.errors import ConfigError
from tabrelay.system import clients
from tabrelay.system.clients import CLIENTS, Endpoint, merge_into_config
from tabrelay.tools.catalog import TOOLS

ENDPOINT = Endpoint(
    url="http://127.0.0.1:23002/mcp",
    token="tok-123",
    client="cursor",
    command=("/opt/tabrelay/tabrelay",),
    env={},
)
PORTABLE = replace(ENDPOINT, env={"TABRELAY_HOME": "/media/stick/tabrelay"})
JSON_CLIENTS = [key for key, kind in CLIENTS.items() if kind.format != "codex"]
STDIO_ARGS = ["mcp-stdio", "--client", "cursor"]


def codex_entry(path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = tomllib.loads(path.read_text())["mcp_servers"]["tabrelay"]
    return entry


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- entries and snippets -----------------------------------------------------------------


def test_every_client_gets_the_entry_it_understands() -> None:
    entries = {key: kind.entry(ENDPOINT) for key, kind in CLIENTS.items()}
    stdio = {"command": "/opt/tabrelay/tabrelay", "args": STDIO_ARGS}
    auth = {"Authorization": "Bearer tok-123"}
    assert entries == {
        "claude-desktop": stdio,
        "claude-code": {"type": "http", "url": ENDPOINT.url, "headers": auth},
        "cursor": {"url": ENDPOINT.url, "headers": auth},
        "vscode": {"type": "http", "url": ENDPOINT.url, "headers": auth},
        "windsurf": {"serverUrl": ENDPOINT.url, "headers": auth},
        "codex": {
            **stdio,
            "env_vars": list(clients.CODEX_ENV_VARS),
            "startup_timeout_sec": clients.STARTUP_TIMEOUT,
            "tool_timeout_sec": clients.codex_tool_timeout(ENDPOINT.approval_timeout),
        },
    }


def test_snippets_are_ready_to_paste() -> None:
    assert CLIENTS["claude-code"].snippet(ENDPOINT) == (
        "claude mcp add --transport http tabrelay http://127.0.0.1:23002/mcp "
        '--header "Authorization: Bearer tok-123"'
    )
    vscode = json.loads(CLIENTS["vscode"].snippet(ENDPOINT))
    assert vscode["servers"]["tabrelay"]["type"] == "http"
    desktop = json.loads(CLIENTS["claude-desktop"].snippet(ENDPOINT))
    assert "tok-123" not in json.dumps(desktop)  # the stdio bridge reads it from the keychain
    codex = tomllib.loads(CLIENTS["codex"].snippet(ENDPOINT))
    assert codex["mcp_servers"]["tabrelay"] == CLIENTS["codex"].entry(ENDPOINT)


def test_a_portable_install_carries_its_home_to_every_client_that_starts_tabrelay() -> None:
    home = {"TABRELAY_HOME": "/media/stick/tabrelay"}
    desktop = json.loads(CLIENTS["claude-desktop"].snippet(PORTABLE))
    assert desktop["mcpServers"]["tabrelay"]["env"] == home
    codex = tomllib.loads(CLIENTS["codex"].snippet(PORTABLE))
    assert codex["mcp_servers"]["tabrelay"]["env"] == home
    for key, kind in CLIENTS.items():
        if kind.transport == "http":  # the URL and token already name this install
            assert "TABRELAY_HOME" not in kind.snippet(PORTABLE), key


def test_an_endpoint_takes_the_portable_home_from_the_environment_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TABRELAY_HOME", "stick")
    endpoint = Endpoint(url=ENDPOINT.url, token="t", client="c", command=("tabrelay",))
    assert endpoint.env == {"TABRELAY_HOME": str(tmp_path / "stick")}
    monkeypatch.delenv("TABRELAY_HOME")
    assert Endpoint(url=ENDPOINT.url, token="t", client="c", command=("tabrelay",)).env == {}


def _longest_tool_wait() -> float:
    """The largest ``timeout``/``seconds`` any tool's schema allows."""
    longest = 0.0
    for spec in TOOLS:
        stack: list[Any] = [spec.params.model_json_schema()]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for name, prop in (node.get("properties") or {}).items():
                    if name in ("timeout", "seconds") and isinstance(prop, dict):
                        for option in [prop, *prop.get("anyOf", [])]:
                            longest = max(longest, float(option.get("maximum", 0)))
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return longest


@pytest.mark.parametrize("approval_timeout", [5.0, 60.0, 600.0, 3600.0])
def test_codex_waits_for_a_call_longer_than_the_person_and_the_tool_may_take(
    approval_timeout: float,
) -> None:
    longest = _longest_tool_wait()
    assert longest >= 60  # the catalog really was read
    entry = CLIENTS["codex"].entry(replace(ENDPOINT, approval_timeout=approval_timeout))
    needed = approval_timeout + longest + Settings().command_timeout
    assert entry["tool_timeout_sec"] > needed
    assert entry["tool_timeout_sec"] >= 300  # never below Codex's own default
    # mcp-stdio may have to start the app first, which it waits for up to APP_START_TIMEOUT.
    assert entry["startup_timeout_sec"] > APP_START_TIMEOUT


# --- merging: what the person had stays ----------------------------------------------------


def test_merging_keeps_other_servers_backs_up_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    original = {"mcpServers": {"github": {"command": "gh-mcp"}}, "theme": "dark"}
    path.write_text(json.dumps(original))
    first = merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    assert first.changed and first.backup is not None
    assert json.loads(first.backup.read_text()) == original
    merged = json.loads(path.read_text())
    assert merged["mcpServers"]["github"] == {"command": "gh-mcp"}
    assert merged["theme"] == "dark"
    assert merged["mcpServers"]["tabrelay"]["url"] == ENDPOINT.url
    again = merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    assert not again.changed and again.backup is None
    assert len(list(tmp_path.glob("mcp.json.bak-*"))) == 1


def test_merging_creates_a_missing_file_private_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "Claude" / "claude_desktop_config.json"
    result = merge_into_config(CLIENTS["claude-desktop"], ENDPOINT, path)
    assert result.changed and result.backup is None
    assert json.loads(path.read_text())["mcpServers"]["tabrelay"]["args"][0] == "mcp-stdio"
    assert mode_of(path) == 0o600
    assert mode_of(path.parent) == 0o700
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


@pytest.mark.parametrize("key", JSON_CLIENTS)
def test_every_key_the_person_had_in_a_json_entry_stays(tmp_path: Path, key: str) -> None:
    kind = CLIENTS[key]
    root = "servers" if kind.format == "servers" else "mcpServers"
    mine = {
        "disabled": False,
        "alwaysAllow": ["browser_snapshot"],
        "env": {"DEBUG": "1", "TABRELAY_HOME": "/somewhere/else"},
        "headers": {"X-Trace": "on", "authorization": "Bearer old"},
        "timeout": 600,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps({root: {"tabrelay": mine, "docs": {"url": "https://d"}}}))
    merge_into_config(kind, PORTABLE, path)
    data = json.loads(path.read_text())
    entry = data[root]["tabrelay"]
    assert data[root]["docs"] == {"url": "https://d"}
    assert entry["disabled"] is False and entry["alwaysAllow"] == ["browser_snapshot"]
    assert entry["timeout"] == 600
    if kind.transport == "stdio":
        assert entry["env"] == {"DEBUG": "1", "TABRELAY_HOME": "/media/stick/tabrelay"}
        assert entry["args"] == STDIO_ARGS
    else:
        # One Authorization header, the new one, whatever case the old one was in.
        assert entry["headers"] == {"X-Trace": "on", "Authorization": "Bearer tok-123"}
        assert entry["env"] == mine["env"]  # not Tabrelay's to manage for an HTTP client


def test_a_home_left_by_a_portable_install_goes_when_an_installed_one_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claude_desktop_config.json"
    merge_into_config(CLIENTS["claude-desktop"], PORTABLE, path)
    merge_into_config(CLIENTS["claude-desktop"], ENDPOINT, path)
    assert "env" not in json.loads(path.read_text())["mcpServers"]["tabrelay"]
    toml = tmp_path / "config.toml"
    toml.write_text('[mcp_servers.tabrelay.env]\nTABRELAY_HOME = "/old"\nDEBUG = "1"\n')
    merge_into_config(CLIENTS["codex"], ENDPOINT, toml)
    assert codex_entry(toml)["env"] == {"DEBUG": "1"}


def test_a_stdio_entry_loses_only_the_keys_that_would_make_it_an_http_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claude_desktop_config.json"
    old = {"type": "http", "url": "http://x/mcp", "headers": {"A": "b"}, "note": "mine"}
    path.write_text(json.dumps({"mcpServers": {"tabrelay": old}}))
    merge_into_config(CLIENTS["claude-desktop"], ENDPOINT, path)
    entry = json.loads(path.read_text())["mcpServers"]["tabrelay"]
    assert entry == {
        "headers": {"A": "b"},
        "note": "mine",
        **CLIENTS["claude-desktop"].entry(ENDPOINT),
    }
    cursor = tmp_path / "mcp.json"
    cursor.write_text(json.dumps({"mcpServers": {"tabrelay": {"command": "x", "args": []}}}))
    merge_into_config(CLIENTS["cursor"], ENDPOINT, cursor)
    assert json.loads(cursor.read_text())["mcpServers"]["tabrelay"] == CLIENTS["cursor"].entry(
        ENDPOINT
    )


# --- Codex's TOML, in every shape the table may already have --------------------------------

OTHERS = (
    '# My Codex settings\nmodel = "o4"  # the fast one\n\n'
    '[mcp_servers.docs]\nurl = "https://d"  # docs\n\n'
    '[profiles.work]\nmodel = "o3"\n'
)
# The person's own tool_timeout_sec, longer than the one Tabrelay writes (so it must stay).
LONGER = clients.codex_tool_timeout(PORTABLE.approval_timeout) + 600
W = str(LONGER)
PERSON = {"command": "old", "env": {"DEBUG": "1"}, "tool_timeout_sec": LONGER, "cwd": "/w"}

SHAPES = {
    "table": '[mcp_servers.tabrelay]\ncommand = "old"\ncwd = "/w"\ntool_timeout_sec = ' + W + "\n"
    '[mcp_servers.tabrelay.env]\nDEBUG = "1"\n',
    "inline table": '[mcp_servers]\ntabrelay = { command = "old", env = { DEBUG = "1" }, '
    "tool_timeout_sec = " + W + ', cwd = "/w" }\n',
    "quoted key": '[mcp_servers."tabrelay"]\ncommand = "old"\ntool_timeout_sec = ' + W + "\n"
    'cwd = \'/w\'\nenv = { "DEBUG" = "1" }\n',
    "literal quoted key with spaces": "[ mcp_servers . 'tabrelay' ]\ncommand = \"old\"\n"
    "tool_timeout_sec = " + W + '\ncwd = "/w"\nenv.DEBUG = "1"\n',
    "dotted keys": '[mcp_servers]\ntabrelay.command = "old"\ntabrelay.env.DEBUG = "1"\n'
    "tabrelay.tool_timeout_sec = " + W + '\n"tabrelay".cwd = "/w"\n',
    "root dotted keys": 'mcp_servers.tabrelay.command = "old"\n'
    'mcp_servers.tabrelay.env = { DEBUG = "1" }\nmcp_servers.tabrelay.tool_timeout_sec = '
    + W
    + "\n"
    'mcp_servers.tabrelay.cwd = "/w"\n',
    "root inline table": 'mcp_servers = { tabrelay = { command = "old", cwd = "/w", '
    "tool_timeout_sec = " + W + ', env = { DEBUG = "1" } }, docs2 = { url = "https://e" } }\n',
    "multi-line array and strings": '[mcp_servers.tabrelay]\ncommand = """old"""\n'
    "args = [\n  \"a\", # first\n  \"]\", '[mcp_servers.docs]',\n]\ncwd = '''/w'''\n"
    "tool_timeout_sec = " + W + '\nenv = { DEBUG = "1" }\n',
}


def _document(shape: str) -> str:
    tabrelay = SHAPES[shape]
    if shape.startswith("root"):  # root keys come before the first table
        head, tables = OTHERS.split("\n\n", 1)
        if shape == "root inline table":  # it defines every server: no [mcp_servers.*] after it
            tables = tables.split("\n\n", 1)[1]
        return head + "\n" + tabrelay + "\n" + tables
    return OTHERS + "\n" + tabrelay + '\n# a comment after it\n[mcp_servers.last]\ncommand = "l"\n'


@pytest.mark.parametrize("shape", list(SHAPES))
def test_codex_entry_is_replaced_whatever_shape_it_had_and_nothing_else_changes(
    tmp_path: Path, shape: str
) -> None:
    path = tmp_path / "config.toml"
    document = _document(shape)
    path.write_text(document)
    before = tomllib.loads(document)
    result = merge_into_config(CLIENTS["codex"], PORTABLE, path)
    assert result.changed
    after = tomllib.loads(path.read_text())  # it parses
    entry = after["mcp_servers"].pop("tabrelay")
    before["mcp_servers"].pop("tabrelay")
    assert after == before  # every other server and setting, exactly
    ours = CLIENTS["codex"].entry(PORTABLE)
    assert entry["command"] == ours["command"] and entry["args"] == ours["args"]
    assert entry["env"] == {"DEBUG": "1", "TABRELAY_HOME": "/media/stick/tabrelay"}
    assert entry["tool_timeout_sec"] == LONGER  # the person's longer wait stays
    assert entry["cwd"] == "/w"
    text = path.read_text()
    for comment in ("# My Codex settings", "# the fast one", "# docs", "# a comment after it"):
        assert (comment in text) == (comment in document)
    assert not merge_into_config(CLIENTS["codex"], PORTABLE, path).changed


def test_codex_keeps_a_longer_tool_timeout_and_raises_a_shorter_one(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[mcp_servers.tabrelay]\ntool_timeout_sec = 60\nstartup_timeout_sec = 5.5\n")
    result = merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    entry = codex_entry(path)
    assert entry["tool_timeout_sec"] == clients.codex_tool_timeout(ENDPOINT.approval_timeout)
    assert entry["startup_timeout_sec"] == clients.STARTUP_TIMEOUT
    assert any("tool_timeout_sec" in note and "60" in note for note in result.notes)


def test_codex_keeps_the_persons_forwarded_variables_and_adds_its_own(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.tabrelay]\nenv_vars = ["MY_VAR", "XDG_RUNTIME_DIR"]\n')
    merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    forwarded = codex_entry(path)["env_vars"]
    assert forwarded[:2] == ["MY_VAR", "XDG_RUNTIME_DIR"]
    assert sorted(forwarded) == sorted({"MY_VAR", *clients.CODEX_ENV_VARS})


def test_codex_http_keys_go_when_the_entry_becomes_stdio(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[mcp_servers.tabrelay]\nurl = "http://127.0.0.1:23002/mcp"\n'
        'bearer_token_env_var = "T"\nenabled = false\n'
        '[mcp_servers.tabrelay.http_headers]\nX = "1"\n'
    )
    merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    entry = codex_entry(path)
    assert entry["enabled"] is False  # the person turned it off: that is theirs to change
    assert not {"url", "bearer_token_env_var", "http_headers"} & set(entry)


def test_codex_keeps_crlf_line_endings_and_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = '\ufeffmodel = "o4"\r\n\r\n[mcp_servers.docs]\r\nurl = "https://d"\r\n'
    path.write_bytes(original.encode("utf-8"))
    merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    data = tomllib.loads(raw.decode("utf-8-sig"))
    assert data["model"] == "o4" and data["mcp_servers"]["docs"] == {"url": "https://d"}
    assert data["mcp_servers"]["tabrelay"] == CLIENTS["codex"].entry(ENDPOINT)


def test_a_json_bom_and_the_persons_indentation_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'\xef\xbb\xbf{\n    "mcpServers": {}\n}\n')
    merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    raw = path.read_bytes()
    assert raw.startswith(b'\xef\xbb\xbf{\n    "mcpServers"')
    assert json.loads(raw.decode("utf-8-sig"))["mcpServers"]["tabrelay"]["url"] == ENDPOINT.url


@st.composite
def codex_documents(draw: st.DrawFn) -> str:
    """Valid Codex configs: root keys, comments, other servers and tables in any order, and
    Tabrelay's entry in one of its shapes (or none)."""
    names = st.text(min_size=1, max_size=6).filter(lambda n: n not in ("tabrelay", "mcp_servers"))
    values = st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.booleans(),
        st.floats(allow_nan=False).map(lambda f: f if math.isfinite(f) else 1.5),
        st.text(max_size=12),
        st.lists(st.integers(0, 9), max_size=3),
    )
    root = draw(st.dictionaries(names, values, max_size=3))
    servers = draw(st.dictionaries(names, st.dictionaries(names, values, max_size=3), max_size=3))

    def pairs(table: dict[str, Any], comment: str = "") -> str:
        return "".join(
            f"{clients.toml_key(k)} = {clients.toml_value(v)}{comment}\n" for k, v in table.items()
        )

    text = pairs(root, "  # c")
    tables = [
        f"[mcp_servers.{clients.toml_key(name)}]\n" + pairs(table)
        for name, table in servers.items()
    ]
    shape = draw(st.sampled_from([None, *[s for s in SHAPES if not s.startswith("root")]]))
    if shape is not None:
        tables.insert(draw(st.integers(0, len(tables))), SHAPES[shape])
    return text + "\n# between\n\n".join(tables)


@settings(max_examples=150, deadline=None)
@given(document=codex_documents())
def test_any_codex_config_stays_valid_and_keeps_everything_else(document: str) -> None:
    before = tomllib.loads(document)
    updated, _notes = clients.merge_toml_text(document, CLIENTS["codex"].entry(PORTABLE))
    after = tomllib.loads(updated)
    entry = after["mcp_servers"].pop("tabrelay")
    before.setdefault("mcp_servers", {}).pop("tabrelay", None)
    assert after == before
    assert entry["env"]["TABRELAY_HOME"] == "/media/stick/tabrelay"


# --- backups, symlinks, modes ---------------------------------------------------------------


def test_a_backup_is_never_overwritten_even_by_two_writes_in_the_same_second(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.json"
    original = '{"mcpServers": {"docs": {"url": "https://d"}}}'
    path.write_text(original)
    # Backups already named for this second and the next few: none may be touched.
    now = time.time()
    taken = {}
    for offset in range(-1, 6):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + offset))
        name = tmp_path / f"mcp.json.bak-{stamp}"
        name.write_text(f"older backup {offset}")
        taken[name] = f"older backup {offset}"
    first = merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    second = merge_into_config(CLIENTS["cursor"], replace(ENDPOINT, token="tok-456"), path)
    assert first.backup is not None and second.backup is not None
    assert first.backup != second.backup and first.backup not in taken
    assert first.backup.read_text() == original  # the person's original survives
    assert json.loads(second.backup.read_text())["mcpServers"]["tabrelay"]["headers"] == {
        "Authorization": "Bearer tok-123"
    }
    for name, content in taken.items():
        assert name.read_text() == content
    assert mode_of(first.backup) == 0o600 and mode_of(second.backup) == 0o600


def test_a_backup_name_taken_by_a_symlink_is_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious")
    now = time.time()
    for offset in range(-1, 6):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + offset))
        (tmp_path / f"mcp.json.bak-{stamp}").symlink_to(elsewhere)
    result = merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    assert result.backup is not None and not result.backup.is_symlink()
    assert result.backup.read_text() == "{}"
    assert elsewhere.read_text() == "precious"


def test_a_symlinked_config_stays_a_link_and_its_target_keeps_its_mode(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    target.write_text('{"mcpServers": {"docs": {"command": "d"}}}')
    target.chmod(0o644)
    link = tmp_path / "Claude" / "claude_desktop_config.json"
    link.parent.mkdir()
    link.symlink_to(target)
    result = merge_into_config(CLIENTS["claude-desktop"], ENDPOINT, link)
    assert link.is_symlink() and link.readlink() == target
    assert json.loads(target.read_text())["mcpServers"]["tabrelay"]["args"] == STDIO_ARGS
    assert json.loads(target.read_text())["mcpServers"]["docs"] == {"command": "d"}
    assert mode_of(target) == 0o644
    assert result.backup is not None and result.backup.parent == link.parent
    assert not result.backup.is_symlink() and mode_of(result.backup) == 0o600
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude.json"]  # nothing left there


def test_a_file_that_gets_a_token_is_closed_to_others_and_the_person_is_told(
    tmp_path: Path,
) -> None:
    target = tmp_path / "shared.json"
    target.write_text("{}")
    target.chmod(0o644)
    link = tmp_path / "mcp.json"
    link.symlink_to(target)
    result = merge_into_config(CLIENTS["cursor"], ENDPOINT, link)
    assert link.is_symlink()
    assert mode_of(target) == 0o600  # it holds a bearer token now
    assert any("token" in note and "0644" in note for note in result.notes)


def test_a_read_only_config_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "o4"\n')
    path.chmod(0o444)
    with pytest.raises(ConfigError, match="read-only"):
        merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    assert path.read_text() == 'model = "o4"\n' and mode_of(path) == 0o444
    assert list(tmp_path.iterdir()) == [path]


def test_a_config_that_cannot_be_written_loses_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    link = tmp_path / "mcp.json"
    link.symlink_to(blocker / "mcp.json")  # its target cannot exist
    with pytest.raises(ConfigError, match="could not write"):
        merge_into_config(CLIENTS["cursor"], ENDPOINT, link)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json", "not-a-folder"]
    assert blocker.read_text() == "x"


def test_a_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(ConfigError, match=r"a\.json"):
        merge_into_config(CLIENTS["cursor"], ENDPOINT, a)


# --- files Tabrelay will not rewrite --------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{broken", "not plain JSON"),
        ("// my servers\n{}", "comments"),
        ('{"mcpServers": {}, /* later */}', "comments"),
        ('{"mcpServers": {},}', "not plain JSON"),
        ("[1, 2]", "JSON object"),
        ('{"mcpServers": 3}', "not an object"),
        ('{"mcpServers": {"a": {}}, "mcpServers": {}}', "twice"),
        ('{"mcpServers": {}, "limit": NaN}', "not plain JSON"),
    ],
)
def test_a_json_file_that_cannot_be_rewritten_faithfully_is_left_alone(
    tmp_path: Path, content: str, why: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="by hand") as refused:
        merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    assert why in refused.value.message
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize(
    "content",
    [
        "[mcp_servers.tabrelay\ncommand = 1\n",
        "mcp_servers = 3\n",
        '[[mcp_servers]]\nname = "a"\n',
        '[mcp_servers.tabrelay]\nenv = "DEBUG=1"\n',
        '[mcp_servers.tabrelay]\nenv_vars = "DEBUG"\n',
    ],
)
def test_a_toml_file_that_cannot_be_rewritten_faithfully_is_left_alone(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match="by hand"):
        merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]


def test_a_file_that_is_not_utf8_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    assert path.read_bytes() == b'model = "\xff"\n'


def test_text_that_does_not_parse_back_to_what_was_meant_is_never_written() -> None:
    with pytest.raises(ConfigError, match="by hand"):
        clients.checked_toml("a = 1\n", {"a": 2})
    with pytest.raises(ConfigError, match="by hand"):
        clients.checked_toml("a = \n", {"a": 1})
    with pytest.raises(ConfigError, match="by hand"):
        clients.checked_json('{"a": 1}', {"a": 2})
