"""The token store: keychain when usable, a 0600 file otherwise, and what it says about it."""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from typing import Any

import keyring.backend
import keyring.backends.fail
import keyring.backends.null
import keyring.errors
import pytest

from support.keyrings import LockedKeyring, LyingKeyring, MemoryKeyring, SilentKeyring
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore, new_token
from tabrelay.config.settings import McpClient, PairedBrowser, SettingsStore
from tabrelay.errors import SecretStoreError


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
    [keyring.backends.fail.Keyring(), keyring.backends.null.Keyring(), LyingKeyring()],
    ids=["fail", "null", "lying"],
)
def test_no_usable_keychain_decides_for_the_private_file_and_says_so(
    home: Paths, backend: Any
) -> None:
    store = TokenStore.open(home, keyring_backend=backend)
    assert store.insecure and store.problem is None
    [problem] = store.problems
    assert "keeps its secrets in" in problem and str(home.secrets_file) in problem
    assert "tabrelay secrets use keychain" in problem
    assert SettingsStore(home.settings_file).load().secrets_place == "file"
    token = store.create_browser_credential("b-1")
    assert stat.S_IMODE(home.secrets_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.secrets_dir.stat().st_mode) == 0o700
    assert TokenStore.open(home, keyring_backend=backend).browser_credential("b-1") == token


def test_the_recorded_place_holds_for_every_process_whatever_its_keyring_says(
    home: Paths,
) -> None:
    """The bug: each process decided alone, so a token made where the keychain worked was
    missing where it did not (401 from the app, "No MCP client named…" over stdio)."""
    keychain = MemoryKeyring()
    app = TokenStore.open(home, keyring_backend=keychain)
    assert app.place == "keychain"
    token = app.create_client_token("agent")
    # Another process whose keyring is locked now: it must not fall back to a file of its own.
    cli = TokenStore.open(home, keyring_backend=LockedKeyring())
    assert cli.place == "keychain"
    with pytest.raises(KeychainUnavailable):
        cli.create_client_token("agent")
    assert cli.problem is not None and cli.problem.trouble == "locked"
    assert not home.secrets_file.exists()
    # One whose session has no keychain at all says so too, and still writes no file.
    bridge = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    assert bridge.problem is not None and "cannot reach" in bridge.problem.message
    with pytest.raises(KeychainUnavailable):
        bridge.client_token("agent")
    assert not home.secrets_file.exists()
    assert TokenStore.open(home, keyring_backend=keychain).client_token("agent") == token


def test_a_locked_keychain_on_the_first_run_decides_nothing_and_is_not_asked_again(
    home: Paths,
) -> None:
    backend = LockedKeyring()
    store = TokenStore.open(home, keyring_backend=backend)
    assert store.place is None and store.problem is not None
    assert store.problem.trouble == "locked" and not store.insecure
    assert SettingsStore(home.settings_file).load().secrets_place is None
    asked = backend.calls
    for _ in range(3):  # no storm of prompts: the store answers from what it knows
        with pytest.raises(KeychainUnavailable):
            store.create_browser_credential("b-1")
    assert backend.calls == asked
    assert not home.secrets_file.exists()
    assert not store.unlocked_meanwhile() and backend.calls == asked, "a look, no prompt"
    backend.locked = False  # the person unlocked it elsewhere (their login, another program)
    assert store.unlocked_meanwhile() and backend.calls == asked
    store.retry()
    assert store.place == "keychain" and store.problem is None
    assert SettingsStore(home.settings_file).load().secrets_place == "keychain"


def test_a_look_at_the_lock_never_prompts_and_knows_when_it_cannot_tell(home: Paths) -> None:
    backend = LockedKeyring()
    backend.locked = False
    store = TokenStore.open(home, keyring_backend=backend)
    assert store.place == "keychain" and not store.locked_now()
    backend.locked, asked = True, backend.calls
    assert store.locked_now() and backend.calls == asked
    assert not store.unlocked_meanwhile(), "no problem recorded: nothing to notice"
    # A keychain that cannot tell without a prompt (most backends) is never guessed at.
    memory = TokenStore.open(home, keyring_backend=MemoryKeyring())
    assert memory.keychain is not None and memory.keychain.is_locked() is None
    assert not memory.locked_now()
    # A look that hangs (a D-Bus service that does not answer) gives up and says "unknown".
    silent = SilentKeyring()
    silent.is_locked = lambda: silent.release.wait(30)  # type: ignore[attr-defined]
    keychain = TokenStore.open(home, keyring_backend=silent, decide=False).keychain
    assert keychain is not None
    started = time.monotonic()
    assert keychain.is_locked() is None
    assert time.monotonic() - started < 29
    # While that look is still out, no second one is started behind it.
    looks = 0

    def counted() -> bool:
        nonlocal looks
        looks += 1
        return False

    silent.is_locked = counted  # type: ignore[attr-defined]
    assert keychain.is_locked() is None and looks == 0
    silent.release.set()
    deadline = time.monotonic() + 10
    while keychain.is_locked() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the stuck look came back: looking works again
    assert looks >= 1


