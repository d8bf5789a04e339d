"""One owner of secrets, seen from the running app: a locked keychain makes browsers wait (not
pair again), asks nobody a question it could not keep the answer of, and says so; unlocking or
moving the secrets brings everything back without a new pairing."""

from __future__ import annotations

import asyncio

import pytest
from websockets.exceptions import InvalidStatus

from e2e.harness import wait_until
from support.fake_extension import EXTENSION_ID, FakeExtension
from support.harness import pair, running_core
from support.http import raw_request
from support.keyrings import LockedKeyring, MemoryKeyring
from support.mcp import mcp_client
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import SettingsStore
from tabrelay.core import UNLOCK_LOOK_INTERVAL
from tabrelay.protocol.constants import CONFIG_PATH, CloseCode

ORIGIN = f"chrome-extension://{EXTENSION_ID}"


async def _close_code(extension: FakeExtension) -> int | None:
    with pytest.raises(Exception) as closed:
        await extension.connect()
    return getattr(getattr(closed.value, "rcvd", None), "code", None)


def paired_then_locked(home: Paths) -> tuple[str, LockedKeyring]:
    """A browser paired with the secrets in a keychain, which is locked after a restart: its
    credential, and that keychain."""
    keychain = MemoryKeyring()
    credential = pair(home, EXTENSION_ID, keyring_backend=keychain)[EXTENSION_ID]
    locked = LockedKeyring()
    locked.entries = keychain.entries
    return credential, locked


async def test_a_locked_keychain_makes_a_paired_browser_wait_and_unlocking_lets_it_in(
    home: Paths,
) -> None:
    credential, locked = paired_then_locked(home)
    async with running_core(home, paired=(), keyring_backend=locked) as relay:
        core = relay.core
        assert core.secrets_problem is not None and core.secrets_problem.trouble == "locked"
        asked = locked.calls
        # The browser is told to wait (4503), not that its credential is wrong (4401).
        code = await _close_code(FakeExtension(relay.port, token=credential))
        assert code == CloseCode.SECRETS_UNAVAILABLE
        assert core.relay is not None
        rejection = core.relay.rejections[EXTENSION_ID]
        assert "keychain is locked" in rejection.reason
        # A pairing request is not put to the person: the answer could not be kept.
        response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": ORIGIN})
        assert response.status == 503 and response.json() == {"error": "secrets_unavailable"}
        assert relay.approver.requests == []
        assert locked.calls == asked  # and nothing of it knocked on the keychain again
        locked.locked = False  # the person typed the keychain's password
        await core.unlock_secrets()
        assert core.secrets_problem is None
        await relay.extension(token=credential)
        await relay.browser_count(1)
        assert EXTENSION_ID not in core.relay.rejections


async def test_a_keychain_unlocked_elsewhere_is_noticed_without_a_prompt_and_lets_browsers_in(
    home: Paths,
) -> None:
    credential, locked = paired_then_locked(home)
    async with running_core(home, paired=(), keyring_backend=locked) as relay:
        core = relay.core
        assert core.secrets_problem is not None
        asked = locked.calls
        await asyncio.sleep(UNLOCK_LOOK_INTERVAL * 1.5)  # looks meanwhile: never a prompt
        assert core.secrets_problem is not None and locked.calls == asked
        locked.locked = False  # the person unlocked their keychain: their login, another app
        await wait_until(lambda: core.secrets_problem is None, timeout=UNLOCK_LOOK_INTERVAL * 3)
        await relay.extension(token=credential)
        await relay.browser_count(1)


async def test_giving_up_a_locked_keychain_is_explicit_and_browsers_ask_to_pair_again(
    home: Paths,
) -> None:
    credential, locked = paired_then_locked(home)
    async with running_core(home, paired=(), keyring_backend=locked) as relay:
        forgotten = await relay.core.use_secrets_file(forget_unreadable=True)
        assert len(forgotten) == 1
        settings = SettingsStore(home.settings_file).load()
        assert settings.secrets_place == "file" and not settings.pairings
        assert relay.core.secrets_problem is None
        # The old credential is refused for what it is now: not paired any more.
        with pytest.raises(InvalidStatus) as refused:
            await FakeExtension(relay.port, token=credential).connect()
        assert refused.value.response.status_code == 403
        # And the pairing path is open again, through the person's approval.
        response = await raw_request(
            relay.port, f"{CONFIG_PATH}?code=ABCDEF", headers={"Origin": ORIGIN}
        )
        assert response.status == 403 and response.json() == {"error": "pairing_required"}
        async with asyncio.timeout(5):
            await relay.approver.asked.wait()
        assert relay.approver.codes == ["ABCDEF"]


async def test_secrets_moved_by_another_process_keep_every_browser_connected(
    home: Paths,
) -> None:
    keychain = MemoryKeyring()
    async with running_core(home, keyring_backend=keychain) as relay:
        extension = await relay.extension()
        await relay.browser_count(1)
        client = await relay.add_client("agent")
        # `tabrelay secrets use file` in another process:
        other = await asyncio.to_thread(TokenStore.open, home, keyring_backend=keychain)
        await asyncio.to_thread(other.move_to, "file")
        async with asyncio.timeout(5):
            while relay.core.tokens.place != "file":
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # a few turns of the watcher
        assert keychain.entries == {}
        assert relay.core.client_tokens() == {"agent": client}
        assert len(relay.core.registry) == 1 and extension.connection is not None
        assert extension.connection.close_code is None


async def test_a_client_the_command_line_just_made_works_in_the_running_app_at_once(
    home: Paths,
) -> None:
    """`tabrelay client add` in another process, then a request at once: the app reads the
    change before refusing an unknown token (the first-run e2e met a 401 within the watcher's
    quarter second). A wrong token is still refused."""
    async with running_core(home) as relay:
        for attempt in range(5):
            cli = ClientTokens(SettingsStore(home.settings_file), TokenStore.open(home))
            made = await asyncio.to_thread(cli.add, f"agent-{attempt}")
            async with mcp_client(relay.base_mcp(), made.token) as client:
                assert not (await client.call_tool("browser_status", {})).is_error
        wrong = await raw_request(
            relay.mcp_port, "/mcp", method="POST", headers={"Authorization": "Bearer " + "x" * 43}
        )
        assert wrong.status == 401
