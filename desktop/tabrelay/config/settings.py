"""Settings: a schema-versioned JSON file, validated, migrated, written atomically under a lock,
and the one owner of a process's view of it (``SettingsStore``).

The owner holds an immutable snapshot (``current``: assigning a field or changing a list of it
raises), so readers on the hot path take an attribute and never touch the file. Every change in
this process goes through ``update``, and what another process wrote comes in through
``refresh`` (the app's file watcher); both run under one lock, in order, and publish the new
snapshot to subscribers. A write of this process is remembered by the file's signature, so it
is never read back as a foreign change.

A file that cannot be read or validated is moved aside as ``settings.json.<time>.bad`` and the
problem is kept in ``SettingsStore.problems`` for the UI and ``tabrelay doctor``; it is never
silently reset: at start defaults are used, and in a running app the last good snapshot stays
in force and is written back. Several processes (the app and the CLI) may write: every write
re-reads the file under an exclusive lock, applies its change and bumps ``revision``. Holds no
secrets; those live in ``secrets.py``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn, SupportsIndex

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tabrelay.config.files import atomic_write, file_lock, make_private_dir
from tabrelay.errors import ConfigError, SettingsError
from tabrelay.listeners import Listeners
from tabrelay.protocol.constants import DEFAULT_MCP_PORT, DEFAULT_RELAY_PORT

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
EXTENSION_ID = re.compile(r"^[a-p]{32}$")
PAIRING_ID = re.compile(r"^[a-z0-9-]{4,40}$")
CLIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

Decision = Literal["allow", "ask", "deny"]
SecretsPlace = Literal["keychain", "file"]


_SEALED = "_sealed_snapshot_"  # in a sealed model's __dict__; pydantic ignores the key
RETIRED_DAYS = 30.0  # how long a rotated credential can still prove the app to a browser away


class FrozenSettingsError(TypeError):
    """Something tried to change a settings snapshot in place."""

    def __init__(self) -> None:
        super().__init__(
            "settings snapshots are immutable: change them with SettingsStore.update(change)"
        )


class FrozenList(list[Any]):
    """A list field of a snapshot: reads like a list, refuses every change in place; a copy
    of it is an ordinary list (a draft)."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise FrozenSettingsError()

    append = extend = insert = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = _refuse

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        raise FrozenSettingsError()

    def __iadd__(self, other: Iterable[Any]) -> NoReturn:  # type: ignore[misc]
        raise FrozenSettingsError()

    def __imul__(self, count: SupportsIndex) -> NoReturn:
        raise FrozenSettingsError()

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (list, (list(self),))


class _Model(BaseModel):
    """A settings model. A draft (what ``SettingsStore.update`` hands a change) is mutable
    and validated on assignment; a sealed one (a published snapshot) cannot be changed in
    place, nor can anything it holds. A copy of a sealed model is a mutable draft."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get(_SEALED):
            raise FrozenSettingsError()
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get(_SEALED):
            raise FrozenSettingsError()
        super().__delattr__(name)

    def __copy__(self) -> Any:
        if self.__dict__.get(_SEALED):
            return self.__deepcopy__()
        return super().__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Any:
        copied = super().__deepcopy__(memo)
        copied.__dict__.pop(_SEALED, None)
        return copied

    @property
    def sealed(self) -> bool:
        return bool(self.__dict__.get(_SEALED))


def seal(model: _Model) -> None:
    """Make ``model`` and everything it holds immutable (it becomes a snapshot)."""
    for name, value in list(model.__dict__.items()):
        if isinstance(value, list):
            for item in value:
                if isinstance(item, _Model):
                    seal(item)
            model.__dict__[name] = FrozenList(value)
        elif isinstance(value, _Model):
            seal(value)
    model.__dict__[_SEALED] = True


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
    secret store for ``RETIRED_DAYS``, good for one thing only: proving the app to a browser
    that was away, so it asks to pair again instead of being stuck (``relay/pairing.py``)."""

    id: str
    extension_id: str
    retired_at: float = Field(default_factory=time.time)

    _valid_extension = field_validator("extension_id")(_extension_id)

    def expired(self, now: float) -> bool:
        """Whether it is too old to prove anything: neither accepted nor kept any more."""
        return now - self.retired_at >= RETIRED_DAYS * 86400


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
    # Where files an agent's action downloaded are kept; "" is a private folder of Tabrelay's
    # data. Downloads are taken only from the browser's download folder: "" is the system's
    # (tools/acting/download.py).
    download_dir: str = Field(default="", max_length=4096)
    # A download an action began is asked about again, naming its size, when it is larger
    # than this though the action's approval already weighed a download (MB).
    download_ask_over_mb: int = Field(default=100, ge=0, le=1_000_000)
    browser_download_dir: str = Field(default="", max_length=4096)
    enable_cdp_tool: bool = False
    log_retention_rows: int = Field(default=100_000, ge=100)
    log_retention_days: float = Field(default=30.0, gt=0)
    # Start at login is not a setting: the OS's autostart entry is its one truth
    # (system/autostart.py). Files that still carry "autostart" read fine: extras are ignored.

    def is_paired(self, extension_id: str) -> bool:
        """Whether any browser with this extension id is paired (its Origin may connect)."""
        return any(p.extension_id == extension_id for p in self.pairings)

    def live_retired(self, extension_id: str, now: float) -> list[RetiredPairing]:
        """The retired pairings of this extension still young enough to prove the app."""
        return [
            r
            for r in self.retired_pairings
            if r.extension_id == extension_id and not r.expired(now)
        ]