def test_a_keychain_that_does_not_answer_is_given_up_after_the_timeout_with_a_notice(
    home: Paths,
) -> None:
    backend = SilentKeyring()
    waited: list[float] = []
    started = time.monotonic()
    store = TokenStore.open(
        home,
        keyring_backend=backend,
        timeout=1.5,
        on_wait=lambda waiting: waited.append(time.monotonic() - started) if waiting else None,
    )
    elapsed = time.monotonic() - started
    assert store.problem is not None and store.problem.trouble == "no_answer"
    assert "did not answer within 1.5 s" in store.problem.message
    assert [round(w) for w in waited] == [1]  # one notice, after a second
    assert 1.4 < elapsed < 30  # given up at the timeout, not when the keychain answered
    backend.release.set()


def test_an_older_install_keeps_the_place_that_holds_its_secrets_and_leaves_no_copy(
    home: Paths,
) -> None:
    """Before the place was recorded, a session without a keychain wrote secrets.json; the
    next one with a keychain ignored it (browsers rejected, the file left behind)."""
    SettingsStore(home.settings_file).update(
        lambda s: (
            s.pairings.append(PairedBrowser(id="b-old", extension_id="a" * 32)),
            s.clients.append(McpClient(name="agent")),
        )
    )
    old = TokenStore(home, keychain=None)
    old.place, old.backend = "file", old.file
    credential = old.create_browser_credential("b-old")
    client = old.create_client_token("agent")
    keychain = MemoryKeyring()
    keychain.set_password(home.keyring_service, "client:agent", "stale")
    store = TokenStore.open(home, keyring_backend=keychain)
    # The file held more: it stays, and the keychain's stray copy moves in without winning.
    assert store.place == "file"
    assert store.browser_credential("b-old") == credential
    assert store.client_token("agent") == client
    assert keychain.entries == {}


def test_moving_between_keychain_and_file_moves_every_secret_and_leaves_nothing(
    home: Paths,
) -> None:
    keychain = MemoryKeyring()
    store = TokenStore.open(home, keyring_backend=keychain)
    SettingsStore(home.settings_file).update(
        lambda s: (
            s.pairings.append(PairedBrowser(id="b-one", extension_id="a" * 32)),
            s.clients.append(McpClient(name="agent")),
        )
    )
    credential = store.create_browser_credential("b-one")
    client = store.create_client_token("agent")
    revision = SettingsStore(home.settings_file).load().secrets_revision
    assert store.move_to("file") == []
    assert keychain.entries == {}
    assert json.loads(home.secrets_file.read_text()) == {
        "browser:b-one": credential,
        "client:agent": client,
    }
    settings = SettingsStore(home.settings_file).load()
    assert settings.secrets_place == "file" and settings.secrets_revision > revision
    other = TokenStore.open(home, keyring_backend=keychain)  # another process follows
    assert other.place == "file" and other.client_token("agent") == client
    assert store.move_to("keychain") == []
    assert not home.secrets_file.exists()
    assert not home.secrets_file.with_name("secrets.json.lock").exists()
    assert TokenStore.open(home, keyring_backend=keychain).browser_credential("b-one") == credential


def test_a_locked_keychain_moves_only_when_the_person_gives_up_its_secrets(home: Paths) -> None:
    working = MemoryKeyring()
    TokenStore.open(home, keyring_backend=working)
    SettingsStore(home.settings_file).update(
        lambda s: (
            s.pairings.append(PairedBrowser(id="b-one", extension_id="a" * 32)),
            s.clients.append(McpClient(name="agent")),
        )
    )
    locked = TokenStore.open(home, keyring_backend=LockedKeyring())
    with pytest.raises(KeychainUnavailable):
        locked.move_to("file")
    assert SettingsStore(home.settings_file).load().secrets_place == "keychain"
    forgotten = locked.move_to("file", forget_unreadable=True)
    assert forgotten == ["b-one", "client agent"]
    settings = SettingsStore(home.settings_file).load()
    assert settings.secrets_place == "file" and not settings.pairings and not settings.clients
    assert locked.place == "file" and locked.problem is None


def test_moving_to_a_keychain_that_cannot_keep_secrets_moves_nothing(home: Paths) -> None:
    store = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    store.create_client_token("agent")
    with pytest.raises(SecretStoreError, match="no usable keychain"):
        store.move_to("keychain")
    assert store.place == "file" and store.client_token("agent")


def test_a_secret_file_readable_by_others_is_repaired_and_reported(home: Paths) -> None:
    store = TokenStore.open(home, keyring_backend=keyring.backends.fail.Keyring())
    store.create_browser_credential("b-one")
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
