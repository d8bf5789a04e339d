"""MCP client setup: ready config snippets, and merging Tabrelay into a client's config file.

Each supported client (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex) gets the
entry it understands. Clients that start programs get the stdio bridge (its token stays in the
keychain; a portable install's ``TABRELAY_HOME`` goes along); the others get the HTTP endpoint
with their own bearer token. Merging replaces only what Tabrelay owns in its entry and keeps
every other key, server and comment; it writes through a symlink to the file it names, backs
the original up under a name no other backup has, and writes only text that it has parsed back
to exactly what it meant. A file it cannot rewrite that faithfully (comments in JSON, a
protected file, a format it cannot read back) is refused and left as it was.
"""

from __future__ import annotations

import codecs
import datetime
import itertools
import json
import math
import os
import re
import stat
import sys
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tabrelay.config.files import CHMOD, GROUP_AND_OTHER, PRIVATE_FILE_MODE, atomic_write
from tabrelay.config.paths import HOME_VARIABLE, Paths
from tabrelay.config.settings import Settings
from tabrelay.errors import ConfigError

SERVER_NAME = "tabrelay"
Format = Literal["mcpServers", "servers", "codex", "claude-code"]

DEFAULT_APPROVAL_TIMEOUT: float = Settings.model_fields["approval_timeout"].default
# Codex ends a tool call after ``tool_timeout_sec`` (60 s by default when this was measured, the
# same as the default approval wait, so a call the person allowed late had already failed in
# Codex). It must outlast the wait for the person plus the call itself: describing the page for
# the dialog, the longest wait a tool may take (browser_handoff waits up to 900 s for the
# person) and its browser commands.
TOOL_RUN_ALLOWANCE = 1_020.0
# Later Codex releases wait 300 s by default: an entry of Tabrelay's never shortens that.
CODEX_TOOL_TIMEOUT_FLOOR = 300
# ``mcp-stdio`` may have to start the app first and waits up to 20 s for it
# (``cli.APP_START_TIMEOUT``); Codex's own default startup wait is 10 s.
STARTUP_TIMEOUT = 30
# Codex starts MCP servers with a cleared environment (HOME, PATH, USER, LANG and a few more).
# The stdio bridge needs these to reach the person's Secret Service and the XDG folders where
# its settings live (Linux); Codex forwards those that are set and skips the others.
CODEX_ENV_VARS = (
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
)


def portable_env() -> dict[str, str]:
    """This process's ``TABRELAY_HOME``, made absolute, for a client that starts ``tabrelay``
    from a folder of its own; empty for an installed Tabrelay."""
    home = Paths.resolve().home
    return {HOME_VARIABLE: str(home)} if home is not None else {}


def codex_tool_timeout(approval_timeout: float) -> int:
    """Seconds Codex should wait for one call: the person's wait and the call itself."""
    return max(CODEX_TOOL_TIMEOUT_FLOOR, math.ceil(approval_timeout + TOOL_RUN_ALLOWANCE))


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str  # http://127.0.0.1:23002/mcp
    token: str
    client: str  # the client name the token belongs to
    command: tuple[str, ...]  # argv that runs tabrelay
    approval_timeout: float = field(default=DEFAULT_APPROVAL_TIMEOUT, kw_only=True)
    # What a client that starts ``tabrelay`` must set for it: a portable install's home.
    env: Mapping[str, str] = field(default_factory=portable_env, kw_only=True)


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
            entry: dict[str, Any] = {
                "command": command,
                "args": [*args, "mcp-stdio", "--client", endpoint.client],
            }
            if endpoint.env:
                entry["env"] = dict(endpoint.env)
            if self.format == "codex":
                entry["env_vars"] = list(CODEX_ENV_VARS)
                entry["startup_timeout_sec"] = STARTUP_TIMEOUT
                entry["tool_timeout_sec"] = codex_tool_timeout(endpoint.approval_timeout)
            return entry
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
            return _toml_table(("mcp_servers", SERVER_NAME), entry, "\n")
        root = "servers" if self.format == "servers" else "mcpServers"
        return json.dumps({root: {SERVER_NAME: entry}}, indent=2, ensure_ascii=False)


