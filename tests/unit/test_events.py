"""The event hub: fan-out through bounded queues; a slow subscriber only loses its own oldest."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest

from tabrelay.errors import EventsClosed
from tabrelay.relay.events import EventHub, HubEvent


def event(n: int, kind: str = "cdp") -> HubEvent:
    return HubEvent(kind, "b1", "Network.requestWillBeSent", 1, {"n": n})  # type: ignore[arg-type]


async def test_a_flood_with_a_stalled_subscriber_stays_bounded_and_a_healthy_one_gets_all() -> None:
    hub = EventHub()
    stalled = hub.subscribe(maxlen=1000)
    received: list[int] = []
    healthy = hub.subscribe(maxlen=1000)

    async def consume() -> None:
        while len(received) < 100_000:
            received.extend(e.params["n"] for e in await healthy.wait())

    consumer = asyncio.create_task(consume())
    tracemalloc.start()
    for n in range(100_000):
        hub.publish(event(n))
        if n % 500 == 0:
            await asyncio.sleep(0)  # the relay yields between frames; so does this loop
    async with asyncio.timeout(10):
        await consumer
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert received == list(range(100_000))
    assert len(stalled) == 1000
    assert stalled.dropped == 99_000
    assert [e.params["n"] for e in stalled.drain(3)] == [99_000, 99_001, 99_002]  # oldest went
    assert peak < 20 * 2**20, f"peak {peak / 2**20:.1f} MiB"


async def test_subscribers_can_filter_and_close() -> None:
    hub = EventHub()
    alerts = hub.subscribe(accept=lambda e: e.kind == "alert")
    hub.publish(event(1))
    hub.publish(event(2, "alert"))
    assert [e.params["n"] for e in alerts.drain()] == [2]
    alerts.close()
    hub.publish(event(3, "alert"))
    assert alerts.drain() == []
    with pytest.raises(EventsClosed):  # a closed subscription neither blocks nor spins
        await alerts.wait()


async def test_closing_a_subscription_wakes_its_waiter_with_an_error() -> None:
    hub = EventHub()
    subscription = hub.subscribe()
    waiter = asyncio.create_task(subscription.wait())
    await asyncio.sleep(0)
    subscription.close()
    async with asyncio.timeout(1):
        with pytest.raises(EventsClosed):
            await waiter


async def test_events_queued_before_the_close_are_still_delivered_once() -> None:
    hub = EventHub()
    subscription = hub.subscribe()
    hub.publish(event(1))
    subscription.close()
    assert [e.params["n"] for e in await subscription.wait()] == [1]
    with pytest.raises(EventsClosed):
        await subscription.wait()


async def test_iteration_ends_when_the_hub_closes() -> None:
    hub = EventHub()
    subscription = hub.subscribe()
    hub.publish(event(1))

    async def collect() -> list[int]:
        return [e.params["n"] async for e in subscription]

    task = asyncio.create_task(collect())
    await asyncio.sleep(0)
    hub.close()
    async with asyncio.timeout(1):
        assert await task == [1]
