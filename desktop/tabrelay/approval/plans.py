"""Plans: one approval for a whole task (DESIGN §6, issue 25). The one owner of live plans.

An agent asks once (``browser_request_access``: its purpose, the sites it will use, the kinds
of action it needs, for how long); the person approves it in one dialog, after editing the
sites and the duration if they like. Until the plan ends — its MCP session ends, its time is
up, or the person revokes it — the routine actions it names run on its sites without more
questions. It never covers a consequential effect (each still asks), nor a site outside it (a
page cannot lead the agent somewhere new unseen). Plans live in memory only: a restart ends
them. No I/O here.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import get_args

from tabrelay.approval.policy import normalize_origin
from tabrelay.listeners import Listeners
from tabrelay.tools.catalog import TOOLS
from tabrelay.tools.context import Action

ACTIONS: tuple[Action, ...] = get_args(Action)
# The tools each kind of action lets run (the catalog's ``plan``; reading tools never need a
# plan).
TOOLS_OF: dict[Action, tuple[str, ...]] = {
    action: tuple(spec.name for spec in TOOLS if spec.plan == action) for action in ACTIONS
}
MAX_SITES = 20
MAX_MINUTES = 8 * 60
DEFAULT_MINUTES = 60


@dataclass(frozen=True, slots=True)
class PlanDraft:
    """What an agent asks for, and what the person may change before approving it."""

    purpose: str
    sites: tuple[str, ...]  # origins as rules name sites
    actions: tuple[Action, ...] = ACTIONS
    minutes: int = DEFAULT_MINUTES

    def tools(self) -> frozenset[str]:
        return frozenset(tool for action in self.actions for tool in TOOLS_OF[action])


@dataclass(frozen=True, slots=True)
class Plan:
    """An approved plan: whose it is and until when."""

    id: str
    client: str
    session: str | None  # the MCP session it ends with (None: a client without sessions)
    draft: PlanDraft
    created_at: float
    expires_at: float

    def covers(self, *, tool: str, site: str | None, now: float) -> bool:
        return (
            now < self.expires_at
            and site is not None
            and normalize_origin(site) in self.draft.sites
            and tool in self.draft.tools()
        )

    def describe(self) -> str:
        sites = ", ".join(self.draft.sites)
        left = max(0, round((self.expires_at - self.created_at) / 60))
        return f"plan {self.id} “{self.draft.purpose[:80]}” on {sites} for {left} min"


@dataclass
class Plans:
    """The live plans, each ended once (``end``, ``end_session``, ``revoke``, or its time)."""

    clock: Callable[[], float] = time.time
    _live: dict[str, Plan] = field(default_factory=dict)
    _listeners: Listeners[[]] = field(default_factory=lambda: Listeners("plans"))

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Told when a plan starts or ends; returns the way to stop."""
        return self._listeners.add(listener)

    def start(self, client: str, session: str | None, draft: PlanDraft) -> Plan:
        """Start an approved plan (one per client session: a new one replaces the old)."""
        now = self.clock()
        for old in [p for p in self._live.values() if (p.client, p.session) == (client, session)]:
            del self._live[old.id]
        plan = Plan(secrets.token_hex(4), client, session, draft, now, now + 60 * draft.minutes)
        self._live[plan.id] = plan
        self._listeners.tell()
        return plan

    def live(self) -> list[Plan]:
        """The plans still running, oldest first (expired ones are let go here)."""
        now = self.clock()
        expired = [i for i, p in self._live.items() if p.expires_at <= now]
        for plan_id in expired:
            del self._live[plan_id]
        if expired:
            self._listeners.tell()
        return sorted(self._live.values(), key=lambda p: p.created_at)

    def covering(
        self, *, client: str, session: str | None, tool: str, site: str | None
    ) -> Plan | None:
        """The caller's live plan that lets ``tool`` run on ``site``, if any."""
        now = self.clock()
        for plan in self.live():
            if (plan.client, plan.session) == (client, session) and plan.covers(
                tool=tool, site=site, now=now
            ):
                return plan
        return None

    def revoke(self, plan_id: str) -> bool:
        """The person ends a plan (from the tray or the dashboard); False if it had ended."""
        ended = self._live.pop(plan_id, None) is not None
        if ended:
            self._listeners.tell()
        return ended

    def end_session(self, client: str, session: str) -> None:
        """An MCP session ended: so do its plans."""
        self._end(p.id for p in self._live.values() if (p.client, p.session) == (client, session))

    def forget_client(self, client: str) -> None:
        """A client's token was revoked: its plans end."""
        self._end(p.id for p in self._live.values() if p.client == client)

    def end_all(self) -> None:
        """Every plan ends (the person paused agent access, or rotated the tokens)."""
        self._end(list(self._live))

    def _end(self, ids: Iterable[str]) -> None:
        gone = [self._live.pop(i) for i in list(ids) if i in self._live]
        if gone:
            self._listeners.tell()


def draft_of(
    purpose: str, sites: Iterable[str], actions: Iterable[Action], minutes: int
) -> PlanDraft:
    """A draft with its sites in the form rules compare them in, each once."""
    kept = tuple(dict.fromkeys(normalize_origin(s) for s in sites))[:MAX_SITES]
    chosen = tuple(a for a in ACTIONS if a in set(actions)) or ACTIONS
    return PlanDraft(purpose.strip(), kept, chosen, max(1, min(MAX_MINUTES, minutes)))


def edited(draft: PlanDraft, *, sites: Iterable[str], minutes: int) -> PlanDraft:
    """The draft as the person approved it: their sites (the ones asked for, less or more)
    and their duration."""
    return replace(
        draft,
        sites=tuple(dict.fromkeys(normalize_origin(s) for s in sites))[:MAX_SITES],
        minutes=max(1, min(MAX_MINUTES, minutes)),
    )