def stdio_line(endpoint: Endpoint) -> str:
    """The stdio bridge as one line for any other client, with the environment it needs."""
    command = " ".join([*endpoint.command, "mcp-stdio", "--client", endpoint.client])
    env = " ".join(f"{name}={value}" for name, value in endpoint.env.items())
    return f"{command}  (environment: {env})" if env else command


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
    notes: tuple[str, ...] = ()  # what the person should know: a raised timeout, a closed file


class _Refusal(ConfigError):
    """The file cannot be rewritten faithfully; ``reason`` says why, for any file."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}; paste the snippet into it by hand")
        self.reason = reason


def merge_into_config(
    kind: ClientKind, endpoint: Endpoint, path: Path | None = None
) -> MergeResult:
    """Add (or update) the ``tabrelay`` server in the client's config file.

    A symlink is followed (the file it names is rewritten, the link stays); the original is
    copied next to ``path`` first, under a name no earlier backup has. A file Tabrelay creates
    is 0600; one that existed keeps its mode, except that a file which now holds a bearer token
    is closed to other users (``notes`` says so).

    Raises:
        ConfigError: the file cannot be read, parsed, rewritten faithfully or written, or it is
            read-only; nothing was changed.
    """
    path = path or kind.config_path()
    if path is None:
        raise ConfigError(f"{kind.label} has no config file on this system; paste the snippet")
    target = _target_of(path)
    try:
        raw: bytes | None = target.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        raw = None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    bom = raw is not None and raw.startswith(codecs.BOM_UTF8)
    try:
        original = (raw or b"")[len(codecs.BOM_UTF8) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path} is not UTF-8 text; Tabrelay will not rewrite it. Paste the snippet into it "
            "by hand."
        ) from None
    entry = kind.entry(endpoint)
    try:
        if kind.format == "codex":
            updated, notes = merge_toml_text(original, entry)
        else:
            updated, notes = merge_json_text(
                original, entry, kind.format, stdio=kind.transport == "stdio"
            )
    except _Refusal as refusal:
        raise ConfigError(
            f"Tabrelay did not change {path}: {refusal.reason}. Paste the snippet into it by hand."
        ) from None
    if raw is not None and updated == original:
        return MergeResult(path, changed=False, backup=None)
    mode = _mode_for(target, existed=raw is not None, token=kind.transport == "http", notes=notes)
    data = (codecs.BOM_UTF8 if bom else b"") + updated.encode("utf-8")
    backup = _back_up(path, raw) if raw is not None else None
    try:
        atomic_write(target, data, mode=mode)
    except ConfigError:
        if backup is not None:
            backup.unlink(missing_ok=True)  # the original is still in place
        raise
    return MergeResult(path, changed=True, backup=backup, notes=tuple(notes))


def _target_of(path: Path) -> Path:
    """The file a config path names: a symlink's target, so the link itself stays."""
    try:
        return path.resolve() if path.is_symlink() else path
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise ConfigError(f"cannot follow the symlink {path}: {exc}") from None


def _mode_for(target: Path, *, existed: bool, token: bool, notes: list[str]) -> int:
    if not existed:
        return PRIVATE_FILE_MODE
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror or exc}") from None
    if not mode & stat.S_IWUSR:
        raise ConfigError(
            f"{target} is read-only, so Tabrelay leaves it as it is. Make it writable and try "
            "again, or paste the snippet into it by hand."
        )
    if CHMOD and token and mode & GROUP_AND_OTHER:
        notes.append(
            f"{target} could be read by other users (mode {mode:04o}); it now holds this "
            f"client's token, so only you can read it (mode {mode & ~GROUP_AND_OTHER:04o})."
        )
        return mode & ~GROUP_AND_OTHER
    return mode


