"""The relay's security model (DESIGN §4, THREATS R1–R6, C1, C3) against a real socket."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import InvalidStatus

from support.fake_extension import EXTENSION_ID, OTHER_EXTENSION_ID, AppNotVerified, FakeExtension
from support.harness import RelayHarness, ScriptedApprover, running_core
from support.http import raw_request
from support.net import taken_port
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import LEGACY_RELAY_TOKEN, TokenStore
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.errors import StartupError
from tabrelay.protocol.constants import CONFIG_PATH, RELAY_PATH, CloseCode
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.relay.server import require_loopback
from tabrelay.system.logs import install_redaction

PAIRED_ORIGIN = f"chrome-extension://{EXTENSION_ID}"


# --- who may upgrade -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example",
        f"chrome-extension://{OTHER_EXTENSION_ID}",  # a real but unpaired extension
        "null",
        None,
    ],
)
async def test_upgrade_without_a_paired_origin_is_refused_before_101_even_with_the_token(
    relay: RelayHarness, origin: str | None
) -> None:
    headers = {"Origin": origin} if origin else {}
    response = await raw_request(
        relay.port, f"{RELAY_PATH}?token={relay.token}", headers=headers, upgrade=True
    )
    assert response.status == 403
    assert relay.token.encode() not in response.body
    assert len(relay.core.registry) == 0


@pytest.mark.parametrize("path", [RELAY_PATH, CONFIG_PATH, "/healthz"])
async def test_a_rebinding_host_gets_421_on_every_route(relay: RelayHarness, path: str) -> None:
    response = await raw_request(
        relay.port,
        f"{path}?token={relay.token}" if path == RELAY_PATH else path,
        headers={"Origin": PAIRED_ORIGIN},
        upgrade=path == RELAY_PATH,
        host=f"evil.example:{relay.port}",
    )
    assert response.status == 421
    assert relay.token.encode() not in response.body


async def test_localhost_host_header_is_accepted(relay: RelayHarness) -> None:
    response = await raw_request(relay.port, "/healthz", host=f"localhost:{relay.port}")
    assert response.status == 200
    assert response.json() == {"status": "ok", "version": "0.1.0", "browsers": 0}


# --- the config endpoint ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, another local program
        {"Origin": "https://evil.example"},  # fetch() from a web page
        {"Origin": PAIRED_ORIGIN, "Sec-Fetch-Mode": "navigate"},  # a tab pointed at the URL
        {"Origin": PAIRED_ORIGIN, "Sec-Fetch-Dest": "document"},
        {"Origin": f"{PAIRED_ORIGIN}/"},  # not the exact origin form
    ],
)
async def test_config_endpoint_never_gives_the_token_to_anything_but_a_paired_extension(
    relay: RelayHarness, headers: dict[str, str]
) -> None:
    response = await raw_request(relay.port, CONFIG_PATH, headers=headers)
    assert response.status == 403
    assert relay.token.encode() not in response.body
    assert "access-control-allow-origin" not in response.headers


async def test_a_local_program_forging_a_paired_origin_gets_no_credential(
    relay: RelayHarness,
) -> None:
    """THREATS C1/R3: the paired id is public; outside a pairing window the endpoint answers
    like for a stranger, and the forger cannot complete a handshake either."""
    relay.approver.answer = None  # the person does not answer: nothing happened on their side
    await relay.extension()
    await relay.browser_count(1)
    for _ in range(3):
        response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
        assert response.status == 403
        assert response.json() == {"error": "pairing_required"}
        assert relay.token.encode() not in response.body
    assert relay.approver.requests == [EXTENSION_ID], "the person is asked, once"
    forger = FakeExtension(relay.port, "a-guess-at-the-credential", instance="forger")
    with pytest.raises(Exception) as raised:
        await forger.connect()
    assert getattr(getattr(raised.value, "rcvd", None), "code", None) == CloseCode.AUTH_FAILED
    assert [b.pairing_id for b in relay.core.registry.all()] == [paired_pairing(relay)]


async def test_inside_a_window_the_person_opened_the_endpoint_pairs_one_new_browser_once(
    relay: RelayHarness,
) -> None:
    before = relay.token
    relay.core.pairing.open_window(EXTENSION_ID)
    response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
    assert response.status == 200
    body = response.json()
    assert body["port"] == relay.port and body["protocol"] == 1
    assert body["token"] != before, "a credential of its own, not the other browser's"
    assert response.headers["access-control-allow-origin"] == PAIRED_ORIGIN
    assert response.headers["cache-control"] == "no-store"
    again = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
    assert again.status == 403, "once"
    assert len(relay.core.settings.pairings) == 2
    await relay.extension(token=body["token"], instance="second")
    await relay.extension(token=before, instance="first")
    await relay.browser_count(2)


async def test_the_window_belongs_to_the_request_the_person_saw_by_its_code(home: Paths) -> None:
    """A program polling in the extension's name while the person approves gets nothing: the
    credential goes to the request that showed the code the dialog showed."""
    approver = ScriptedApprover(answer=None)
    async with running_core(home, paired=(), approver=approver) as relay:
        real = f"{CONFIG_PATH}?code=K7PQ2M"
        asked = await raw_request(relay.port, real, headers={"Origin": PAIRED_ORIGIN})
        assert asked.json() == {"error": "pairing_required"}
        assert approver.codes == ["K7PQ2M"], "the dialog shows the request's code"
        for forged in (CONFIG_PATH, f"{CONFIG_PATH}?code=AAAAAA", f"{CONFIG_PATH}?code=k7pq2m"):
            # Asking while the question is out raises no second one.
            response = await raw_request(relay.port, forged, headers={"Origin": PAIRED_ORIGIN})
            assert response.json() == {"error": "pairing_required"}
        approver.decide(True)
        async with asyncio.timeout(5):
            while relay.core.pairing.pending:
                await asyncio.sleep(0.01)
        approver.answer = False  # what the forger's requests raise now, the person refuses
        for forged in (CONFIG_PATH, f"{CONFIG_PATH}?code=AAAAAA"):
            response = await raw_request(relay.port, forged, headers={"Origin": PAIRED_ORIGIN})
            assert response.status == 403, "only the request the person saw collects"
        collected = await raw_request(relay.port, real, headers={"Origin": PAIRED_ORIGIN})
        assert collected.status == 200 and collected.json()["token"] == relay.token
        assert approver.requests == [EXTENSION_ID, EXTENSION_ID]


async def test_an_allowance_given_with_a_code_pairs_only_the_request_showing_it(
    home: Paths,
) -> None:
    async with running_core(home, paired=()) as relay:
        relay.core.pairing.approver = None  # headless
        await _cli(home, "pair", "allow", EXTENSION_ID, "--code", "K7PQ2M")
        for path in (CONFIG_PATH, f"{CONFIG_PATH}?code=AAAAAA"):
            response = await raw_request(relay.port, path, headers={"Origin": PAIRED_ORIGIN})
            assert response.json() == {"error": "pairing_required"}
        path = f"{CONFIG_PATH}?code=K7PQ2M"
        response = await raw_request(relay.port, path, headers={"Origin": PAIRED_ORIGIN})
        assert response.status == 200 and response.json()["token"] == relay.token


async def test_one_question_at_a_time_whatever_extension_ids_a_program_asks_in(
    home: Paths,
) -> None:
    approver = ScriptedApprover(answer=None)
    async with running_core(home, paired=(), approver=approver) as relay:
        for letter in "abcdef":
            await raw_request(
                relay.port,
                f"{CONFIG_PATH}?code=ABCDEF",
                headers={"Origin": f"chrome-extension://{letter * 32}"},
            )
        assert approver.requests == ["a" * 32], "one dialog, not a pile"


async def test_preflight_from_a_web_origin_gets_no_cors_grant(relay: RelayHarness) -> None:
    response = await raw_request(
        relay.port,
        CONFIG_PATH,
        method="OPTIONS",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert response.status >= 400
    assert "access-control-allow-origin" not in response.headers


async def test_an_unpaired_extension_raises_exactly_one_pairing_request(home: Paths) -> None:
    approver = ScriptedApprover(answer=None)  # the person has not answered yet
    async with running_core(home, paired=(), approver=approver) as relay:
        headers = {"Origin": PAIRED_ORIGIN}
        for _ in range(5):
            response = await raw_request(relay.port, CONFIG_PATH, headers=headers)
            assert response.status == 403
            assert response.json() == {"error": "pairing_required"}
        assert approver.requests == [EXTENSION_ID]

        approver.decide(True)
        async with asyncio.timeout(5):
            while relay.core.pairing.pending:
                await asyncio.sleep(0.01)
        response = await raw_request(relay.port, CONFIG_PATH, headers=headers)
        assert response.json()["token"] == relay.token
        assert relay.core.pairing.is_paired(EXTENSION_ID)
        extension = await relay.extension()
        await relay.browser_count(1)
        assert relay.core.registry.resolve().extension_id == extension.extension_id


async def test_a_denied_pairing_keeps_the_extension_out(home: Paths) -> None:
    approver = ScriptedApprover(answer=False)
    async with running_core(home, paired=(), approver=approver) as relay:
        await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
        async with asyncio.timeout(5):
            while relay.core.pairing.pending:
                await asyncio.sleep(0.01)
        for _ in range(3):
            response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
            assert response.json() == {"error": "pairing_required"}
        assert approver.requests == [EXTENSION_ID], "a no is not asked again at once"
        assert not SettingsStore(home.settings_file).load().pairings


async def test_headless_pairing_only_through_the_command_line(
    home: Paths, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_core(home, paired=()) as relay:
        relay.core.pairing.approver = None
        caplog.set_level(logging.WARNING, logger="tabrelay.relay.pairing")
        for _ in range(3):
            response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
            assert response.json() == {"error": "pairing_required"}
        hints = [r.getMessage() for r in caplog.records if "asks to pair" in r.getMessage()]
        assert hints == [
            f"extension {EXTENSION_ID} asks to pair; allow it with "
            f"`tabrelay pair allow {EXTENSION_ID}`"
        ]
        await _cli(home, "pair", "allow", EXTENSION_ID)
        response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
        assert response.json()["token"] == relay.token
        again = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
        assert again.json() == {"error": "pairing_required"}, "the allowance pairs once"


# --- authentication --------------------------------------------------------------------------


async def test_challenge_response_never_puts_the_token_on_the_wire(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    await relay.core.registry.resolve().list_tabs()
    frames = [f for f in extension.sent + extension.received if isinstance(f, str)]
    assert any('"auth.response"' in f for f in frames)
    assert all(relay.token not in f for f in frames)


async def test_wrong_proof_is_closed_with_4401(relay: RelayHarness) -> None:
    extension = FakeExtension(relay.port, "not-the-token")
    with pytest.raises(Exception) as raised:
        await extension.connect()
    assert getattr(getattr(raised.value, "rcvd", None), "code", None) == CloseCode.AUTH_FAILED
    assert len(relay.core.registry) == 0


async def test_wrong_query_token_gets_401_before_the_upgrade(relay: RelayHarness) -> None:
    for token in ("wrong", "ü" * 43, relay.token + "x"):
        with pytest.raises(InvalidStatus) as raised:
            await FakeExtension(relay.port, token, seed=True).connect()
        assert raised.value.response.status_code == 401


async def test_query_token_can_be_turned_off(relay: RelayHarness) -> None:
    def disable(settings: Settings) -> None:
        settings.allow_query_token = False

    SettingsStore(relay.paths.settings_file).update(disable)
    async with asyncio.timeout(5):  # the running app sees the change
        while relay.core.settings.allow_query_token:
            await asyncio.sleep(0.01)
    with pytest.raises(InvalidStatus) as raised:
        await FakeExtension(relay.port, relay.token, seed=True).connect()
    assert raised.value.response.status_code == 401
    assert json.loads(raised.value.response.body) == {"error": "query_token_disabled"}
    await relay.extension()  # challenge–response still works
    await relay.browser_count(1)


async def test_silent_peer_is_closed_after_the_auth_timeout(home: Paths) -> None:
    async with running_core(home, auth_timeout=0.2) as relay:
        extension = FakeExtension(relay.port, relay.token)
        extension.connection = None
        from websockets.asyncio.client import connect

        async with connect(
            extension.url(),
            origin=extension.origin,  # type: ignore[arg-type]
        ) as connection:
            await connection.recv()  # the challenge; never answered
            async with asyncio.timeout(2):
                with pytest.raises(Exception):  # noqa: B017
                    await connection.recv()
            assert connection.close_code == CloseCode.AUTH_TIMEOUT


async def test_fake_app_without_the_token_cannot_make_the_extension_obey(
    unused_tcp_port: int,
) -> None:
    received: list[str] = []
    token = "the-real-token-known-only-to-app-and-extension"

    async def squatter(connection: ServerConnection) -> None:
        await connection.send(
            json.dumps({"type": "auth.challenge", "protocol": 1, "nonce": "n" * 43})
        )
        received.append(str(await connection.recv()))
        await connection.send(json.dumps({"type": "auth.ok", "proof": "guessed"}))
        await connection.send(json.dumps({"id": "1", "method": "tabs.list", "params": {}}))
        async for frame in connection:
            received.append(str(frame))

    async with serve(squatter, "127.0.0.1", unused_tcp_port):
        extension = FakeExtension(unused_tcp_port, token)
        with pytest.raises(AppNotVerified):
            await extension.connect()
    assert extension.obeyed == 0
    assert not any('"hello"' in frame for frame in received)
    assert all(token not in frame for frame in received)


async def test_failed_attempts_are_limited_per_offender_and_never_lock_out_the_browser(
    home: Paths,
) -> None:
    limits = FailureLimits(max_failures=3, window=10, cooldown=30)
    async with running_core(home, limits=limits) as relay:
        alerts = relay.core.hub.subscribe(accept=lambda e: e.kind == "alert")
        for _ in range(3):
            with pytest.raises(InvalidStatus):
                await FakeExtension(relay.port, "guess", seed=True).connect()
        with pytest.raises(InvalidStatus) as raised:  # the guesser now waits out its cool-down
            await FakeExtension(relay.port, "guess", seed=True).connect()
        assert raised.value.response.status_code == 429
        guesser = FakeExtension(relay.port, "guess", instance="guesser")
        with pytest.raises(Exception) as closed:
            await guesser.connect()
        assert getattr(getattr(closed.value, "rcvd", None), "code", None) == CloseCode.RATE_LIMITED
        raised_alerts = alerts.drain()
        [alert] = [a for a in raised_alerts if a.method == "auth_rate_limited"]
        assert "guessing a browser's credential" in alert.params["message"]
        # The person hears once that a browser of that extension is being refused, not 5 times.
        [refused] = [a for a in raised_alerts if a.method == "browser_rejected"]
        assert "credential is not valid" in refused.params["message"]
        # The paired browser, with its valid credential, is not slowed by any of it.
        await relay.extension(seed=True, instance="seed")
        await relay.extension(instance="modern")
        await relay.browser_count(2)


# --- rotation and revocation -----------------------------------------------------------------


async def test_rotation_closes_live_sessions_within_a_second_and_the_old_credential_fails(
    relay: RelayHarness,
) -> None:
    seed = await relay.extension(seed=True)
    modern = await relay.extension(instance="modern")
    await relay.browser_count(2)
    old = relay.token
    started = asyncio.get_running_loop().time()
    await relay.core.rotate_relay_token()
    assert await seed.wait_closed(1.0) == CloseCode.TOKEN_ROTATED
    assert await modern.wait_closed(1.0) == CloseCode.TOKEN_ROTATED
    assert asyncio.get_running_loop().time() - started < 1.0
    assert relay.core.settings.pairings == []
    with pytest.raises(InvalidStatus):
        await FakeExtension(relay.port, old, seed=True).connect()
    new = await relay.pair()  # the browser pairs again, as the person allows
    assert new != old
    await relay.extension(token=new, seed=True)
    await relay.browser_count(1)


async def test_rotation_from_the_command_line_reaches_the_running_app(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    old = relay.token
    await _cli(relay.paths, "token", "rotate")
    assert await extension.wait_closed(1.5) == CloseCode.TOKEN_ROTATED
    with pytest.raises(InvalidStatus):
        await FakeExtension(relay.port, old, seed=True).connect()


async def test_revoking_a_pairing_disconnects_that_extension(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    await _cli(relay.paths, "pair", "revoke", EXTENSION_ID)
    assert await extension.wait_closed(1.5) == CloseCode.NOT_PAIRED
    response = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
    assert response.json() == {"error": "pairing_required"}


async def test_one_leaked_credential_is_one_revoke(relay: RelayHarness) -> None:
    """Two browsers of the same extension, each with its own credential: revoking one pairing
    disconnects that browser only, and its credential stops working."""
    first = await relay.extension(instance="first")
    second_token = await relay.pair()
    second = await relay.extension(token=second_token, instance="second")
    await relay.browser_count(2)
    [second_pairing] = [
        b.pairing_id for b in relay.core.registry.all() if b.hello and b.hello.instance == "second"
    ]
    assert second_pairing is not None
    await _cli(relay.paths, "pair", "revoke", second_pairing)
    assert await second.wait_closed(1.5) == CloseCode.NOT_PAIRED
    await relay.browser_count(1)
    assert not first.closed.is_set()
    with pytest.raises(InvalidStatus):
        await FakeExtension(relay.port, second_token, seed=True).connect()


# --- one browser instance, one connection ----------------------------------------------------


async def test_second_connection_of_a_healthy_browser_is_refused(relay: RelayHarness) -> None:
    first = await relay.extension(instance="same")
    await relay.browser_count(1)
    second = FakeExtension(relay.port, relay.token, instance="same")
    await second.connect()
    assert await second.wait_closed(3) == CloseCode.DUPLICATE_BROWSER
    assert not first.closed.is_set()
    assert len(await relay.core.registry.resolve().list_tabs()) == 2


async def test_a_dead_connection_is_replaced_by_the_same_browser_reconnecting(
    relay: RelayHarness,
) -> None:
    first = await relay.extension(instance="same", answer_pings=False)
    await relay.browser_count(1)
    second = await relay.extension(instance="same")
    assert await first.wait_closed(4) == CloseCode.HEARTBEAT_LOST
    await relay.browser_count(1)
    await relay.core.registry.resolve().list_tabs()
    assert second.commands[-1]["method"] == "tabs.list"


async def test_a_browser_that_stops_answering_pings_is_closed_and_reported(home: Paths) -> None:
    async with running_core(home, ping_interval=0.05, pong_timeout=0.1) as relay:
        alerts = relay.core.hub.subscribe(accept=lambda e: e.kind == "alert")
        extension = await relay.extension(answer_pings=False)
        assert await extension.wait_closed(2) == CloseCode.HEARTBEAT_LOST
        await relay.browser_count(0)
        assert [a.method for a in alerts.drain()] == ["heartbeat_lost"]


async def test_a_browser_that_answers_pings_stays(home: Paths) -> None:
    async with running_core(home, ping_interval=0.02, pong_timeout=0.5) as relay:
        extension = await relay.extension()
        await asyncio.sleep(0.3)  # fifteen ping periods
        assert not extension.closed.is_set()
        assert sum('"ping"' in str(f) for f in extension.received) >= 5


# --- binding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "localhost"])
def test_non_loopback_bind_is_refused(host: str) -> None:
    with pytest.raises(StartupError, match="loopback"):
        require_loopback(host)


async def test_configured_non_loopback_host_stops_startup(home: Paths) -> None:
    def expose(settings: Settings) -> None:
        settings.host = "0.0.0.0"

    SettingsStore(home.settings_file).update(expose)
    with pytest.raises(StartupError, match=r"refusing to listen on 0\.0\.0\.0"):
        async with running_core(home):
            pass


async def test_taken_port_is_a_clear_error_and_nothing_half_starts(home: Paths) -> None:
    with taken_port() as port, pytest.raises(StartupError, match=f"127.0.0.1:{port}"):
        async with running_core(home, relay_port=port, write_instance_file=True):
            pass
    assert not home.instance_file.exists()


# --- logs ------------------------------------------------------------------------------------


async def test_the_relay_token_never_reaches_the_logs_even_at_debug(
    relay: RelayHarness, caplog: pytest.LogCaptureFixture
) -> None:
    previous = logging.getLogRecordFactory()
    install_redaction(relay.core.redactor)
    try:
        caplog.set_level(logging.DEBUG)
        old = relay.token
        await relay.extension(seed=True)  # token in the query string: websockets logs the path
        await relay.extension(instance="x")
        await relay.browser_count(2)
        with pytest.raises(InvalidStatus):
            await FakeExtension(relay.port, old + "0", seed=True).connect()
        logging.getLogger("test").debug("a careless line with %s inside", old)
        await relay.core.rotate_relay_token()
        relay.core.pairing.open_window(EXTENSION_ID)
        issued = await raw_request(relay.port, CONFIG_PATH, headers={"Origin": PAIRED_ORIGIN})
        new = issued.json()["token"]
        await relay.extension(token=new, instance="y")
        text = caplog.text
        assert old not in text and new not in text
        assert "careless line with [redacted] inside" in text
        assert "websockets" in {r.name.split(".")[0] for r in caplog.records}
    finally:
        logging.setLogRecordFactory(previous)


# --- helpers ---------------------------------------------------------------------------------


def paired_pairing(relay: RelayHarness) -> str:
    [paired] = relay.core.settings.pairings
    return paired.id


async def _cli(paths: Paths, *args: str) -> None:
    env = {**os.environ, "TABRELAY_HOME": str(paths.config_dir.parent)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tabrelay",
        *args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = await process.communicate()
    assert process.returncode == 0, err.decode()


async def test_a_browser_paired_before_per_browser_credentials_keeps_connecting(
    home: Paths,
) -> None:
    """Settings of schema 1 and the old shared relay token in the store: the browser that
    holds that token connects after the upgrade, now on a credential of its own."""
    home.config_dir.mkdir(parents=True)
    home.settings_file.write_text(
        json.dumps({"schema_version": 1, "paired_extensions": [{"id": EXTENSION_ID}]})
    )
    tokens = TokenStore.open(home)
    tokens.backend.set(LEGACY_RELAY_TOKEN, "an-old-shared-relay-token-of-43-characters--")
    async with running_core(home, paired=()) as relay:
        [paired] = relay.core.settings.pairings
        assert paired.extension_id == EXTENSION_ID and not paired.legacy
        await relay.extension(token="an-old-shared-relay-token-of-43-characters--")
        await relay.browser_count(1)
        assert relay.core.registry.resolve().pairing_id == paired.id
    assert tokens.legacy_relay_token() is None, "the shared token is gone"
