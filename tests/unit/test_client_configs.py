"""MCP client setup: snippets per client, and merging into config files without clobbering."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tabrelay.errors import ConfigError
from tabrelay.system.clients import CLIENTS, Endpoint, merge_into_config

ENDPOINT = Endpoint(
    url="http://127.0.0.1:23002/mcp",
    token="tok-123",
    client="cursor",
    command=("/opt/tabrelay/tabrelay",),
)


def test_every_client_gets_the_entry_it_understands() -> None:
    entries = {key: kind.entry(ENDPOINT) for key, kind in CLIENTS.items()}
    stdio = {"command": "/opt/tabrelay/tabrelay", "args": ["mcp-stdio", "--client", "cursor"]}
    auth = {"Authorization": "Bearer tok-123"}
    assert entries == {
        "claude-desktop": stdio,
        "claude-code": {"type": "http", "url": ENDPOINT.url, "headers": auth},
        "cursor": {"url": ENDPOINT.url, "headers": auth},
        "vscode": {"type": "http", "url": ENDPOINT.url, "headers": auth},
        "windsurf": {"serverUrl": ENDPOINT.url, "headers": auth},
        "codex": stdio,
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
    assert codex["mcp_servers"]["tabrelay"]["args"] == ["mcp-stdio", "--client", "cursor"]


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


def test_merging_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "Claude" / "claude_desktop_config.json"
    result = merge_into_config(CLIENTS["claude-desktop"], ENDPOINT, path)
    assert result.changed and result.backup is None
    assert json.loads(path.read_text())["mcpServers"]["tabrelay"]["args"][0] == "mcp-stdio"


@pytest.mark.parametrize("content", ["{broken", "// comment\n{}", "[1, 2]", '{"mcpServers": 3}'])
def test_a_file_that_cannot_be_parsed_is_left_alone(tmp_path: Path, content: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="by hand"):
        merge_into_config(CLIENTS["cursor"], ENDPOINT, path)
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]


def test_codex_toml_is_merged_in_place(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'model = "o4"\n\n[mcp_servers.tabrelay]\ncommand = "old"\n\n[mcp_servers.docs]\nurl = "https://d"\n'
    )
    merge_into_config(CLIENTS["codex"], ENDPOINT, path)
    data = tomllib.loads(path.read_text())
    assert data["model"] == "o4"
    assert data["mcp_servers"]["docs"] == {"url": "https://d"}
    assert data["mcp_servers"]["tabrelay"]["command"] == "/opt/tabrelay/tabrelay"
    assert not merge_into_config(CLIENTS["codex"], ENDPOINT, path).changed
    fresh = tmp_path / "new.toml"
    fresh.write_text('model = "o4"\n')
    merge_into_config(CLIENTS["codex"], ENDPOINT, fresh)
    assert tomllib.loads(fresh.read_text())["mcp_servers"]["tabrelay"]["args"][-1] == "cursor"
