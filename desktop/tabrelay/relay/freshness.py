"""Which tabs of a browser's cache are known current, so looking at a tab needs no round trip.

A cached tab is current when the extension pushes tab events (one of the seed protocol does
not), no command that could change the tab is in flight, and its state was confirmed after the
last such command ended: by an answer to ``tabs.get`` or ``tabs.list`` that left afterwards,
by the tab a command's own answer carries (``carried``), or, for a tab no command has touched,
by an event. Any other command naming the tab makes it stale until it is asked again, even
once answered: a CDP command may set off a navigation whose event comes later, and what a tool
read from the page must be checked against the document that answered (the navigation guard's
look after a tool). A command that timed out or was cancelled may still act: it counts as in
flight until its late answer comes (``Browser`` keeps it). ``tabs.create`` and
``tabs.activate`` (and any method this table does not know) may change every tab. Events keep
updating the cached state meanwhile (``Browser.apply_tab_event``). Pure bookkeeping: no I/O,
no asyncio.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabrelay.protocol.messages import JsonObject

EVERY_TAB = -1  # the key of commands that may change any tab (tab ids are never negative)
READ_ONLY_METHODS = frozenset({"tabs.list", "tabs.get", "tabs.screenshot"})
ANY_TAB_METHODS = frozenset({"tabs.create", "tabs.activate"})
# CDP methods that only let go of the app's own handles in the page: they run no page script,
# read nothing of the page and cannot move it (tools end with them, after the guard's look).
INERT_CDP_METHODS = frozenset({"Runtime.releaseObjectGroup", "Runtime.releaseObject"})


def touched_tabs(method: str, params: JsonObject) -> tuple[int, ...]:
    """The tabs a relay command may change (``EVERY_TAB`` for any)."""
    if method in READ_ONLY_METHODS:
        return ()
    if method == "cdp.send" and params.get("method") in INERT_CDP_METHODS:
        return ()
    if method in ANY_TAB_METHODS:
        return (EVERY_TAB,)
    tab_id = params.get("tabId")
    if isinstance(tab_id, int) and _is_tab_id(tab_id):
        return (tab_id,)
    tab_ids = params.get("tabIds")
    if isinstance(tab_ids, list) and tab_ids and all(_is_tab_id(t) for t in tab_ids):
        return tuple(int(t) for t in tab_ids)
    return (EVERY_TAB,)


@dataclass(frozen=True, slots=True)
class Sent:
    """When a command left, and whether it was then the only one that could change its tabs."""

    at: int
    alone: bool


class TabFreshness:
    """The clock of one connection's commands, answers and events, per tab."""

    def __init__(self, *, events: bool) -> None:
        self._events = events  # the extension pushes tab events: a cached tab can be current
        self._clock = 0
        self._busy: dict[int, int] = {}  # tab id or EVERY_TAB → commands in flight
        self._changed: dict[int, int] = {}  # tab id or EVERY_TAB → when one last left or ended
        self._last_sent: dict[int, int] = {}  # tab id or EVERY_TAB → when one last left
        self._confirmed: dict[int, int] = {}  # tab id → when its cached state was last current

    def current(self, tab_id: int) -> bool:
        """Whether the cached state of ``tab_id`` is known current."""
        if not self._events or self._busy.get(tab_id) or self._busy.get(EVERY_TAB):
            return False
        confirmed = self._confirmed.get(tab_id)
        latest_change = max(self._changed.get(tab_id, 0), self._changed.get(EVERY_TAB, 0))
        return confirmed is not None and confirmed > latest_change

    def command_sent(self, touched: tuple[int, ...]) -> Sent:
        """A command that may change ``touched`` left; pass what this gives to ``carried``."""
        now = self._tick()
        alone = not self._busy.get(EVERY_TAB) and not any(self._busy.get(t) for t in touched)
        for tab_id in touched:
            self._busy[tab_id] = self._busy.get(tab_id, 0) + 1
            self._changed[tab_id] = now
            self._last_sent[tab_id] = now
        return Sent(now, alone)

    def command_ended(self, touched: tuple[int, ...]) -> None:
        """The command answered, failed or timed out (a timed-out one may still act)."""
        if touched:
            now = self._tick()
            for tab_id in touched:
                left = self._busy.get(tab_id, 0) - 1
                if left > 0:
                    self._busy[tab_id] = left
                else:
                    self._busy.pop(tab_id, None)
                self._changed[tab_id] = now

    def asking(self) -> int:
        """A ``tabs.get``/``tabs.list`` leaves now; pass the result to ``answered``."""
        return self._tick()

    def answered(self, tab_id: int, asked_at: int) -> None:
        """The browser reported ``tab_id`` in answer to a question that left at ``asked_at``."""
        if asked_at > self._confirmed.get(tab_id, 0):
            self._confirmed[tab_id] = asked_at

    def carried(self, tab_id: int, sent: Sent) -> bool:
        """A command that touched only ``tab_id`` ended (``command_ended`` first), and its answer
        carried the tab as the extension read it once the command had ended there. That state
        is current if no other command that could change the tab was in flight at any time
        while this one was: not when it left (``sent.alone``), and none left since (one still
        in flight now is either); else another may have acted after that read, its answer
        arriving first. Whether it counts."""
        if (
            not sent.alone
            or self._last_sent.get(tab_id) != sent.at
            or self._last_sent.get(EVERY_TAB, 0) > sent.at
        ):
            return False
        self._confirmed[tab_id] = self._tick()
        return True

    def made(self, tab_id: int) -> None:
        """A command's answer described ``tab_id`` (``tabs.create``): that command's effects
        on it may still be under way, so it is asked about before it counts as current."""
        self._changed[tab_id] = self._tick()

    def heard(self, tab_id: int) -> None:
        """A tab event told the tab's state: current, if no command ever touched it."""
        if tab_id not in self._changed and not self._busy.get(EVERY_TAB):
            self._confirmed[tab_id] = self._tick()

    def forget(self, tab_id: int) -> None:
        """The tab is gone (its commands in flight still end through ``command_ended``)."""
        self._changed.pop(tab_id, None)
        self._last_sent.pop(tab_id, None)
        self._confirmed.pop(tab_id, None)

    def _tick(self) -> int:
        self._clock += 1
        return self._clock


def _is_tab_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
