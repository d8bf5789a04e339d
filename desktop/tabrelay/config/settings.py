"""Settings: a schema-versioned JSON file, validated, migrated, written atomically under a lock.

A file that cannot be read or validated is moved aside as ``settings.json.<time>.bad`` and the
problem is kept in ``SettingsStore.problems`` for the UI and ``tabrelay doctor``; it is never
silently reset. Several processes (the app and the CLI) may write: every write re-reads the
file under an exclusive lock, applies its change and bumps ``revision`` so a running app sees
it. Holds no secrets; those live in ``secrets.py``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tabrelay.config.files import atomic_write, file_lock, make_private_dir
from tabrelay.errors import ConfigError, SettingsError
from tabrelay.protocol.constants import DEFAULT_MCP_PORT, DEFAULT_RELAY_PORT

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
EXTENSION_ID = re.compile(r"^[a-p]{32}$")
PAIRING_ID = re.compile(r"^[a-z0-9-]{4,40}$")
CLIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

Decision = Literal["allow", "ask", "deny"]
SecretsPlace = Literal["keychain", "file"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)


def _extension_id(value: str) -> str:
    if not EXTENSION_ID.match(value):
        raise ValueError("an extension id is 32 letters a-p")
    return value


class PairedBrowser(_Model):
    """One browser the person paired: its credential is kept under ``id`` in the secret store.

    ``legacy`` pairings come from before each browser had its own credential: until the core
    gives them one, they use the old shared relay token.
    """

    id: str
    extension_id: str
    paired_at: float = Field(default_factory=time.time)
    label: str = ""  # the browser as it named itself when it last connected ("Chromium 156")
    legacy: bool = False

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if not PAIRING_ID.match(value):
            raise ValueError("a pairing id is 4-40 lower-case letters, digits or '-'")
        return value

    _valid_extension = field_validator("extension_id")(_extension_id)


class RetiredPairing(_Model):
    """A pairing whose credential `tabrelay token rotate` replaced. The credential stays in the
    secret store for a while, good for one thing only: proving the app to a browser that was
    away, so it asks to pair again instead of being stuck (``relay/pairing.py``)."""

    id: str
    extension_id: str
    retired_at: float = Field(default_factory=time.time)

    _valid_extension = field_validator("extension_id")(_extension_id)


class PairingGrant(_Model):
    """The person allowed, ahead of time, one pairing by this extension id (the CLI, headless),
    with this pairing code if they gave one (the code the extension's popup shows)."""

    extension_id: str
    expires_at: float
    code: str | None = None

    _valid_extension = field_validator("extension_id")(_extension_id)


class McpClient(_Model):
    name: str
    created_at: float = Field(default_factory=time.time)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not CLIENT_NAME.match(value):
            raise ValueError("a client name is 1-64 letters, digits, '.', '_' or '-'")
        return value


class PolicyRule(_Model):
    """One approval rule: (client, tool, site) → decision. ``None`` matches anything."""

    tool: str
    decision: Decision
    site: str | None = None
    client: str | None = None
    expires_at: float | None = None
    created_at: float = Field(default_factory=time.time)


class NavigationSettings(_Model):
    allow: list[str] = Field(default_factory=list)
    block: list[str] = Field(default_factory=list)
    only_allowed: bool = False
    allow_private_networks: bool = False


class Settings(_Model):
    schema_version: int = SCHEMA_VERSION
    revision: int = 0
    secrets_revision: int = 0
    # Where every process keeps secrets; ``None`` until the first one decides (secrets.py).
    secrets_place: SecretsPlace | None = None
    host: str = "127.0.0.1"
    relay_port: int = Field(default=DEFAULT_RELAY_PORT, ge=0, le=65535)
    mcp_port: int = Field(default=DEFAULT_MCP_PORT, ge=0, le=65535)
    allow_query_token: bool = True
    pairings: list[PairedBrowser] = Field(default_factory=list)
    pairing_grants: list[PairingGrant] = Field(default_factory=list)
    rotations: int = 0  # times every browser credential was replaced (`tabrelay token rotate`)
    retired_pairings: list[RetiredPairing] = Field(default_factory=list)
    clients: list[McpClient] = Field(default_factory=list)
    policy_rules: list[PolicyRule] = Field(default_factory=list)
    command_timeout: float = Field(default=30.0, gt=0, le=600)
    approval_timeout: float = Field(default=60.0, gt=0, le=3600)
    idle_detach_minutes: float = Field(default=5.0, ge=0)
    response_budget_tokens: int = Field(default=25_000, ge=1000, le=1_000_000)
    screenshot_max_width: int = Field(default=1280, ge=100, le=8000)
    navigation: NavigationSettings = Field(default_factory=NavigationSettings)
    tab_scope: Literal["all", "shared"] = "all"
    upload_dirs: list[str] = Field(default_factory=list)
    enable_cdp_tool: bool = False
    log_retention_rows: int = Field(default=100_000, ge=100)
    log_retention_days: float = Field(default=30.0, gt=0)
    autostart: bool = False

    def is_paired(self, extension_id: str) -> bool:
        """Whether any browser with this extension id is paired (its Origin may connect)."""
        return any(p.extension_id == extension_id for p in self.pairings)


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """Paired extension ids become pairings that still use the shared relay token."""
    paired = raw.pop("paired_extensions", None)
    pairings = []
    for entry in paired if isinstance(paired, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            pairings.append(
                {
                    "id": f"legacy-{entry['id']}",
                    "extension_id": entry["id"],
                    "paired_at": entry.get("paired_at", time.time()),
                    "legacy": True,
                }
            )
    raw["pairings"] = pairings
    return raw


# Each migration turns the dict of version N into version N + 1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring a settings dict from its schema version to ``SCHEMA_VERSION``.

    Raises:
        SettingsError: the file comes from a newer Tabrelay or has no usable version.
    """
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SettingsError("settings have no valid schema_version")
    if version > SCHEMA_VERSION:
        raise SettingsError(
            f"settings were written by a newer Tabrelay (schema {version}; this one reads "
            f"up to {SCHEMA_VERSION})"
        )
    while version < SCHEMA_VERSION:
        raw = MIGRATIONS[version](raw)
        version += 1
        raw["schema_version"] = version
    return raw


def parse_settings(text: str) -> Settings:
    """Validate settings JSON. Raises ``SettingsError`` with a readable reason."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"settings are not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise SettingsError("settings must be a JSON object")
    try:
        return Settings.model_validate(migrate(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise SettingsError(f"invalid setting {where}: {first['msg']}") from None


class SettingsStore:
    """Reads and writes ``settings.json``; see the module docstring for the guarantees."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self._signature: tuple[int, int, int] | None = None
        self.current = Settings()

    def load(self) -> Settings:
        """Read the file (defaults if it does not exist); a bad file is moved aside."""
        with self._lock():
            self.current = self._read_locked()
        return self.current

    def reload_if_changed(self) -> Settings | None:
        """Re-read the file if another process changed it; the new settings or ``None``."""
        if self._stat_signature() == self._signature:
            return None
        return self.load()

    def update(self, change: Callable[[Settings], None]) -> Settings:
        """Apply ``change`` to the settings on disk and write them back atomically.

        Raises:
            SettingsError: ``change`` produced invalid settings (nothing is written) or the
                file could not be written.
        """
        with self._lock():
            settings = self._read_locked().model_copy(deep=True)
            change(settings)
            try:
                settings = Settings.model_validate(settings.model_dump())
            except ValidationError as exc:
                raise SettingsError(
                    f"refusing to save invalid settings: {exc.errors()[0]['msg']}"
                ) from None
            settings.revision += 1
            self._write_locked(settings)
            self.current = settings
        return settings

    def _read_locked(self) -> Settings:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._signature = None
            return Settings()
        except (OSError, UnicodeDecodeError) as exc:
            return self._set_aside(f"settings could not be read: {exc}")
        try:
            settings = parse_settings(text)
        except SettingsError as exc:
            return self._set_aside(exc.message)
        self._signature = self._stat_signature()
        return settings

    def _set_aside(self, reason: str) -> Settings:
        bad = self.path.with_name(f"{self.path.name}.{time.strftime('%Y%m%d-%H%M%S')}.bad")
        try:
            os.replace(self.path, bad)
            message = f"{reason}. The file was kept as {bad} and defaults are in use."
        except OSError as exc:
            message = f"{reason}. It could not be moved aside ({exc}); defaults are in use."
        logger.warning("%s", message)
        self.problems.append(message)
        self._signature = None
        return Settings()

    def _write_locked(self, settings: Settings) -> None:
        text = json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        try:
            atomic_write(self.path, text.encode("utf-8"))
        except ConfigError as exc:
            raise SettingsError(exc.message) from None
        self._signature = self._stat_signature()

    def _stat_signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        make_private_dir(self.path.parent)
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            yield