MAX_RETIRED = 64


def drop_pairings(
    settings: Settings,
    chosen: Callable[[PairedBrowser | RetiredPairing], bool],
    *,
    rotation: bool,
    retire: bool,
    now: float,
) -> tuple[list[PairedBrowser], list[RetiredPairing]]:
    """Remove the pairings ``chosen`` picks from a draft: the one implementation of the
    person's revoke, of a rotation (`tabrelay token rotate`, the tray) and of a keychain given
    up (``secrets.py``).

    With ``retire`` the removed credentials are retired, not deleted (a browser away at a
    rotation meets an app that proves itself); without it the retired credentials ``chosen``
    picks go too. A rotation is counted, so a running app closes with "pair again" rather
    than "unpaired". Retired credentials that expired are dropped on the way.

    Returns:
        The pairings removed, and the retired pairings dropped: the caller deletes the
        credentials of both that it no longer keeps.
    """
    removed = [p for p in settings.pairings if chosen(p)]
    settings.rotations += rotation
    settings.pairings = [p for p in settings.pairings if not chosen(p)]
    gone = {p.extension_id for p in removed} - {p.extension_id for p in settings.pairings}
    settings.pairing_grants = [g for g in settings.pairing_grants if g.extension_id not in gone]
    retired = list(settings.retired_pairings)
    dropped: list[RetiredPairing] = []
    if retire:
        retired += [
            RetiredPairing(id=p.id, extension_id=p.extension_id, retired_at=now)
            for p in removed
            if not p.legacy
        ]
    else:  # unpaired, or unreadable: the app proves nothing to it any more
        dropped.extend(r for r in retired if chosen(r))
        retired = [r for r in retired if not chosen(r)]
    kept = [r for r in retired if not r.expired(now)][-MAX_RETIRED:]
    dropped.extend(r for r in retired if r not in kept)
    settings.retired_pairings = kept
    if removed or dropped:
        settings.secrets_revision += 1
    return removed, dropped


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


Subscriber = Callable[["Settings"], None]
Signature = tuple[int, int, int]


