"""Secrets: each paired browser's credential and each MCP client's token, in the OS keychain or
a 0600 file.

``TokenStore.open`` probes the keychain with a round trip; where there is no usable backend
(headless Linux, keyring's ``fail`` or ``null`` backends, a locked or broken Secret Service)
it falls back to ``secrets.json`` (0600) in a 0700 directory and says so through ``insecure``
and ``problems``. Calls may block (D-Bus): the app calls them from a thread. Never logs values.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import keyring
import keyring.backend
import keyring.errors

from tabrelay.config.files import atomic_write, file_lock, make_private_dir
from tabrelay.config.paths import Paths
from tabrelay.errors import ConfigError, SecretStoreError

logger = logging.getLogger(__name__)

LEGACY_RELAY_TOKEN = "relay-token"  # noqa: S105 - the entry name of the old shared token
CLIENT_PREFIX = "client:"
BROWSER_PREFIX = "browser:"
_PROBE = "probe"


def new_token() -> str:
    """A fresh 256-bit token, URL-safe."""
    return secrets.token_urlsafe(32)


class SecretBackend(Protocol):
    description: str
    secure: bool

    def get(self, name: str) -> str | None: ...
    def set(self, name: str, value: str) -> None: ...
    def delete(self, name: str) -> None: ...


class KeychainSecrets:
    """Secrets in the OS keychain through ``keyring``, one entry per name under a service."""

    secure = True

    def __init__(self, backend: keyring.backend.KeyringBackend, service: str) -> None:
        self._backend = backend
        self._service = service
        self.description = f"{_backend_label(backend)} (service {service!r})"

    def get(self, name: str) -> str | None:
        try:
            return self._backend.get_password(self._service, name)
        except keyring.errors.KeyringError as exc:
            raise SecretStoreError(f"the keychain could not be read: {exc}") from None

    def set(self, name: str, value: str) -> None:
        try:
            self._backend.set_password(self._service, name, value)
        except keyring.errors.KeyringError as exc:
            raise SecretStoreError(f"the keychain could not be written: {exc}") from None

    def delete(self, name: str) -> None:
        try:
            self._backend.delete_password(self._service, name)
        except keyring.errors.PasswordDeleteError:
            pass  # nothing was stored under that name
        except keyring.errors.KeyringError as exc:
            raise SecretStoreError(f"the keychain could not be written: {exc}") from None


class FileSecrets:
    """Secrets in ``secrets.json``, mode 0600 in a 0700 directory (DESIGN §8)."""

    secure = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = f"file {path} (no usable keychain)"
        self.problems: list[str] = []

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, value: str) -> None:
        with self._locked():
            data = self._read()
            data[name] = value
            self._write(data)

    def delete(self, name: str) -> None:
        with self._locked():
            data = self._read()
            if data.pop(name, None) is not None:
                self._write(data)

    def _read(self) -> dict[str, str]:
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
    """The relay token and MCP client tokens over whichever backend is usable."""

    def __init__(self, backend: SecretBackend, *, problems: list[str] | None = None) -> None:
        self.backend = backend
        self.problems = problems or []

    @classmethod
    def open(
        cls, paths: Paths, *, keyring_backend: keyring.backend.KeyringBackend | None = None
    ) -> TokenStore:
        """Use the keychain if a round trip through it works, else the 0600 file."""
        backend = keyring_backend or keyring.get_keyring()
        reason = _unusable_reason(backend, paths.keyring_service)
        if reason is None:
            return cls(KeychainSecrets(backend, paths.keyring_service))
        file_store = FileSecrets(paths.secrets_file)
        message = f"No usable keychain ({reason}); secrets are kept in {paths.secrets_file} (0600)."
        return cls(file_store, problems=[message])

    @property
    def insecure(self) -> bool:
        return not self.backend.secure

    def all_problems(self) -> list[str]:
        extra = getattr(self.backend, "problems", [])
        return [*self.problems, *extra]

    def browser_credential(self, pairing_id: str) -> str | None:
        """The credential of one paired browser (``PairedBrowser.id``)."""
        return self.backend.get(BROWSER_PREFIX + pairing_id)

    def create_browser_credential(self, pairing_id: str, *, value: str | None = None) -> str:
        """A fresh credential for a new pairing (or ``value``, when migrating an old one)."""
        token = value or new_token()
        self.backend.set(BROWSER_PREFIX + pairing_id, token)
        return token

    def delete_browser_credential(self, pairing_id: str) -> None:
        self.backend.delete(BROWSER_PREFIX + pairing_id)

    def legacy_relay_token(self) -> str | None:
        """The relay token every browser shared before each got its own (to migrate)."""
        return self.backend.get(LEGACY_RELAY_TOKEN)

    def delete_legacy_relay_token(self) -> None:
        self.backend.delete(LEGACY_RELAY_TOKEN)

    def client_token(self, name: str) -> str | None:
        return self.backend.get(CLIENT_PREFIX + name)

    def create_client_token(self, name: str) -> str:
        token = new_token()
        self.backend.set(CLIENT_PREFIX + name, token)
        return token

    def delete_client_token(self, name: str) -> None:
        self.backend.delete(CLIENT_PREFIX + name)


def _backend_label(backend: keyring.backend.KeyringBackend) -> str:
    cls = type(backend)
    return f"{cls.__module__.removeprefix('keyring.backends.')}.{cls.__name__}"


def _unusable_reason(backend: keyring.backend.KeyringBackend, service: str) -> str | None:
    label = _backend_label(backend)
    if backend.priority <= 0 or any(w in label.lower() for w in ("fail", "null", "plaintext")):
        return f"keyring backend {label} cannot keep secrets"
    probe = new_token()
    try:
        backend.set_password(service, _PROBE, probe)
        ok = backend.get_password(service, _PROBE) == probe
        backend.delete_password(service, _PROBE)
    # A keychain backend may fail with its own exception types (D-Bus, Secret Service, macOS
    # Security framework), not only keyring's: any failure here means "not usable".
    except Exception as exc:  # noqa: BLE001
        return f"{label} failed a round trip: {type(exc).__name__}"
    return None if ok else f"{label} did not return what was stored"
