"""Keychains for tests through keyring's own interface: working, locked, lying, silent."""

from __future__ import annotations

import threading

import keyring.backend
import keyring.errors


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A working keychain in memory (keyring's own interface)."""

    priority = 5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.entries:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.entries[(service, username)]


class LockedKeyring(MemoryKeyring):
    """A Secret Service whose collection is locked and whose unlock prompt is cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.locked = True
        self.calls = 0

    def is_locked(self) -> bool:
        """A look that never prompts, as the Secret Service's ``Locked`` property."""
        return self.locked

    def _check(self) -> None:
        self.calls += 1
        if self.locked:
            raise keyring.errors.KeyringLocked("Failed to unlock the collection!")

    def get_password(self, service: str, username: str) -> str | None:
        self._check()
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self._check()
        super().set_password(service, username, password)

    def delete_password(self, service: str, username: str) -> None:
        self._check()
        super().delete_password(service, username)


class SilentKeyring(MemoryKeyring):
    """A keychain whose password prompt nobody answers."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def set_password(self, service: str, username: str, password: str) -> None:
        self.release.wait(30)
        super().set_password(service, username, password)


class LyingKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        return None
