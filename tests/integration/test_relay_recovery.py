"""What the relay gives a browser to find its way back after a rotation, a "no" or a new port —
over real sockets: a proof and a 4410 for a credential a rotation replaced (never a session),
the state of a pairing request (never a credential), and the port of the app's next start."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.exceptions import ConnectionClosed

from support.fake_extension import EXTENSION_ID, FakeExtension
from support.harness import RelayHarness, ScriptedApprover, running_core
from support.http import raw_request
from support.keyrings import LockedKeyring
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.protocol.constants import CONFIG_PATH, PAIRING_STATUS_PATH, CloseCode
from tabrelay.relay import pairing as pairing_module
from tabrelay.relay.pairing import Pairing

ORIGIN = f"chrome-extension://{EXTENSION_ID}"


def cli_pairing(paths: Paths) -> Pairing:
    """The pairing commands as `tabrelay token rotate / pair revoke` run them, in their own
    objects (another process, as far as the running app can tell)."""
    return Pairing(SettingsStore(paths.settings_file), TokenStore.open(paths))


async def applied(relay: RelayHarness, check: object) -> None:
    """Wait until the running app has read the settings a command wrote."""
    async with asyncio.timeout(5):
        while not check(relay.core.settings):  # type: ignore[operator]
            await asyncio.sleep(0.02)


async def test_a_browser_away_at_a_rotation_is_proved_to_and_told_to_pair_again(
    relay: RelayHarness, home: Paths
) -> None:
    old = relay.token
    await asyncio.to_thread(cli_pairing(home).revoke_all)
    await applied(relay, lambda s: not s.pairings)

    # It authenticates the app (FakeExtension checks auth.ok against its old credential), says
    # hello, and is closed with 4410: never a session.
    away = FakeExtension(relay.port, old)
    await away.connect()
    assert await away.wait_closed() == CloseCode.TOKEN_ROTATED
    assert len(relay.core.registry) == 0
    # Once told, that credential is gone: the next attempt is refused before the upgrade.
    async with asyncio.timeout(5):
        while relay.core.settings_store.load().retired_pairings:
            await asyncio.sleep(0.02)
    with pytest.raises(Exception) as refused:
        await FakeExtension(relay.port, old, instance="again").connect()
    assert "403" in str(refused.value)


async def test_a_retired_credential_proves_nothing_to_a_stranger_and_lets_nobody_in(
    relay: RelayHarness, home: Paths
) -> None:
    await asyncio.to_thread(cli_pairing(home).revoke_all)
    await applied(relay, lambda s: not s.pairings)
    stranger = FakeExtension(relay.port, "a-guess-at-the-credential")
    with pytest.raises(ConnectionClosed) as refused:
        await stranger.connect()
    assert refused.value.rcvd is not None and refused.value.rcvd.code == CloseCode.AUTH_FAILED
    assert not any("auth.ok" in str(frame) for frame in stranger.received)
    assert len(relay.core.registry) == 0
    assert len(relay.core.settings_store.load().retired_pairings) == 1, (
        "still there for its browser"
    )


async def test_after_the_person_unpairs_a_browser_it_gets_no_proof_from_a_rotation(
    relay: RelayHarness, home: Paths
) -> None:
    old = relay.token
    pairing = cli_pairing(home)
    await asyncio.to_thread(pairing.revoke_all)
    await asyncio.to_thread(pairing.revoke, EXTENSION_ID)
    settings = await asyncio.to_thread(relay.core.settings_store.load)
    assert settings.retired_pairings == []
    await applied(relay, lambda s: not s.retired_pairings)
    with pytest.raises(Exception) as refused:
        await FakeExtension(relay.port, old).connect()
    assert "403" in str(refused.value)


async def test_a_browser_of_an_extension_paired_again_elsewhere_still_hears_of_the_rotation(
    relay: RelayHarness, home: Paths
) -> None:
    """Two profiles share the extension id: one paired again, the other was closed."""
    old = relay.token
    await asyncio.to_thread(cli_pairing(home).revoke_all)
    await applied(relay, lambda s: not s.pairings)
    await relay.pair()
    away = FakeExtension(relay.port, old, instance="closed-profile")
    await away.connect()
    assert await away.wait_closed() == CloseCode.TOKEN_ROTATED


def test_retired_credentials_expire_and_leave_nothing_in_the_secret_store(home: Paths) -> None:
    store = SettingsStore(home.settings_file)  # one owner: its changes are what it reads
    tokens = TokenStore.open(home)
    pairing = Pairing(store, tokens)
    first, _ = pairing.add(EXTENSION_ID)
    pairing.revoke_all()
    assert pairing.retired_credentials(EXTENSION_ID)[0][0] == first.id

    def age(settings: Settings) -> None:
        for retired in settings.retired_pairings:
            retired.retired_at -= pairing_module.RETIRED_DAYS * 86400 + 1

    store.update(age)
    assert pairing.retired_credentials(EXTENSION_ID) == [], "expired: it proves nothing"
    second, _ = pairing.add(EXTENSION_ID)
    pairing.revoke_all()  # the next change drops what expired
    assert [r.id for r in store.load().retired_pairings] == [second.id]
    assert tokens.browser_credential(first.id) is None


async def test_the_pairing_status_says_asking_then_declined_and_when_to_ask_again(
    home: Paths,
) -> None:
    approver = ScriptedApprover(answer=None)
    async with running_core(home, paired=(), approver=approver) as relay:

        async def status(code: str = "ABCDEF") -> tuple[int, dict[str, object], str | None]:
            response = await raw_request(
                relay.port, f"{PAIRING_STATUS_PATH}?code={code}", headers={"Origin": ORIGIN}
            )
            allowed = response.headers.get("access-control-allow-origin")
            return response.status, response.json(), allowed

        assert await status() == (200, {"pairing": "waiting"}, ORIGIN)
        config = await raw_request(
            relay.port, f"{CONFIG_PATH}?code=ABCDEF", headers={"Origin": ORIGIN}
        )
        assert config.json() == {"error": "pairing_required"}
        assert await status() == (200, {"pairing": "asking"}, ORIGIN)
        assert (await status("XYZXYZ"))[1] == {"pairing": "waiting"}, "another request's code"
        approver.decide(False)
        await asyncio.sleep(0)
        async with asyncio.timeout(5):
            while (await status())[1].get("pairing") != "declined":
                await asyncio.sleep(0.02)
        _, body, _ = await status()
        assert 55 <= int(body["retry_after"]) <= pairing_module.REFUSED_PAUSE + 1  # type: ignore[call-overload]
        assert (
            b"token"
            not in (
                await raw_request(
                    relay.port, f"{PAIRING_STATUS_PATH}?code=ABCDEF", headers={"Origin": ORIGIN}
                )
            ).body
        )


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "https://evil.example"},
        {"Origin": ORIGIN, "Sec-Fetch-Mode": "navigate"},
    ],
)
async def test_the_pairing_status_is_for_the_extension_only(
    relay: RelayHarness, headers: dict[str, str]
) -> None:
    response = await raw_request(relay.port, f"{PAIRING_STATUS_PATH}?code=ABCDEF", headers=headers)
    assert response.status == 403
    assert "access-control-allow-origin" not in response.headers
    no_code = await raw_request(relay.port, PAIRING_STATUS_PATH, headers={"Origin": ORIGIN})
    assert no_code.status == 403


async def test_a_stopping_app_tells_its_browsers_the_port_of_its_next_start(
    home: Paths,
) -> None:
    async with running_core(home) as relay:
        browser = await relay.extension()
        seed = await relay.extension(seed=True, instance=None)
        next_port = relay.port + 1 if relay.port < 65535 else relay.port - 1

        def move(settings: Settings) -> None:
            settings.relay_port = next_port

        await asyncio.to_thread(relay.core.settings_store.update, move)
        await relay.core.relay.stop()  # type: ignore[union-attr]
        assert await browser.wait_closed() == 1001
    frames = [json.loads(f) for f in browser.received if isinstance(f, str)]
    assert {"type": "relay.port", "port": next_port} in frames
    assert not any("relay.port" in str(f) for f in seed.received), (
        "seed extensions hear nothing new"
    )


async def test_an_app_staying_on_its_port_announces_nothing(relay: RelayHarness) -> None:
    def stay(settings: Settings) -> None:
        settings.relay_port = relay.port  # the harness's port came from the command line

    await asyncio.to_thread(relay.core.settings_store.update, stay)
    browser = await relay.extension()
    await relay.core.relay.stop()  # type: ignore[union-attr]
    await browser.wait_closed()
    assert not any("relay.port" in str(f) for f in browser.received)


async def test_an_app_serving_a_port_from_the_command_line_announces_nothing_when_it_stops(
    relay: RelayHarness,
) -> None:
    # `tabrelay serve --relay-port N`: the settings keep their own port (the default here), the
    # relay serves N, and the same command starts it on N again. Announcing the settings' port
    # would send the browser to look for the app where it will not be.
    assert relay.core.settings.relay_port not in (0, relay.port)
    browser = await relay.extension()
    await relay.core.relay.stop()  # type: ignore[union-attr]
    assert await browser.wait_closed() == 1001
    assert not any("relay.port" in str(f) for f in browser.received)


async def test_giving_up_a_keychain_that_locked_meanwhile_asks_connected_browsers_to_pair_again(
    home: Paths,
) -> None:
    """Connected while the keychain was open, then it locked and the person gave its secrets
    up: the browser is told its credential was replaced (4410: it asks to pair again by
    itself), not that the person unpaired it (4403: it would wait for a click)."""
    keychain = LockedKeyring()
    keychain.locked = False
    async with running_core(home, keyring_backend=keychain) as relay:
        browser = await relay.extension()
        await relay.browser_count(1)
        keychain.locked = True
        await relay.core.use_secrets_file(forget_unreadable=True)
        assert await browser.wait_closed() == CloseCode.TOKEN_ROTATED


async def test_an_mcp_client_that_stops_reading_does_not_hold_back_an_unpairing(
    relay: RelayHarness, home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings watcher tells MCP clients when the tool list changes; one that stops
    reading (an old SSE stream) held the watcher, so a browser unpaired meanwhile stayed
    connected (review). The notice goes out on its own now."""
    browser = await relay.extension()
    assert relay.core.endpoint is not None
    stuck = asyncio.Event()

    async def never_read(settings: object) -> None:
        await stuck.wait()

    monkeypatch.setattr(relay.core.endpoint, "settings_changed", never_read)
    await asyncio.to_thread(cli_pairing(home).revoke, EXTENSION_ID)
    async with asyncio.timeout(10):
        assert await browser.wait_closed() == CloseCode.NOT_PAIRED
    stuck.set()


async def test_a_browser_away_at_a_rotation_waits_while_the_keychain_is_locked(
    relay: RelayHarness, home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its retired credential cannot be read while the keychain is locked: it is told to wait
    (4503) and tries again, not told that its credential is wrong (4401: "Pair again")."""
    old = relay.token
    await asyncio.to_thread(cli_pairing(home).revoke_all)
    await applied(relay, lambda s: not s.pairings)

    def locked(extension_id: str) -> object:
        raise KeychainUnavailable("locked", "your keychain is locked")

    assert relay.core.relay is not None
    monkeypatch.setattr(relay.core.relay.pairing, "retired_credentials", locked)
    with pytest.raises(ConnectionClosed) as closed:
        await FakeExtension(relay.port, old).connect()
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == CloseCode.SECRETS_UNAVAILABLE
