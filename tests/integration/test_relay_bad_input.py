"""Hostile and broken input on a live relay (DESIGN §4.12, THREATS R9, R10).

Every case ends the same way for the rest of the app: the offending connection gets an error
frame or a close code, and a second connected browser keeps answering throughout.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed

from support.fake_extension import FakeExtension
from support.harness import RelayHarness, running_core
from support.net import json_scalars, json_values
from support.scale import examples
from support.threaded import CoreThread
from tabrelay.config.paths import Paths
from tabrelay.protocol.constants import MAX_FRAME_AFTER_AUTH, MAX_FRAME_BEFORE_AUTH, CloseCode
from tabrelay.relay.browser import Browser


async def _connected(relay: RelayHarness, instance: str) -> tuple[FakeExtension, Browser]:
    extension = await relay.extension(instance=instance)
    return extension, await _connected_browser(relay, instance)


async def _connected_browser(relay: RelayHarness, instance: str) -> Browser:
    async with asyncio.timeout(5):
        while True:
            for browser in relay.core.registry.all():
                if browser.hello and browser.hello.instance == instance:
                    return browser
            await asyncio.sleep(0.005)


async def _still_works(browser: Browser) -> None:
    tabs = await browser.list_tabs()
    assert [t.id for t in tabs][:2] == [1, 2]


async def test_binary_frames_close_the_connection_with_1003(relay: RelayHarness) -> None:
    _, witness = await _connected(relay, "witness")
    attacker, _ = await _connected(relay, "attacker")
    await attacker.send_raw(b"\x00\x01binary")
    assert await attacker.wait_closed() == 1003
    await _still_works(witness)


async def test_an_oversized_frame_before_auth_is_closed_with_1009(relay: RelayHarness) -> None:
    _, witness = await _connected(relay, "witness")
    from websockets.asyncio.client import connect

    extension = FakeExtension(relay.port, relay.token)
    async with connect(extension.url(), origin=extension.origin, max_size=None) as connection:  # type: ignore[arg-type]
        await connection.recv()  # the challenge
        await connection.send(
            json.dumps({"type": "auth.response", "nonce": "x" * 2**20, "proof": "p"})
        )
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(connection.recv(), 5)
        assert connection.close_code == 1009
    assert MAX_FRAME_BEFORE_AUTH < 2**20
    await _still_works(witness)


async def test_an_oversized_frame_after_auth_is_closed_with_1009(relay: RelayHarness) -> None:
    _, witness = await _connected(relay, "witness")
    attacker, _ = await _connected(relay, "attacker")
    await attacker.send_raw(json.dumps({"id": "1", "result": "x" * (MAX_FRAME_AFTER_AUTH + 1)}))
    assert await attacker.wait_closed(20) == 1009
    await _still_works(witness)


async def test_a_large_answer_within_the_cap_is_delivered(relay: RelayHarness) -> None:
    extension, browser = await _connected(relay, "big")
    screenshot = "data:image/png;base64," + "A" * (8 * 2**20)

    async def big(params: dict[str, Any]) -> dict[str, str]:
        return {"dataUrl": screenshot}

    extension.handlers["tabs.screenshot"] = big
    assert await browser.screenshot() == screenshot


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{", "invalid_json"),
        ("[" * 1000 + "]" * 1000, "too_deep"),
        ('{"type": "set_policy", "tool": "*", "decision": "allow"}', "unknown_type"),
        ('{"type": "status", "attachedTabs": "all"}', "bad_field"),
        ('{"type": "auth.response", "nonce": "n", "proof": "p"}', "unexpected"),
        ('{"type": "hello", "protocol": 1}', "unexpected"),
        ('{"id": 5, "result": 1}', "bad_id"),
    ],
)
async def test_a_malformed_frame_gets_an_error_frame_and_the_connection_stays(
    relay: RelayHarness, frame: str, code: str
) -> None:
    _, witness = await _connected(relay, "witness")
    attacker, attacked = await _connected(relay, "attacker")
    await attacker.send_raw(frame)
    async with asyncio.timeout(5):
        while not attacker.errors:
            await asyncio.sleep(0.005)
    assert attacker.errors[0]["code"] == code
    if len(frame) > 10:
        assert frame[:40] not in attacker.errors[0]["message"]  # the payload is not echoed
    await _still_works(attacked)
    await _still_works(witness)


async def test_too_many_invalid_frames_close_the_connection_with_4400(
    relay: RelayHarness, caplog: pytest.LogCaptureFixture
) -> None:
    _, witness = await _connected(relay, "witness")
    attacker, _ = await _connected(relay, "attacker")
    for _ in range(25):
        await attacker.send_raw("not json")
    assert await attacker.wait_closed() == CloseCode.PROTOCOL_ERROR
    warnings = [r for r in caplog.records if "sent an invalid frame" in r.getMessage()]
    assert len(warnings) == 1  # one line per class of error, not one per frame
    app_lines = [r.getMessage() for r in caplog.records if r.name.startswith("tabrelay")]
    assert not any("not json" in line for line in app_lines)
    await _still_works(witness)


async def test_an_event_flood_keeps_memory_bounded_and_commands_flowing(home: Paths) -> None:
    async with running_core(home) as relay:
        stalled = relay.core.hub.subscribe(maxlen=1000)
        healthy = relay.core.hub.subscribe(maxlen=200_000)
        extension, browser = await _connected(relay, "flooder")
        total = 100_000
        frame = '{"type":"cdp_event","tabId":1,"method":"Network.dataReceived","params":{"n":%d}}'
        started = time.perf_counter()
        flood = asyncio.create_task(_send_all(extension, [frame % n for n in range(total)]))
        command = asyncio.create_task(browser.cdp(1, "Runtime.evaluate", {"expression": "1"}))
        received = 0
        async with asyncio.timeout(60):
            while received < total:
                received += len(await healthy.wait())
            await flood
            assert (await command)["result"]["value"] == "evaluated 1"
        elapsed = time.perf_counter() - started
        assert len(stalled) == 1000
        assert stalled.dropped == total - 1000
        assert relay.core.hub.published == total
        print(f"flood: {total} events in {elapsed:.2f} s ({total / elapsed:,.0f}/s)")


async def _send_all(extension: FakeExtension, frames: list[str]) -> None:
    assert extension.connection is not None
    for frame in frames:
        await extension.connection.send(frame)


# --- property-based: random frames from a paired, authenticated extension --------------------


@pytest.fixture(scope="module")
def relay_thread(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CoreThread]:
    async def witness(relay: RelayHarness) -> Browser:
        _, browser = await _connected(relay, "witness")
        return browser

    with CoreThread(tmp_path_factory.mktemp("fuzz-home"), ready=witness) as runner:
        yield runner


shaped = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            [
                "status",
                "cdp_event",
                "tab_event",
                "hello",
                "ping",
                "pong",
                "auth.response",
                "error",
                "x",
            ]
        )
        | json_scalars,
        "id": st.sampled_from(["1", "2", "999"]) | json_scalars,
        "result": json_values,
        "error": json_values,
        "tabId": st.integers(-5, 10) | json_scalars,
        "method": st.sampled_from(["Page.loadEventFired", ""]) | json_scalars,
        "params": json_values,
        "attachedTabs": json_values,
        "tab": json_values,
        "event": st.sampled_from(["created", "removed", "nope"]) | json_scalars,
    },
)
frames = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=100),
    shaped.map(json.dumps),
    json_values.map(json.dumps),
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 3000).map(lambda n: '{"a":' * n + "1" + "}" * n),
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(frames, min_size=1, max_size=8))
def test_random_frames_never_hurt_the_app_or_another_browser(
    relay_thread: CoreThread, batch: list[str | bytes]
) -> None:
    relay = relay_thread.harness
    on_relay = relay_thread.on_core

    async def scenario() -> int | None:
        instance = f"fuzz-{time.monotonic_ns()}"
        extension = FakeExtension(relay.port, relay.token, instance=instance)
        await extension.connect()
        try:
            fuzzed = await on_relay(_connected_browser(relay, instance))
            for frame in batch:
                try:
                    await extension.send_raw(frame)
                except ConnectionClosed:
                    break
            # The relay closes a connection that sends a binary frame (1003), wherever it is
            # in the batch: a pong to a ping sent before it must not pass for the flush.
            if any(isinstance(frame, bytes) for frame in batch):
                return await extension.wait_closed()
            try:
                await extension.flushed()
            except (ConnectionClosed, TimeoutError):
                return await extension.wait_closed()
            await on_relay(_still_works(fuzzed))  # still open: it must still carry a command
            return None
        finally:
            await extension.close()

    code = asyncio.run(scenario())
    assert code in (None, 1003, CloseCode.PROTOCOL_ERROR)
    relay_thread.call(_still_works(relay_thread.extra))
