"""The token store: keychain when usable, a 0600 file otherwise, and what it says about it."""

from __future__ import annotations

import base64
import os
import stat
from typing import Any

import keyring.backend
import keyring.backends.fail
import keyring.backends.null
import keyring.errors
import pytest

from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore, new_token
from tabrelay.errors import SecretStoreError


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
    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.KeyringLocked("the collection is locked")


class LyingKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        return None


def test_tokens_are_256_bit_and_url_safe() -> None:
    token = new_token()
    assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert new_token() != token


def test_a_working_keychain_is_used_and_namespaced_by_home(home: Paths) -> None:
    backend = MemoryKeyring()
    store = TokenStore.open(home, keyring_backend=backend)
    assert not store.insecure and store.problems == []
    token = store.create_browser_credential("b-1")
    assert store.browser_credential("b-1") == token
    assert backend.entries == {(home.keyring_service, "browser:b-1"): token}
    assert home.keyring_service.startswith("tabrelay-")
    assert not home.secrets_file.exists()


@pytest.mark.parametrize(
    "backend",
    [
        keyring.backends.fail.Keyring(),
        keyring.backends.null.Keyring(),
        LockedKeyring(),
        LyingKeyring(),
    ],
    ids=["fail", "null", "locked", "lying"],
)
def test_an_unusable_keychain_falls_back_to_a_private_file_and_says_so(
    home: Paths, backend: Any
) -> None:
    store = TokenStore.open(home, keyring_backend=backend)
    assert store.insecure
    [problem] = store.problems
    assert "No usable keychain" in problem and str(home.secrets_file) in problem
    token = store.create_browser_credential("b-1")
    assert stat.S_IMODE(home.secrets_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.secrets_dir.stat().st_mode) == 0o700
    assert TokenStore.open(home, keyring_backend=backend).browser_credential("b-1") == token


def test_a_secret_file_readable_by_others_is_repaired_and_reported(home: Paths) -> None:
    store = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    store.create_browser_credential("b-1")
    os.chmod(home.secrets_file, 0o644)
    again = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    again.browser_credential("b-1")
    assert stat.S_IMODE(home.secrets_file.stat().st_mode) == 0o600
    assert any("readable by other users" in p for p in again.all_problems())


def test_a_corrupt_secret_file_is_an_error_not_a_silent_new_token(home: Paths) -> None:
    store = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    store.create_browser_credential("b-1")
    home.secrets_file.write_text("{broken")
    with pytest.raises(SecretStoreError, match="cannot be read"):
        store.browser_credential("b-1")


def test_browser_credentials_and_client_tokens_are_separate_and_deletable(home: Paths) -> None:
    store = TokenStore.open(home, keyring_backend=MemoryKeyring())
    first = store.create_browser_credential("b-1")
    second = store.create_browser_credential("b-2")
    assert second != first and store.browser_credential("b-1") == first
    store.delete_browser_credential("b-1")
    assert store.browser_credential("b-1") is None and store.browser_credential("b-2") == second
    client = store.create_client_token("cursor")
    assert store.client_token("cursor") == client != second
    store.delete_client_token("cursor")
    store.delete_client_token("cursor")  # deleting twice is fine
    assert store.client_token("cursor") is None
