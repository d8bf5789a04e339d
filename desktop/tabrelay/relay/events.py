"""The event hub: fans CDP events, tab events and alerts out to subscribers.

Publishing never blocks and never awaits. Each subscriber has its own bounded queue; when it
falls behind, its oldest events are dropped and counted, so one slow dashboard cannot stall
the relay or starve another subscriber. Closing a subscription wakes whoever waits on it with
``EventsClosed``: a waiter never spins on a source that can send nothing more.

A tab can be muted while the person has it to themselves (a handoff): its CDP events and tab
events (all but its closing) then reach only the subscriptions made with ``hears_muted`` (what
must answer the tab whatever happens: the navigation guard's paused requests, Tabrelay's own
page code), never the dashboard's live events or the tab's observer log. Muting is counted, so
two owners can mute the same tab and each unmute only their own.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tabrelay.errors import EventsClosed

EventKind = Literal["cdp", "tab", "alert"]


@dataclass(frozen=True, slots=True)
class HubEvent:
    """One event. ``method`` is the CDP method, the tab event name, or the alert kind."""

    kind: EventKind
    browser_id: str
    method: str
    tab_id: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)
    # A CDP event of one of the tab's child sessions (a frame in another process), not the tab's.
    session_id: str | None = None


class Subscription:
    """A subscriber's bounded queue. Iterate it, or ``drain()`` batches."""

    def __init__(
        self,
        hub: EventHub,
        *,
        maxlen: int,
        accept: Callable[[HubEvent], bool] | None,
        hears_muted: bool = False,
    ) -> None:
        self._hub = hub
        self.hears_muted = hears_muted
        self._queue: deque[HubEvent] = deque(maxlen=maxlen)
        self._ready = asyncio.Event()
        self._accept = accept
        self.dropped = 0
        self.closed = False

    def offer(self, event: HubEvent) -> None:
        if self._accept is not None and not self._accept(event):
            return
        if len(self._queue) == self._queue.maxlen:
            self.dropped += 1  # deque(maxlen) drops the oldest on append
        self._queue.append(event)
        if not self._ready.is_set():
            self._ready.set()

    def drain(self, limit: int | None = None) -> list[HubEvent]:
        """Take up to ``limit`` queued events without waiting."""
        count = len(self._queue) if limit is None else min(limit, len(self._queue))
        batch = [self._queue.popleft() for _ in range(count)]
        if not self._queue:
            self._ready.clear()
        return batch

    async def wait(self, limit: int | None = None) -> list[HubEvent]:
        """Wait until at least one event is queued, then drain (at least one event).

        Raises:
            EventsClosed: the subscription is closed and nothing is left in it.
        """
        while not self._queue:
            if self.closed:
                raise EventsClosed("the event subscription was closed")
            await self._ready.wait()
            self._ready.clear()
        return self.drain(limit)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> HubEvent:
        while not self._queue:
            if self.closed:
                raise StopAsyncIteration
            await self._ready.wait()
            self._ready.clear()
        return self._queue.popleft()

    def close(self) -> None:
        self.closed = True
        self._ready.set()
        self._hub.unsubscribe(self)

    def __len__(self) -> int:
        return len(self._queue)


class EventHub:
    """Publishes events to every subscription; see the module docstring."""

    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []
        self._muted: dict[tuple[str, int], int] = {}  # (browser id, tab id) → how many mute it
        self.published = 0
        self.withheld = 0  # events of muted tabs kept from a subscription that does not hear them

    @property
    def subscriber_count(self) -> int:
        return len(self._subscriptions)

    def subscribe(
        self,
        *,
        maxlen: int = 10_000,
        accept: Callable[[HubEvent], bool] | None = None,
        hears_muted: bool = False,
    ) -> Subscription:
        """A new subscription; with ``hears_muted`` it also gets the events of muted tabs."""
        subscription = Subscription(self, maxlen=maxlen, accept=accept, hears_muted=hears_muted)
        self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def mute(self, browser_id: str, tab_id: int) -> Callable[[], None]:
        """Keep the tab's events from every subscription that does not hear muted tabs, until
        the returned unmute is called (calling it again does nothing)."""
        key = (browser_id, tab_id)
        self._muted[key] = self._muted.get(key, 0) + 1
        done = False

        def unmute() -> None:
            nonlocal done
            if done:
                return
            done = True
            left = self._muted.get(key, 0) - 1
            if left > 0:
                self._muted[key] = left
            else:
                self._muted.pop(key, None)

        return unmute

    def muted(self, browser_id: str, tab_id: int) -> bool:
        return (browser_id, tab_id) in self._muted

    def publish(self, event: HubEvent) -> None:
        self.published += 1
        private = (
            event.tab_id is not None
            and event.kind in ("cdp", "tab")
            and not (event.kind == "tab" and event.method == "removed")
            and (event.browser_id, event.tab_id) in self._muted
        )
        for subscription in self._subscriptions:
            if private and not subscription.hears_muted:
                self.withheld += 1
                continue
            subscription.offer(event)

    def close(self) -> None:
        for subscription in list(self._subscriptions):
            subscription.close()