class SettingsStore:
    """The one owner of ``settings.json`` in a process; see the module docstring.

    ``current`` is the snapshot now in force: an attribute, never a read of the file.
    Subscribers are called with each new snapshot (also when only ``problems`` grew), in
    order, from the thread that made the change (the app's loop, or a worker thread the app
    hands blocking writes to): they must be quick and must not block or call back in.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self.problems: list[str] = []
        self.generation = 0  # how many snapshots were published: waiters compare it
        self._signature: Signature | None = None  # the file as this owner last read or wrote it
        self._loaded = False  # a good snapshot came from the file: a bad file cannot reset it
        self._mutex = threading.RLock()  # in-process order; the file lock orders processes
        self._subscribers: Listeners[[Settings]] = Listeners("the settings")
        self.current = _sealed(Settings())

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber`` with every snapshot published from now on; returns the way to
        stop."""
        return self._subscribers.add(subscriber)

    def load(self) -> Settings:
        """Read the file now (defaults if it does not exist) and publish what it holds.

        A bad file is moved aside and reported: before a good snapshot was read, defaults
        are in force; after, the last good one stays in force and is written back.
        """
        with self._mutex, self._lock():
            self._take(self._read_locked())
        return self.current

    def changed_on_disk(self) -> bool:
        """Whether the file is not as this owner last read or wrote it (one ``stat``)."""
        return self._stat_signature() != self._signature

    def refresh(self) -> Settings | None:
        """Take in what another process wrote (the app's watcher, or a request that meets a
        token or grant not known yet): the new snapshot, or ``None`` if the file is as this
        owner left it. Blocking: call it from a worker thread in the app."""
        with self._mutex:
            if not self.changed_on_disk():
                return None
            return self.load()

    def update(self, change: Callable[[Settings], None]) -> Settings:
        """Apply ``change`` to a draft of the settings on disk, write them back atomically
        and publish the new snapshot. Blocking: call it from a worker thread in the app.

        ``change`` gets a mutable draft (never the snapshot in force) and is called exactly
        once, under the file lock: it must not block or call back into the store.

        Raises:
            SettingsError: ``change`` produced invalid settings (nothing is written) or the
                file could not be written.
        """
        with self._mutex, self._lock():
            base = self._read_locked()
            settings = Settings.model_validate(base.model_dump()) if base.sealed else base
            change(settings)
            try:
                settings = Settings.model_validate(settings.model_dump())
            except ValidationError as exc:
                raise SettingsError(
                    f"refusing to save invalid settings: {exc.errors()[0]['msg']}"
                ) from None
            settings.revision += 1
            self._write_locked(settings)
            self._take(settings)
        return self.current

    def _take(self, settings: Settings) -> None:
        if not settings.sealed:
            seal(settings)
        self.current = settings
        self._publish()

    def _publish(self) -> None:
        self.generation += 1
        snapshot = self.current
        self._subscribers.tell(snapshot)  # a failing one cannot undo what is on disk

    def _read_locked(self) -> Settings:
        """What the file holds (a draft), or — when it is missing — defaults; a bad file is
        set aside and the settings in force (sealed) or defaults come back instead."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._signature = None
            self._loaded = True
            return Settings()
        except (OSError, UnicodeDecodeError) as exc:
            return self._set_aside(f"settings could not be read: {exc}")
        try:
            settings = parse_settings(text)
        except SettingsError as exc:
            return self._set_aside(exc.message)
        self._signature = self._stat_signature()
        self._loaded = True
        return settings

    def _set_aside(self, reason: str) -> Settings:
        bad = self.path.with_name(f"{self.path.name}.{time.strftime('%Y%m%d-%H%M%S')}.bad")
        keep = self._loaded  # a running app keeps what it had rather than defaults
        in_force = "the settings in force are kept" if keep else "defaults are in use"
        try:
            os.replace(self.path, bad)
            message = f"{reason}. The file was kept as {bad} and {in_force}."
        except OSError as exc:
            message = f"{reason}. It could not be moved aside ({exc}); {in_force}."
        logger.warning("%s", message)
        self.problems.append(message)
        self._signature = self._stat_signature()  # not reported again while it stays so
        if not keep:
            return Settings()
        # Other processes (the CLI) read the file: give them the settings in force again.
        with contextlib.suppress(SettingsError):
            self._write_locked(self.current)
        return self.current

    def _write_locked(self, settings: Settings) -> None:
        text = json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        try:
            atomic_write(self.path, text.encode("utf-8"))
        except ConfigError as exc:
            raise SettingsError(exc.message) from None
        self._signature = self._stat_signature()

    def _stat_signature(self) -> Signature | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        make_private_dir(self.path.parent)
        with file_lock(self.lock_path):
            yield


def _sealed(settings: Settings) -> Settings:
    seal(settings)
    return settings
