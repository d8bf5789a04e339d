"""MCP client setup: ready config snippets, and merging Tabrelay into a client's config file.

Each supported client (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex) gets the
entry it understands. Clients that start programs get the stdio bridge (its token stays in the
keychain); the others get the HTTP endpoint with their own bearer token. Merging backs up the
original file, keeps every other server and setting, is idempotent, and refuses to touch a
file it cannot parse rather than clobber it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tabrelay.config.files import atomic_write
from tabrelay.errors import ConfigError

SERVER_NAME = "tabrelay"
Format = Literal["mcpServers", "servers", "codex", "claude-code"]


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str  # http://127.0.0.1:23002/mcp
    token: str
    client: str  # the client name the token belongs to
    command: tuple[str, ...]  # argv that runs tabrelay


@dataclass(frozen=True, slots=True)
class ClientKind:
    key: str
    label: str
    transport: Literal["stdio", "http"]
    format: Format
    config_path: Callable[[], Path | None]

    def entry(self, endpoint: Endpoint) -> dict[str, Any]:
        """The server entry this client's config file takes."""
        if self.transport == "stdio":
            command, *args = endpoint.command
            return {"command": command, "args": [*args, "mcp-stdio", "--client", endpoint.client]}
        headers = {"Authorization": f"Bearer {endpoint.token}"}
        if self.key == "windsurf":
            return {"serverUrl": endpoint.url, "headers": headers}
        if self.format in ("servers", "claude-code"):
            return {"type": "http", "url": endpoint.url, "headers": headers}
        return {"url": endpoint.url, "headers": headers}

    def snippet(self, endpoint: Endpoint) -> str:
        """Text to paste: a command for Claude Code, a config fragment for the others."""
        if self.key == "claude-code":
            return (
                f"claude mcp add --transport http {SERVER_NAME} {endpoint.url} "
                f'--header "Authorization: Bearer {endpoint.token}"'
            )
        entry = self.entry(endpoint)
        if self.format == "codex":
            return _codex_table(entry)
        root = "servers" if self.format == "servers" else "mcpServers"
        return json.dumps({root: {SERVER_NAME: entry}}, indent=2)


def _home() -> Path:
    return Path.home()


def _app_config(*parts: str) -> Path:
    """The per-user application config folder on each OS (Electron apps' ``userData``)."""
    if sys.platform == "darwin":
        return _home().joinpath("Library", "Application Support", *parts)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", _home() / "AppData" / "Roaming")).joinpath(*parts)
    return Path(os.environ.get("XDG_CONFIG_HOME", _home() / ".config")).joinpath(*parts)


CLIENTS: dict[str, ClientKind] = {
    kind.key: kind
    for kind in (
        ClientKind(
            "claude-desktop",
            "Claude Desktop",
            "stdio",
            "mcpServers",
            lambda: _app_config("Claude", "claude_desktop_config.json"),
        ),
        ClientKind(
            "claude-code", "Claude Code", "http", "claude-code", lambda: _home() / ".claude.json"
        ),
        ClientKind(
            "cursor", "Cursor", "http", "mcpServers", lambda: _home() / ".cursor" / "mcp.json"
        ),
        ClientKind(
            "vscode", "VS Code", "http", "servers", lambda: _app_config("Code", "User", "mcp.json")
        ),
        ClientKind(
            "windsurf",
            "Windsurf",
            "http",
            "mcpServers",
            lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json",
        ),
        ClientKind("codex", "Codex", "stdio", "codex", lambda: _home() / ".codex" / "config.toml"),
    )
}


@dataclass(frozen=True, slots=True)
class MergeResult:
    path: Path
    changed: bool
    backup: Path | None


def merge_into_config(
    kind: ClientKind, endpoint: Endpoint, path: Path | None = None
) -> MergeResult:
    """Add (or update) the ``tabrelay`` server in the client's config file.

    Raises:
        ConfigError: the file exists but cannot be read or parsed; nothing was changed.
    """
    path = path or kind.config_path()
    if path is None:
        raise ConfigError(f"{kind.label} has no config file on this system; paste the snippet")
    try:
        original = path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    entry = kind.entry(endpoint)
    if kind.format == "codex":
        updated = _merge_toml(original or "", entry, path)
    else:
        updated = _merge_json(original, entry, kind.format, path)
    if updated == original:
        return MergeResult(path, changed=False, backup=None)
    backup = None
    if original is not None:
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    atomic_write(path, updated.encode("utf-8"), mode=0o600)
    return MergeResult(path, changed=True, backup=backup)


def _merge_json(original: str | None, entry: dict[str, Any], fmt: Format, path: Path) -> str:
    try:
        data = json.loads(original) if original and original.strip() else {}
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not plain JSON ({exc}); Tabrelay will not rewrite it. Paste the snippet "
            "into it by hand."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; paste the snippet by hand")
    root = "servers" if fmt == "servers" else "mcpServers"
    servers = data.setdefault(root, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"'{root}' in {path} is not an object; paste the snippet by hand")
    if servers.get(SERVER_NAME) == entry and original is not None:
        return original
    servers[SERVER_NAME] = entry
    return json.dumps(data, indent=2) + "\n"


_TABLE = re.compile(rf"^\[mcp_servers\.{SERVER_NAME}\]\s*$", re.MULTILINE)
_NEXT_TABLE = re.compile(r"^\[", re.MULTILINE)


def _merge_toml(original: str, entry: dict[str, Any], path: Path) -> str:
    try:
        data = tomllib.loads(original)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); paste the snippet by hand") from None
    if data.get("mcp_servers", {}).get(SERVER_NAME) == entry:
        return original
    table = _codex_table(entry)
    match = _TABLE.search(original)
    if match is None:
        separator = (
            ""
            if not original or original.endswith("\n\n")
            else ("\n" if original.endswith("\n") else "\n\n")
        )
        return original + separator + table
    following = _NEXT_TABLE.search(original, match.end())
    end = following.start() if following else len(original)
    return original[: match.start()] + table + ("\n" if following else "") + original[end:]


def _codex_table(entry: dict[str, Any]) -> str:
    lines = [f"[mcp_servers.{SERVER_NAME}]"]
    for key, value in entry.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"
