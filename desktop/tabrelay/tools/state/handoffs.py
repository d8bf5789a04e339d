"""The open handoffs: ``Handoffs``, their one owner, and the refusal agents get on a tab handed
to the person. The dashboard, the tray and the command line read it and end one with ``end()``;
the endpoint refuses agent calls on a handed-over tab with ``refusal()``; the tool
(``handoff.py``) opens one and drops it when it ends. No I/O, no page.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tabrelay.errors import ToolError
from tabrelay.listeners import Listeners

Outcome = Literal["done", "cancelled", "timeout", "tab closed"]
EndedBy = Literal["banner", "tray", "dashboard", "cli", "agent", "timeout", "browser"]
REFUSAL = "the person has this tab until they press Done"


@dataclass(frozen=True)
class OpenHandoff:
    """A tab handed to the person, as the dashboard, the tray and the command line show it."""

    id: str  # unguessable: ending one by id is the person's act
    browser_id: str
    tab_id: int
    reason: str  # the agent's words: plain text, never markup
    client: str | None  # the MCP client that asked
    started: float  # time.time()
    deadline: float  # time.time() when it times out
    url: str
    title: str


class Handoffs:
    """The open handoffs; see the module docstring."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[OpenHandoff, asyncio.Future[tuple[Outcome, EndedBy]]]] = {}
        self._listeners: Listeners[[]] = Listeners("open handoffs")

    def open(self) -> list[OpenHandoff]:
        """The open handoffs, oldest first."""
        return sorted((h for h, _ in self._open.values()), key=lambda h: h.started)

    def of_tab(self, browser_id: str, tab_id: int) -> OpenHandoff | None:
        return next(
            (
                h
                for h, _ in self._open.values()
                if h.browser_id == browser_id and h.tab_id == tab_id
            ),
            None,
        )

    def end(self, handoff_id: str, outcome: Literal["done", "cancelled"], by: EndedBy) -> bool:
        """End an open handoff (the person pressed Done or Cancel somewhere); ``False`` if there
        is no such handoff, or it is already ending. The waiting call answers the agent."""
        if outcome not in ("done", "cancelled"):
            raise ValueError(f"a handoff is ended as done or cancelled, not {outcome!r}")
        found = self._open.get(handoff_id)
        if found is None or found[1].done():
            return False
        found[1].set_result((outcome, by))
        return True

    def add_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn`` whenever a handoff opens or leaves the list; returns how to stop."""
        return self._listeners.add(fn)

    # --- for the tool, which opens one and drops it when it ends -----------------------------

    def begin(
        self,
        browser_id: str,
        tab_id: int,
        *,
        reason: str,
        client: str | None,
        timeout: float,
        url: str,
        title: str,
    ) -> tuple[OpenHandoff, asyncio.Future[tuple[Outcome, EndedBy]]]:
        """Open a handoff of the tab; it and the future ``end()`` resolves.

        Raises:
            ToolError: the tab is already handed over.
        """
        if self.of_tab(browser_id, tab_id) is not None:
            raise ToolError(
                f"tab {tab_id} is already handed to the person; wait for that browser_handoff "
                "to end"
            )
        started = time.time()
        handoff = OpenHandoff(
            id=secrets.token_hex(8),  # 64 random bits: typed by a person, never guessed
            browser_id=browser_id,
            tab_id=tab_id,
            reason=reason,
            client=client,
            started=started,
            deadline=started + timeout,
            url=url,
            title=title,
        )
        ended: asyncio.Future[tuple[Outcome, EndedBy]] = asyncio.get_running_loop().create_future()
        self._open[handoff.id] = (handoff, ended)
        self._listeners.tell()
        return handoff, ended

    def drop(self, handoff_id: str) -> None:
        """The handoff is over (its banner gone, its tab let go): it leaves the list."""
        found = self._open.pop(handoff_id, None)
        if found is not None:
            if not found[1].done():
                found[1].cancel()
            self._listeners.tell()


def refusal(handoffs: Handoffs, browser_id: str, tab_id: int) -> str | None:
    """The error an agent call on a handed-over tab fails with, or ``None`` for any other tab."""
    handoff = handoffs.of_tab(browser_id, tab_id)
    if handoff is None:
        return None
    return (
        f"tab {tab_id} is handed over: {REFUSAL} (or cancels; browser_handoff returns then). "
        "Wait for that call, or use another tab"
    )
