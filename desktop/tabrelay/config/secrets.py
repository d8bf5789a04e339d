"""Secrets: each paired browser's credential and each MCP client's token, in the OS keychain or
a 0600 file — one place for every process, chosen once and recorded.

``TokenStore.open`` is the one place that decides where secrets live. The decision is kept in
the settings (``secrets_place``), so the tray app, ``serve``, the CLI, the stdio bridge and
``doctor`` all follow it and a token one of them makes works in the others at once. The first
open decides: the keychain if a round trip through it works, the file if there is no usable
keychain (headless Linux, keyring's ``fail`` or ``null`` backends, a Secret Service that fails
for another reason). A keychain that is there but *locked* (its prompt cancelled) or that does
not answer in time (a prompt left open) decides nothing: the store reports it as ``problem``,
refuses every call without touching the keychain again (no storm of prompts), and ``retry``
tries again when the person asks, or once ``unlocked_meanwhile`` sees — without a prompt —
that the person unlocked it elsewhere. Moving between the two is explicit (``move_to``).

Every keychain call runs in a worker thread with a timeout and says when it has waited a
second and when that wait ends (``on_wait``), so no caller waits in silence on a prompt.
Never logs values.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, Protocol, TypeVar

import keyring
import keyring.backend
import keyring.errors

from tabrelay.config.files import atomic_write, file_lock, make_private_dir
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SecretsPlace, Settings, SettingsStore, drop_pairings
from tabrelay.errors import ConfigError, SecretStoreError
from tabrelay.listeners import Listeners

logger = logging.getLogger(__name__)

LEGACY_RELAY_TOKEN = "relay-token"  # noqa: S105 - the entry name of the old shared token
CLIENT_PREFIX = "client:"
BROWSER_PREFIX = "browser:"
_PROBE = "probe"
KEYCHAIN_TIMEOUT = 60.0  # seconds a keychain call may take (a person typing a password)
WAIT_NOTICE = 1.0  # after this long a call says it is waiting (a prompt is probably open)
DEFAULT_COLLECTION = "/org/freedesktop/secrets/aliases/default"
LOOK_TIMEOUT = 5.0  # seconds a look at the keychain's lock may take (no prompt: D-Bus only)
TIMEOUT_VARIABLE = "TABRELAY_KEYCHAIN_TIMEOUT"

T = TypeVar("T")
# Told ``True`` when a keychain call has waited a second (a prompt is probably open), ``False``
# when that call ends; from the calling thread.
Waiting = Callable[[bool], None]
Trouble = Literal["locked", "no_answer"]


def new_token() -> str:
    """A fresh 256-bit token, URL-safe."""
    return secrets.token_urlsafe(32)


def first_decision_pending(paths: Paths) -> bool:
    """Whether opening the store will ask a keychain for the first time (a prompt to create
    or unlock it may appear): nothing is recorded yet and a keychain backend is there."""
    recorded = SettingsStore(paths.settings_file).load().secrets_place
    return recorded is None and unusable_reason(keyring.get_keyring()) is None


def keychain_timeout() -> float:
    """``KEYCHAIN_TIMEOUT``, or the ``TABRELAY_KEYCHAIN_TIMEOUT`` seconds when set and valid."""
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, ""))
    except ValueError:
        return KEYCHAIN_TIMEOUT
    return value if 0 < value <= 3600 else KEYCHAIN_TIMEOUT


class KeychainUnavailable(SecretStoreError):
    """The keychain is there but cannot be used now: locked (its prompt cancelled) or silent
    (a prompt left open). Nothing was decided or written; the person can retry."""

    title = "Keychain unavailable"

    def __init__(self, trouble: Trouble, message: str) -> None:
        super().__init__(message)
        self.trouble = trouble


class SecretBackend(Protocol):
    description: str

    def get(self, name: str) -> str | None: ...
    def set(self, name: str, value: str) -> None: ...
    def delete(self, name: str) -> None: ...


class KeychainSecrets:
    """Secrets in the OS keychain through ``keyring``, one entry per name under a service;
    each call bounded by ``timeout`` in a thread of its own."""

    def __init__(
        self,
        backend: keyring.backend.KeyringBackend,
        service: str,
        *,
        timeout: float = KEYCHAIN_TIMEOUT,
        on_wait: Waiting | None = None,
    ) -> None:
        self._backend = backend
        self._service = service
        self.timeout = timeout
        self.on_wait = on_wait
        self.description = f"keychain {backend_label(backend)} (service {service!r})"
        self._looking = threading.Lock()  # held while a look at the lock is out (its thread)

    def get(self, name: str) -> str | None:
        return self._bounded(lambda: self._backend.get_password(self._service, name), "read")

    def set(self, name: str, value: str) -> None:
        self._bounded(lambda: self._backend.set_password(self._service, name, value), "written")

    def delete(self, name: str) -> None:
        def delete() -> None:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):  # nothing stored
                self._backend.delete_password(self._service, name)

        self._bounded(delete, "written")

    def is_locked(self) -> bool | None:
        """Whether the keychain is locked, by a look that never prompts; ``None`` when this
        kind of keychain cannot tell without a prompt (or does not answer the look)."""
        look = getattr(self._backend, "is_locked", None)
        if look is None and backend_label(self._backend) == "SecretService.Keyring":
            look = functools.partial(_secret_service_locked, self._backend)
        if look is None or not self._looking.acquire(blocking=False):
            return None  # an earlier look has not come back: no second one behind it

        def look_once() -> object:
            try:
                return look()
            finally:
                self._looking.release()  # when the look returns, even after we gave up

        try:
            return bool(self._bounded(look_once, "read", timeout=LOOK_TIMEOUT, quiet=True))
        except SecretStoreError:
            return None

    def _bounded(
        self,
        call: Callable[[], T],
        verb: str,
        *,
        timeout: float | None = None,
        quiet: bool = False,
    ) -> T:
        """Run ``call`` in a daemon thread: a prompt nobody answers must not hold this caller
        (or the process's exit) forever. An abandoned call finishes on its own or never.
        ``quiet``: a look that cannot prompt, so nobody is told it waits."""
        timeout = self.timeout if timeout is None else timeout
        on_wait = None if quiet else self.on_wait
        outcome: list[T] = []
        failure: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                outcome.append(call())
            # Keychain backends fail with their own types (D-Bus, Secret Service, macOS
            # Security framework), not only keyring's: each is reported below.
            except BaseException as exc:  # noqa: BLE001
                failure.append(exc)
            finally:
                done.set()

        threading.Thread(target=run, name="tabrelay-keychain", daemon=True).start()
        waited = not done.wait(min(WAIT_NOTICE, timeout)) and on_wait is not None
        if waited and on_wait is not None:
            on_wait(True)
        answered = done.wait(max(timeout - WAIT_NOTICE, 0.0))
        if waited and on_wait is not None:
            on_wait(False)
        if not answered:
            raise KeychainUnavailable(
                "no_answer",
                f"your keychain did not answer within {timeout:g} s (its password prompt "
                "may be open or hidden behind a window)",
            )
        if failure:
            raise _keychain_error(failure[0], verb) from None
        return outcome[0]


def _secret_service_locked(backend: keyring.backend.KeyringBackend) -> bool:
    """Whether the collection keyring's Secret Service backend uses is locked, asked over
    D-Bus without unlocking it (its ``get_preferred_collection`` would prompt). Never
    ``get_default_collection``: where there is no default keyring yet it creates one, which
    opens "Choose password for new keyring". A missing collection raises: "cannot tell"."""
    import secretstorage

    with contextlib.closing(secretstorage.dbus_init()) as bus:
        path = getattr(backend, "preferred_collection", None) or DEFAULT_COLLECTION
        return bool(secretstorage.Collection(bus, path).is_locked())


def _keychain_error(exc: BaseException, verb: str) -> SecretStoreError:
    if isinstance(exc, keyring.errors.KeyringLocked):
        return KeychainUnavailable(
            "locked", "your keychain is locked (its unlock prompt was cancelled or failed)"
        )
    return SecretStoreError(f"the keychain could not be {verb}: {type(exc).__name__}: {exc}")


class FileSecrets:
    """Secrets in ``secrets.json``, mode 0600 in a 0700 directory (DESIGN §8)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = f"file {path} (0600)"
        self.problems: list[str] = []

    def get(self, name: str) -> str | None:
        return self.read_all().get(name)

    def set(self, name: str, value: str) -> None:
        with self._locked():
            data = self.read_all()
            data[name] = value
            self._write(data)

    def delete(self, name: str) -> None:
        with self._locked():
            data = self.read_all()
            if data.pop(name, None) is not None:
                self._write(data)

    def remove(self) -> None:
        """Delete the file and its lock: nothing of it is left behind."""
        with self._locked():
            self.path.unlink(missing_ok=True)
        self.path.with_name(self.path.name + ".lock").unlink(missing_ok=True)

    def read_all(self) -> dict[str, str]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}
        if os.name != "nt" and stat.S_IMODE(st.st_mode) & 0o077:
            # Someone widened the permissions: repair them and say so; the token may have leaked.
            os.chmod(self.path, 0o600)
            message = (
                f"{self.path} was readable by other users; its permissions were reset to 0600. "
                "Replace the secrets it holds: `tabrelay token rotate` (browsers pair again) and "
                "a new token for each MCP client (`tabrelay client revoke` / `add`)."
            )
            logger.warning("%s", message)
            self.problems.append(message)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SecretStoreError(f"the secret file {self.path} cannot be read: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise SecretStoreError(f"the secret file {self.path} is not a JSON object of strings")
        return data

    def _write(self, data: dict[str, str]) -> None:
        try:
            atomic_write(self.path, json.dumps(data).encode("utf-8"), mode=0o600)
        except ConfigError as exc:
            raise SecretStoreError(exc.message) from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        make_private_dir(self.path.parent)
        if os.name != "nt":
            os.chmod(self.path.parent, 0o700)  # an existing folder, made before, too
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            yield


class TokenStore:
    """Browser credentials and MCP client tokens, in the one place the settings record.

    ``place`` is ``None`` only while the first decision waits for a keychain that is locked
    or silent. Then, as for a recorded keychain that is, every call raises ``problem``
    without asking the keychain again, until ``retry`` succeeds.
    """

    def __init__(
        self,
        paths: Paths,
        *,
        keychain: KeychainSecrets | None,
        unusable: str | None = None,
    ) -> None:
        self.paths = paths
        self.keychain = keychain
        self.unusable = unusable  # why there is no keychain (when ``keychain`` is None)
        self.file = FileSecrets(paths.secrets_file)
        self.backend: SecretBackend = self.file
        self.place: SecretsPlace | None = None
        self.problems: list[str] = []
        self.problem: KeychainUnavailable | None = None
        self._listeners: Listeners[[]] = Listeners("the secret store")  # ``problem`` changed
        self._settings: SettingsStore | None = None

    def use_settings(self, store: SettingsStore) -> None:
        """Write the settings through ``store``, the running app's owner of them (else each
        write opens the file on its own, as a command does)."""
        self._settings = store

    def _settings_store(self) -> SettingsStore:
        return self._settings or SettingsStore(self.paths.settings_file)

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` (from the calling thread) whenever ``problem`` changes; returns
        the way to stop."""
        return self._listeners.add(listener)

    @classmethod
    def open(
        cls,
        paths: Paths,
        *,
        keyring_backend: keyring.backend.KeyringBackend | None = None,
        on_wait: Waiting | None = None,
        timeout: float | None = None,
        decide: bool = True,
    ) -> TokenStore:
        """The store every process shares: the recorded place, or the first decision.

        Blocking (the settings file; the keychain when deciding). A locked or silent keychain
        is not an error here: it is kept in ``problem``.
        """
        backend = keyring_backend or keyring.get_keyring()
        unusable = unusable_reason(backend)
        keychain = None
        if unusable is None:
            keychain = KeychainSecrets(
                backend,
                paths.keyring_service,
                timeout=timeout or keychain_timeout(),
                on_wait=on_wait,
            )
        store = cls(paths, keychain=keychain, unusable=unusable)
        settings = SettingsStore(paths.settings_file).load()
        with contextlib.suppress(KeychainUnavailable):  # kept in ``problem``
            if settings.secrets_place is None:
                if decide:  # `doctor` only looks
                    store._decide()
            else:
                store._use(settings.secrets_place)
        return store

    # --- where ------------------------------------------------------------------------------

    @property
    def insecure(self) -> bool:
        return self.place == "file"

    @property
    def description(self) -> str:
        if self.place is None:
            if self.problem is None:
                return "not decided yet (Tabrelay decides when it first needs a secret)"
            return "not decided yet (waiting for your keychain)"
        return self.backend.description

    def all_problems(self) -> list[str]:
        return [*self.problems, *self.file.problems]

    def retry(self) -> None:
        """Ask the keychain again (the person pressed "Unlock"); raises if it still fails."""
        self._set_problem(None)
        if self.place is None:
            self._decide()
        else:
            self._call(lambda: self.backend.get(_PROBE))

    def unlocked_meanwhile(self) -> bool:
        """Whether the keychain, refused for ``problem``, has since been unlocked by the
        person elsewhere; a look that never prompts (blocking: D-Bus)."""
        return (
            self.problem is not None
            and self.keychain is not None
            and (self.keychain.is_locked() is False)
        )

    def locked_now(self) -> bool:
        """Whether secrets live in a keychain that is locked now, by a look that never
        prompts; reading would open the unlock prompt (blocking: D-Bus)."""
        return (
            self.place == "keychain"
            and self.keychain is not None
            and (self.keychain.is_locked() is True)
        )

    def follow(self, settings: Settings) -> bool:
        """Use the place another process recorded (``secrets use``); whether it changed."""
        if settings.secrets_place in (None, self.place):
            return False
        with contextlib.suppress(KeychainUnavailable):
            self._use(settings.secrets_place)
        return True

    def move_to(self, place: SecretsPlace, *, forget_unreadable: bool = False) -> list[str]:
        """Move every secret to ``place`` and record it (``tabrelay secrets use``); nothing is
        left where they were. Returns the names of what was forgotten: with
        ``forget_unreadable``, a keychain that cannot be read is given up, and the pairings and
        clients whose secrets it held are removed (browsers ask to pair again).

        Raises:
            SecretStoreError: the target cannot keep secrets, or the source cannot be read
                (``KeychainUnavailable``) and ``forget_unreadable`` is not set.
        """
        target = self._backend_for(place)
        if place == "keychain":
            assert self.keychain is not None
            failed = _round_trip(self.keychain)
            if failed:
                raise SecretStoreError(f"the keychain {failed}; secrets stay where they are")
        if place == self.place and self.problem is None:
            return []
        store = self._settings_store()
        names = known_names(store.load())
        readable = self.place is not None and self.problem is None
        if readable:
            try:
                _transfer(self.backend, target, names, overwrite=True)
            except KeychainUnavailable as exc:  # read before anything is written
                self._set_problem(exc)
                readable = False
        if not readable and not forget_unreadable:
            raise self.problem or KeychainUnavailable("locked", "the keychain cannot be read")
        forgotten: list[str] = []

        def record(settings: Settings) -> None:
            settings.secrets_place = place
            settings.secrets_revision += 1
            if not readable:
                # Every browser credential is replaced, not unpaired by the person: a rotation,
                # so connected browsers are told so (4410) and ask to pair again by themselves.
                # Nothing is retired: the keychain that holds the credentials cannot be read.
                removed, _ = drop_pairings(
                    settings, lambda _: True, rotation=True, retire=False, now=time.time()
                )
                forgotten.extend(p.id for p in removed)
                forgotten.extend(f"client {c.name}" for c in settings.clients)
                settings.clients = []
                settings.policy_rules = [r for r in settings.policy_rules if r.client is None]

        store.update(record)
        self._use(place)
        logger.info("secrets moved to the %s", place)
        return forgotten

    def _backend_for(self, place: SecretsPlace) -> SecretBackend:
        if place == "file":
            return self.file
        if self.keychain is None:
            raise SecretStoreError(f"there is no usable keychain here ({self.unusable})")
        return self.keychain

    def _use(self, place: SecretsPlace) -> None:
        self.place = place
        if place == "keychain" and self.keychain is None:
            problem = KeychainUnavailable(
                "locked",
                "Tabrelay keeps its secrets in your keychain, which this session cannot reach "
                f"({self.unusable})",
            )
            self._set_problem(problem)
            raise problem
        self._set_problem(None)
        self.backend = self._backend_for(place)

    def _decide(self) -> None:
        """The first decision: the keychain if it works, else the file; recorded for all."""
        if self.keychain is None:
            self._settle("file", f"there is no usable keychain ({self.unusable})")
            return
        try:
            failed = _round_trip(self.keychain)
        except KeychainUnavailable as exc:
            self._set_problem(exc)
            raise
        if failed:
            self._settle("file", f"the keychain {failed}")
            return
        # An install from before the decision was recorded may hold secrets in either place:
        # keep the one that holds more, and bring the other's over.
        names = known_names(self._settings_store().load())
        in_keychain = _entries(self.keychain, names)
        in_file = self.file.read_all()
        if len(in_file) > len(in_keychain):
            _transfer(self.keychain, self.file, names, overwrite=False)
            self._settle("file", None)
        else:
            _transfer(self.file, self.keychain, names, overwrite=False)
            self._settle("keychain", None)

    def _settle(self, place: SecretsPlace, why: str | None) -> None:
        def record(settings: Settings) -> None:
            if settings.secrets_place is None:  # another process may have decided meanwhile
                settings.secrets_place = place
                settings.secrets_revision += 1

        decided = self._settings_store().update(record).secrets_place
        assert decided is not None
        self._use(decided)
        if why is not None and decided == "file":
            self.problems.append(
                f"Tabrelay keeps its secrets in {self.paths.secrets_file} (only you can read "
                f"it) because {why}. Move them into a keychain later with "
                "`tabrelay secrets use keychain`."
            )
        logger.info("secrets live in the %s", decided)

    def _set_problem(self, problem: KeychainUnavailable | None) -> None:
        changed = problem is not self.problem
        self.problem = problem
        if changed:
            self._listeners.tell()

    def _call(self, call: Callable[[], T]) -> T:
        if self.problem is not None:
            raise self.problem
        if self.place is None:
            raise KeychainUnavailable("locked", "where secrets live is not decided yet")
        try:
            return call()
        except KeychainUnavailable as exc:
            self._set_problem(exc)
            raise

    # --- the secrets ------------------------------------------------------------------------

    def browser_credential(self, pairing_id: str) -> str | None:
        """The credential of one paired browser (``PairedBrowser.id``)."""
        return self._call(lambda: self.backend.get(BROWSER_PREFIX + pairing_id))

    def create_browser_credential(self, pairing_id: str, *, value: str | None = None) -> str:
        """A fresh credential for a new pairing (or ``value``, when migrating an old one)."""
        token = value or new_token()
        self._call(lambda: self.backend.set(BROWSER_PREFIX + pairing_id, token))
        return token

    def delete_browser_credential(self, pairing_id: str) -> None:
        self._call(lambda: self.backend.delete(BROWSER_PREFIX + pairing_id))

    def legacy_relay_token(self) -> str | None:
        """The relay token every browser shared before each got its own (to migrate)."""
        return self._call(lambda: self.backend.get(LEGACY_RELAY_TOKEN))

    def delete_legacy_relay_token(self) -> None:
        self._call(lambda: self.backend.delete(LEGACY_RELAY_TOKEN))

    def client_token(self, name: str) -> str | None:
        return self._call(lambda: self.backend.get(CLIENT_PREFIX + name))

    def create_client_token(self, name: str) -> str:
        token = new_token()
        self._call(lambda: self.backend.set(CLIENT_PREFIX + name, token))
        return token

    def delete_client_token(self, name: str) -> None:
        self._call(lambda: self.backend.delete(CLIENT_PREFIX + name))


def known_names(settings: Settings) -> list[str]:
    """Every secret's name the settings know of (a keychain cannot be listed)."""
    return [
        *(BROWSER_PREFIX + p.id for p in settings.pairings if not p.legacy),
        *(BROWSER_PREFIX + r.id for r in settings.retired_pairings),
        *(CLIENT_PREFIX + c.name for c in settings.clients),
        LEGACY_RELAY_TOKEN,
    ]


def _entries(backend: SecretBackend, names: list[str]) -> dict[str, str]:
    if isinstance(backend, FileSecrets):
        return backend.read_all()  # everything in it, known or not: nothing is left behind
    return {name: value for name in names if (value := backend.get(name))}


def _transfer(
    source: SecretBackend, target: SecretBackend, names: list[str], *, overwrite: bool
) -> None:
    """Copy every secret of ``source`` to ``target`` (keeping what ``target`` has unless
    ``overwrite``), check each arrived, then delete them from ``source``."""
    entries = _entries(source, names)
    if not entries:
        return
    for name, value in entries.items():
        if overwrite or target.get(name) is None:
            target.set(name, value)
        if target.get(name) is None:
            raise SecretStoreError(f"{target.description} did not keep {name!r}; nothing moved")
    if isinstance(source, FileSecrets):
        source.remove()
    else:
        for name in entries:
            source.delete(name)
    logger.info("moved %d secret(s) to %s", len(entries), target.description)


def backend_label(backend: keyring.backend.KeyringBackend) -> str:
    cls = type(backend)
    return f"{cls.__module__.removeprefix('keyring.backends.')}.{cls.__name__}"


def unusable_reason(backend: keyring.backend.KeyringBackend) -> str | None:
    """Why this keyring backend can never keep secrets, or ``None`` when it might."""
    label = backend_label(backend)
    if backend.priority <= 0 or any(w in label.lower() for w in ("fail", "null", "plaintext")):
        return f"keyring backend {label} cannot keep secrets"
    return None


def _round_trip(keychain: KeychainSecrets) -> str | None:
    """What is wrong with the keychain (a failure, a lie), or ``None`` when a write, a read
    and a delete all work. Raises ``KeychainUnavailable`` for a locked or silent one."""
    probe = new_token()
    try:
        keychain.set(_PROBE, probe)
        ok = keychain.get(_PROBE) == probe
        keychain.delete(_PROBE)
    except KeychainUnavailable:
        raise
    except SecretStoreError as exc:
        return f"failed a round trip ({exc.message})"
    return None if ok else "did not return what was stored"