def _back_up(path: Path, content: bytes) -> Path:
    """Copy the original next to ``path`` under a name that no file (or link) has yet."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # O_EXCL fails on any existing name, a dangling symlink included: nothing is overwritten.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for number in itertools.count(1):
        suffix = "" if number == 1 else f"-{number}"
        backup = path.with_name(f"{path.name}.bak-{stamp}{suffix}")
        try:
            fd = os.open(backup, flags, PRIVATE_FILE_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise ConfigError(
                f"could not back up {path} ({exc.strerror or exc}); nothing was changed"
            ) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            if CHMOD:
                os.chmod(backup, PRIVATE_FILE_MODE)  # os.open's mode went through the umask
        except OSError as exc:
            backup.unlink(missing_ok=True)
            raise ConfigError(
                f"could not back up {path} ({exc.strerror or exc}); nothing was changed"
            ) from None
        return backup
    raise AssertionError("unreachable")  # pragma: no cover


# --- the entry: Tabrelay's keys over the person's ------------------------------------------

# Keys that make an entry the other transport: they go when Tabrelay writes its own.
_HTTP_KEYS = frozenset(
    {"url", "serverUrl", "httpUrl", "bearer_token_env_var", "http_headers", "env_http_headers"}
)
_STDIO_KEYS = frozenset({"command", "args"})
_AT_LEAST = ("startup_timeout_sec", "tool_timeout_sec")  # a person's longer wait stays


def merged_entry(
    old: Any, ours: Mapping[str, Any], *, stdio: bool
) -> tuple[dict[str, Any], list[str]]:
    """Tabrelay's entry laid over the person's: every key of theirs stays unless it is one
    Tabrelay sets or one that would make the entry another transport; ``env``, ``headers`` and
    ``env_vars`` are merged, and a longer timeout of theirs is kept.

    Raises:
        _Refusal: a key Tabrelay must merge into holds something else than a table or list.
    """
    if not isinstance(old, dict):
        return dict(ours), []
    notes: list[str] = []
    merged = {k: v for k, v in old.items() if k not in (_HTTP_KEYS if stdio else _STDIO_KEYS)}
    # A "type" that names the other transport goes too (VS Code and Claude Code read it).
    if "type" in merged and (merged["type"] == "stdio") != stdio:
        del merged["type"]
    if stdio:
        env = old.get("env", {})
        if not isinstance(env, dict):
            raise _Refusal(f"the env of its {SERVER_NAME} entry is not a table")
        # TABRELAY_HOME is Tabrelay's: an installed Tabrelay takes a stale one away.
        env = {k: v for k, v in env.items() if k.upper() != HOME_VARIABLE}
        env.update(ours.get("env", {}))
        if env:
            merged["env"] = env
        else:
            merged.pop("env", None)
    for key, value in ours.items():
        mine = old.get(key)
        if key == "env":
            continue
        if key == "headers" and isinstance(mine, dict):
            replaced = {name.lower() for name in value}
            kept = {k: v for k, v in mine.items() if k.lower() not in replaced}
            merged[key] = {**kept, **value}
        elif key == "env_vars":
            if not isinstance(mine, list | None):
                raise _Refusal(f"the env_vars of its {SERVER_NAME} entry is not a list")
            merged[key] = [*(mine or []), *(v for v in value if v not in (mine or []))]
        elif key in _AT_LEAST and _number(mine):
            if mine < value:
                notes.append(
                    f"{key} was {mine:g} s, shorter than a call may take while you decide; "
                    f"it is now {value} s."
                )
            merged[key] = max(mine, value)
        else:
            merged[key] = value
    # Tabrelay's keys first, in its order, then the person's own.
    ordered = {key: merged[key] for key in ours if key in merged}
    return {**ordered, **merged}, notes


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- JSON ------------------------------------------------------------------------------------


def merge_json_text(
    original: str, entry: Mapping[str, Any], fmt: Format, *, stdio: bool
) -> tuple[str, list[str]]:
    """``original`` with Tabrelay's entry merged in, and notes for the person.

    Raises:
        _Refusal: it is not plain JSON (comments, duplicate names, NaN), not an object, or what
            would be written does not read back as meant.
    """
    data = _load_json(original) if original.strip() else {}
    if not isinstance(data, dict):
        raise _Refusal("it does not hold a JSON object")
    root = "servers" if fmt == "servers" else "mcpServers"
    servers = data.setdefault(root, {})
    if not isinstance(servers, dict):
        raise _Refusal(f"its '{root}' is not an object")
    old = servers.get(SERVER_NAME)
    merged, notes = merged_entry(old, entry, stdio=stdio)
    if merged == old:
        return original, notes
    servers[SERVER_NAME] = merged
    indent = re.search(r"\n([ \t]+)\S", original)
    newline = "\r\n" if "\r\n" in original else "\n"
    try:
        text = json.dumps(
            data, indent=indent[1] if indent else 2, ensure_ascii=False, allow_nan=False
        )
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape: keep it escaped
        text = json.dumps(data, indent=indent[1] if indent else 2, allow_nan=False)
    except ValueError:  # 1e400 reads as infinity, which JSON cannot write
        raise _Refusal("it holds a number too large to write back exactly") from None
    return checked_json(text.replace("\n", newline) + newline, data), notes


class _DuplicateName(ValueError):
    pass


def _load_json(text: str) -> Any:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise _DuplicateName(key)
            seen[key] = value
        return seen

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        return json.loads(text, object_pairs_hook=unique, parse_constant=constant)
    except _DuplicateName as duplicate:
        raise _Refusal(
            f'it names "{duplicate}" twice in one object, and only one of them would stay'
        ) from None
    except ValueError as exc:
        if _has_comments(text):
            raise _Refusal(
                "it has comments (JSON with comments), which a rewrite would drop"
            ) from None
        raise _Refusal(f"it is not plain JSON ({exc})") from None


def _has_comments(text: str) -> bool:
    outside_strings = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return "//" in outside_strings or "/*" in outside_strings


def checked_json(text: str, expected: Any) -> str:
    """``text`` if it parses back to ``expected``; refused otherwise, never written.

    Raises:
        _Refusal: it does not parse, or it parses to something else.
    """
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise _Refusal(f"the rewritten file would not parse ({exc})") from None
    if not _same(parsed, expected):
        raise _Refusal("the rewritten file would change other settings in it")
    return text


# --- TOML (Codex) ------------------------------------------------------------------------------


def merge_toml_text(original: str, entry: Mapping[str, Any]) -> tuple[str, list[str]]:
    """``original`` with ``[mcp_servers.tabrelay]`` merged in, and notes for the person.

    Only the statements that define Tabrelay's entry are replaced, wherever and however they
    define it (a table, an inline table, quoted or dotted keys); the rest of the text, comments
    included, stays as it was.

    Raises:
        _Refusal: it is not TOML, ``mcp_servers`` is not a table, or what would be written does
            not read back as meant.
    """
    try:
        data = tomllib.loads(original)
    except tomllib.TOMLDecodeError as exc:
        raise _Refusal(f"it is not valid TOML ({exc})") from None
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise _Refusal("its mcp_servers is not a table")
    old = servers.get(SERVER_NAME)
    merged, notes = merged_entry(old, entry, stdio=True)
    if merged == old:
        return original, notes
    expected = {**data, "mcp_servers": {**servers, SERVER_NAME: merged}}
    return checked_toml(_rewrite_toml(original, servers, merged), expected), notes


def checked_toml(text: str, expected: Mapping[str, Any]) -> str:
    """``text`` if it parses back to ``expected``; refused otherwise, never written.

    Raises:
        _Refusal: it does not parse, or it parses to something else.
    """
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _Refusal(f"the rewritten file would not parse ({exc})") from None
    if not _same(parsed, expected):
        raise _Refusal("the rewritten file would change other settings in it")
    return text


def _same(a: Any, b: Any) -> bool:
    """Equal as data, where NaN equals NaN (TOML has nan; Python's == says otherwise)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and bool(a == b)


def _rewrite_toml(original: str, servers: Mapping[str, Any], merged: Mapping[str, Any]) -> str:
    newline = "\r\n" if "\r\n" in original else "\n"
    ours = ("mcp_servers", SERVER_NAME)
    statements = _statements(original)
    cuts: list[tuple[int, int]] = []
    insert_at: int | None = None
    rewrite_servers = False  # `mcp_servers = { ... }`: an inline table cannot be extended
    index = 0
    while index < len(statements):
        statement = statements[index]
        if statement.kind != "pair":
            following = index + 1
            while following < len(statements) and statements[following].kind == "pair":
                following += 1
            if statement.path[:2] == ours:
                # The header and its pairs; comments after the last pair belong to what follows.
                cuts.append((statement.start, statements[following - 1].end))
                insert_at = statement.start if insert_at is None else insert_at
                index = following
                continue
        elif statement.path[:2] == ours:
            cuts.append((statement.start, statement.end))
        elif statement.path == ("mcp_servers",):
            cuts.append((statement.start, statement.end))
            rewrite_servers = True
        index += 1
    if rewrite_servers:
        section = _toml_table(("mcp_servers",), {**servers, SERVER_NAME: merged}, newline)
    else:
        section = _toml_table(ours, merged, newline)
    pieces: list[str] = []
    position = 0
    for start, end in cuts:
        pieces.append(original[position:start])
        if start == insert_at:
            pieces.append(section)
        position = end
    pieces.append(original[position:])
    text = "".join(pieces)
    if insert_at is None:
        if text and not text.endswith("\n"):
            text += newline
        if text.strip() and not text.endswith(newline * 2):
            text += newline
        text += section
    return text


@dataclass(frozen=True, slots=True)
class _Statement:
    kind: Literal["table", "array", "pair"]
    path: tuple[str, ...]  # a header's table, or a pair's table and key
    start: int  # where its line starts
    end: int  # after its last line's newline


def _statements(text: str) -> list[_Statement]:
    """Every table header and key/value pair of a valid TOML text, where each is and what it
    defines. Values are skipped, not read: ``tomllib`` already read them."""
    try:
        return list(_scan(text))
    except (IndexError, ValueError, tomllib.TOMLDecodeError) as exc:  # cannot happen on TOML
        raise _Refusal(f"Tabrelay could not find its way around it ({exc})") from None


def _scan(text: str) -> list[_Statement]:
    found: list[_Statement] = []
    table: tuple[str, ...] = ()
    position, size = 0, len(text)
    while position < size:
        line = position
        while position < size and text[position] in " \t":
            position += 1
        if position == size:
            break
        if text[position] in "#\r\n":
            position = _after_line(text, position)
            continue
        if text[position] == "[":
            opening = 2 if text.startswith("[[", position) else 1
            closing = _key_end(text, position + opening, "]")
            table = _key_path(text[position + opening : closing])
            end = _after_line(text, closing + opening)
            found.append(_Statement("array" if opening == 2 else "table", table, line, end))
        else:
            equals = _key_end(text, position, "=")
            value = equals + 1
            while text[value] in " \t":
                value += 1
            end = _after_line(text, _value_end(text, value))
            found.append(_Statement("pair", table + _key_path(text[position:equals]), line, end))
        position = end
    return found


def _after_line(text: str, position: int) -> int:
    newline = text.find("\n", position)
    return len(text) if newline < 0 else newline + 1


def _key_end(text: str, position: int, stop: str) -> int:
    while text[position] != stop:
        if text[position] in "\"'":
            position = _value_end(text, position)
        else:
            position += 1
    return position


def _key_path(raw: str) -> tuple[str, ...]:
    node: Any = tomllib.loads(f"{raw.strip()} = 0")
    path: list[str] = []
    while isinstance(node, dict):
        ((key, node),) = node.items()
        path.append(key)
    return tuple(path)


def _value_end(text: str, position: int) -> int:
    """Where the value (or quoted key) at ``position`` ends; a bare value: where it starts."""
    if text.startswith(('"""', "'''"), position):
        quote = text[position]
        position += 3
        while True:
            if quote == '"' and text[position] == "\\":
                position += 2
            elif text.startswith(quote * 3, position):
                run = 3  # up to two quotes of the content may stand before the closing three
                while run < 5 and text.startswith(quote, position + run):
                    run += 1
                return position + run
            else:
                position += 1
    if text[position] == '"':
        position += 1
        while text[position] != '"':
            position += 2 if text[position] == "\\" else 1
        return position + 1
    if text[position] == "'":
        return text.index("'", position + 1) + 1
    if text[position] in "[{":
        depth = 0
        while True:
            char = text[position]
            if char in "\"'":
                position = _value_end(text, position)
                continue
            if char == "#":  # a comment inside a multi-line array
                position = text.index("\n", position)
                continue
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    return position + 1
            position += 1
    return position


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    escaped = []
    for char in text:
        if char in _ESCAPES:
            escaped.append(_ESCAPES[char])
        elif char < " " or char == "\x7f":  # TOML 1.0, "String": control characters are escaped
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def toml_value(value: Any) -> str:
    """``value`` (as ``tomllib`` reads it) written as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    raise TypeError(f"{type(value).__name__} is not a TOML value")


def _toml_table(path: tuple[str, ...], table: Mapping[str, Any], newline: str) -> str:
    """``table`` as a ``[path]`` section: its values first, then its tables as sub-sections."""
    lines = ["[" + ".".join(toml_key(key) for key in path) + "]"]
    nested = []
    for key, value in table.items():
        if isinstance(value, dict) and value:
            nested.append((key, value))
        else:
            lines.append(f"{toml_key(key)} = {toml_value(value)}")
    text = newline.join(lines) + newline
    for key, value in nested:
        text += _toml_table((*path, key), value, newline)
    return text
