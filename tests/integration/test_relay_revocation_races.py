"""A revoked browser never stays connected: not when the revoke lands while its new connection
waits for an old one to answer, and not when two connections replace the same dead one (the
registry holds one connection per browser; none lives outside it)."""

from __future__ import annotations

import asyncio

import pytest

from support.fake_extension import FakeExtension
from support.harness import RelayHarness, running_core
from tabrelay.config.paths import Paths
from tabrelay.errors import DuplicateBrowser
from tabrelay.protocol.constants import CloseCode
from tabrelay.relay.browser import Browser
from tabrelay.relay.pairing import Pairing
from tabrelay.relay.registry import BrowserRegistry

PONG_TIMEOUT = 1.0  # how long a new connection waits for the old one's pong (at most 2 s)


async def _pings_seen(extension: FakeExtension, count: int) -> None:
    async with asyncio.timeout(5):
        while sum('"ping"' in str(f) for f in extension.received) < count:
            await asyncio.sleep(0.005)


async def _a_dead_browser(relay: RelayHarness) -> tuple[FakeExtension, str, int]:
    """A paired browser that stopped answering pings: it, its pairing, the pings it has had."""
    dead = await relay.extension(instance="same", answer_pings=False)
    [pairing_id] = [b.pairing_id for b in relay.core.registry.all()]
    assert pairing_id is not None
    return dead, pairing_id, sum('"ping"' in str(f) for f in dead.received)


async def _revoke(relay: RelayHarness, pairing_id: str) -> None:
    """Unpair as the dashboard does, and wait until the running app applied it."""
    pairing = Pairing(relay.core.settings_store, relay.tokens)
    await asyncio.to_thread(pairing.revoke, pairing_id)
    await relay.core.settled()


async def test_a_revoke_while_a_new_connection_waits_for_the_old_one_closes_the_new_one(
    home: Paths,
) -> None:
    async with running_core(home, pong_timeout=PONG_TIMEOUT) as relay:
        dead, pairing_id, pings = await _a_dead_browser(relay)
        new = FakeExtension(relay.port, relay.token, instance="same")
        relay.extensions.append(new)
        await new.connect()
        await _pings_seen(dead, pings + 1)  # the relay asks the old connection if it lives
        await _revoke(relay, pairing_id)
        assert await dead.wait_closed(3) == CloseCode.NOT_PAIRED
        assert await new.wait_closed(3) == CloseCode.NOT_PAIRED
        assert len(relay.core.registry) == 0
        assert new.obeyed == 0


async def test_two_connections_replacing_one_dead_browser_leave_one_that_a_revoke_closes(
    home: Paths,
) -> None:
    async with running_core(home, pong_timeout=PONG_TIMEOUT) as relay:
        dead, pairing_id, pings = await _a_dead_browser(relay)
        first = FakeExtension(relay.port, relay.token, instance="same")
        second = FakeExtension(relay.port, relay.token, instance="same")
        relay.extensions += [first, second]
        await asyncio.gather(first.connect(), second.connect())
        await _pings_seen(dead, pings + 2)  # both wait on the dead one at once
        assert await dead.wait_closed(3) == CloseCode.HEARTBEAT_LOST
        done, _ = await asyncio.wait(
            [asyncio.ensure_future(e.closed.wait()) for e in (first, second)],
            timeout=3 * PONG_TIMEOUT + 2,
            return_when=asyncio.FIRST_COMPLETED,
        )
        assert done, "neither replacement was refused"
        refused, kept = (first, second) if first.closed.is_set() else (second, first)
        assert refused.close_code == CloseCode.DUPLICATE_BROWSER
        await relay.browser_count(1)
        await _revoke(relay, pairing_id)
        assert await kept.wait_closed(3) == CloseCode.NOT_PAIRED
        await relay.browser_count(0)


class _Channel:
    async def close(self, code: int = 1000, reason: str = "") -> None:
        return None

    async def send(self, frame: str) -> None:
        return None


def test_the_registry_refuses_a_second_connection_under_the_same_id() -> None:
    registry = BrowserRegistry()
    first = Browser(_Channel(), browser_id="b1", extension_id="e", hello=None)
    second = Browser(_Channel(), browser_id="b1", extension_id="e", hello=None)
    registry.add(first)
    with pytest.raises(DuplicateBrowser):
        registry.add(second)
    assert registry.get("b1") is first
    registry.add(first)  # the same connection again changes nothing
    assert registry.all() == [first]
