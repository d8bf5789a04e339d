"""The approval gate every tool call passes before it touches the browser (DESIGN §6).

It evaluates the policy; on "ask" it shows the person in the page what the call will touch
(``Touches.shown``: outlines and pictures, gone again whatever ends the question), hands an
``ApprovalRequest`` to the ``Approver`` (the tray's dialog) and waits, failing closed: no
approver (headless), no answer in time, a pause (which also withdraws every question already
waiting), or a cancelled call all mean deny. While it waits it tells the caller so, as MCP
progress, until the question ends. The person's choice becomes a rule for the session
or, for "always", in the settings. No tool and no relay message can reach the policy through
here; only the approver's answer and the settings file change it.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tabrelay.approval.effects import NEVER_FROM_DIALOG, Effect
from tabrelay.approval.plans import Plan, PlanDraft, Plans
from tabrelay.approval.policy import (
    Verdict,
    evaluate,
    normalize_origin,
    offers_always,
)
from tabrelay.config.settings import PolicyRule, Settings, SettingsStore
from tabrelay.errors import ApprovalDenied
from tabrelay.listeners import Listeners
from tabrelay.tools.context import Progress
from tabrelay.tools.results import page_text
from tabrelay.tools.state.guard import origin_of
from tabrelay.tools.targets import TargetView, Touches

logger = logging.getLogger(__name__)
T = TypeVar("T")
PLAN_TOOL = "browser_request_access"

# How often a call waiting for the person says so. Clients that restart their own timeout on
# progress (the MCP TypeScript SDK's resetTimeoutOnProgress, Claude Code's idle watchdog) then
# keep waiting for as long as the person may take; their shortest timeout is 60 s.
PROGRESS_INTERVAL = 5.0


class Choice(enum.Enum):
    DENY = "deny"
    ALLOW_ONCE = "once"
    ALLOW_SESSION = "session"
    ALLOW_ALWAYS = "always"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """Everything the dialog shows. ``origin`` is what the browser reports, not the agent."""

    id: int
    client: str
    tool: str
    arguments: dict[str, Any]
    origin: str | None = None
    tab_title: str | None = None
    tab_id: int | None = None
    browser_name: str | None = None
    client_reported: str | None = None  # clientInfo: self-reported, shown as such
    offers_always: bool = True
    timeout: float = 60.0
    created_at: float = field(default_factory=time.time)
    # The elements the arguments name, described and pictured from the page; never a value.
    targets: tuple[TargetView, ...] = ()
    unnamed_targets: int = 0  # more elements named than were described
    destination: str | None = None  # where a navigation goes, as the guard reads it
    effect: Effect | None = None  # what the call will most likely do (consequential: it asks)
    leaving: str | None = None  # the whole address a call takes the tab to on another site
    # Whether "for the session" and "always" are offered (never a standing rule for paying,
    # moving money or granting access from a dialog).
    offers_session: bool = True
    plan: PlanDraft | None = None  # a task's plan the agent asks the person to approve

    @property
    def asks_for_effect(self) -> bool:
        return self.effect is not None and self.effect.consequential


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Choice:
        """Ask the person; cancelled when the call is cancelled or times out."""
        ...

    async def decide_plan(self, request: ApprovalRequest) -> PlanDraft | None:
        """Show a task's plan (``request.plan``); the plan as the person approved it (their
        sites and duration), or None for no. Cancelled like ``decide``."""
        ...


@dataclass(frozen=True, slots=True)
class Approval:
    """How a call came to be allowed, for the command log; ``waited`` if the person was asked."""

    how: str
    waited: bool = False


@dataclass(frozen=True, slots=True)
class _Asking:
    """Why a call must ask although a rule may allow its tool: the effect, the site it leaves
    for, or no rule at all."""

    allowed_by: str | None  # the rule that allowed the tool (and each effect and site asked)
    because: tuple[str, ...] = ()  # sentences for an agent when nobody can be asked
    rules: tuple[str, ...] = ()  # what `tabrelay policy set` would allow it ahead


class ApprovalGate:
    def __init__(
        self,
        store: SettingsStore,
        *,
        approver: Approver | None = None,
        clock: Callable[[], float] = time.time,
        progress_interval: float = PROGRESS_INTERVAL,
    ) -> None:
        self.settings_store = store
        self.progress_interval = progress_interval
        self.approver = approver
        self._clock = clock
        self._ids = itertools.count(1)
        self.session_rules: list[PolicyRule] = []
        self.plans = Plans(clock=clock)
        self.pending: dict[int, ApprovalRequest] = {}
        self._asking: dict[int, asyncio.Future[Any]] = {}  # the approver's answer, by id
        self._paused = False
        self._listeners: Listeners[[]] = Listeners("approvals")

    # --- state the UI shows -----------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume agent access; pausing withdraws every question still waiting."""
        self._paused = paused
        logger.info("agent access %s", "paused" if paused else "resumed")
        if paused:
            for answer in self._asking.values():
                answer.cancel()  # _ask turns a withdrawn question into "paused"
            self.plans.end_all()  # a paused agent's task ends with the pause
        self._changed()

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Called when pending requests or the pause change; returns an unsubscribe function."""
        return self._listeners.add(listener)

    def _changed(self) -> None:
        self._listeners.tell()

    # --- the gate ---------------------------------------------------------------------------

    def settings(self) -> Settings:
        """The settings in force: an attribute of their owner, never a read of the file."""
        return self.settings_store.current

    def verdict(self, *, client: str, tool: str, origin: str | None) -> Verdict:
        rules = [*self.settings().policy_rules, *self.session_rules]
        return evaluate(rules, client=client, tool=tool, origin=origin, now=self._clock())

    def may_go(self, *, client: str, session: str | None, tool: str, site: str) -> bool:
        """Whether a rule or the caller's plan lets ``tool`` take a tab to ``site`` without
        asking: for a server's redirect met on the way, where there is no time to ask (the
        agent is told to go there itself, which asks)."""
        if self._paused:
            return False
        verdict = self.verdict(client=client, tool=tool, origin=site)
        if verdict.decision != "ask":
            return verdict.decision == "allow"
        return self.plans.covering(client=client, session=session, tool=tool, site=site) is not None

    async def check(
        self,
        *,
        client: str,
        tool: str,
        arguments: dict[str, Any],
        origin: str | None = None,
        tab_title: str | None = None,
        tab_id: int | None = None,
        browser_name: str | None = None,
        client_reported: str | None = None,
        touches: Touches | None = None,
        progress: Progress | None = None,
        effect: Effect | None = None,
        leaving: str | None = None,
        session: str | None = None,
    ) -> Approval:
        """Let the call through or raise ``ApprovalDenied`` with a reason the agent can relay.

        ``touches`` (already redacted) is what the dialog shows of the page; while the
        person is asked, its elements are outlined there. ``effect`` is what the call will
        most likely do (``approval.effects``; consequential: it asks unless a rule names it),
        ``leaving`` the whole address of another site the call takes the tab to.
        ``progress`` hears, every ``progress_interval`` from the moment the person is asked
        until the question ends (an answer, a timeout, a pause or the call's cancellation),
        how long the call has waited.

        Raises:
            ApprovalDenied: a rule, a pause, the person, a timeout, or a missing approver.
        """
        if self._paused:
            raise _paused()
        asking = self._weigh(client, session, tool, origin, effect, leaving)
        if asking.allowed_by is not None:
            return Approval(f"allowed by {asking.allowed_by}")
        approver = self.approver
        if approver is None:
            why = " ".join(asking.because)
            ahead = " and ".join(f"`tabrelay policy set {rule}`" for rule in asking.rules)
            raise ApprovalDenied(
                f"{tool} needs the person's approval{': ' + why if why else ''}. Tabrelay is "
                "running headless (`tabrelay serve`) with no approval dialog: start the "
                f"Tabrelay tray app, or allow it ahead of time: {ahead}",
                decision="denied: needs approval, but no approval dialog (headless)",
            )
        timeout = self.settings().approval_timeout
        touches = touches or Touches()
        async with touches.shown(timeout=timeout) as targets:
            if self._paused:  # paused while the page was being marked
                raise _paused()
            request = ApprovalRequest(
                id=next(self._ids),
                client=client,
                tool=tool,
                arguments=arguments,
                origin=origin,
                tab_title=tab_title,
                tab_id=tab_id,
                browser_name=browser_name,
                client_reported=client_reported,
                offers_always=offers_always(tool),
                timeout=timeout,
                targets=targets,
                unnamed_targets=touches.unnamed,
                destination=touches.destination,
                effect=effect,
                leaving=leaving,
                offers_session=effect is None
                or not effect.consequential
                or effect.kind not in NEVER_FROM_DIALOG,
            )
            choice = await self._ask(approver.decide(request), request, progress)
        return await self._apply(choice, request)

    def _weigh(
        self,
        client: str,
        session: str | None,
        tool: str,
        origin: str | None,
        effect: Effect | None,
        leaving: str | None,
    ) -> _Asking:
        """Whether rules or the caller's plan let the call through, and why it asks when they
        do not.

        The tool's rule for the tab's site decides first (deny ends it); without one, a live
        plan of the caller's session that names the tool and the site allows it. A
        consequential effect then needs a rule that names it (``effect:send``), whatever
        allows the tool (a plan never does); and a call that takes the tab to another site
        needs the tool allowed there too, by a rule or the plan (its address can carry data
        out).

        Raises:
            ApprovalDenied: a rule denies the tool, its effect or its destination.
        """
        verdict = self.verdict(client=client, tool=tool, origin=origin)
        _denied_by(verdict)
        allowed_by = verdict.describe() if verdict.decision == "allow" else None
        # A new tab has no site yet: the one it opens is where the plan must hold.
        here = origin or (site_of(leaving) if leaving and tool == "browser_new_tab" else None)
        plan = self.plans.covering(client=client, session=session, tool=tool, site=here)
        if allowed_by is None and plan is not None:
            allowed_by = plan.describe()
        allowed = allowed_by is not None
        because: list[str] = []
        rules = [f"{tool} allow" + (f" --site {origin}" if origin else "")]
        if leaving is not None:
            there = site_of(leaving)
            going = self.verdict(client=client, tool=tool, origin=there)
            _denied_by(going)
            planned = self.plans.covering(client=client, session=session, tool=tool, site=there)
            if going.decision != "allow" and planned is None:
                allowed = False
                because.append(f"it goes to another site: {page_text(leaving)}")
                rules = [f"{tool} allow --site {there}"] if there else rules
        if effect is not None and effect.consequential:
            named = self.verdict(client=client, tool=effect.rule_name, origin=origin)
            _denied_by(named)
            if named.decision != "allow":
                allowed = False
                because.append(effect.sentence("call", origin))
                rules.append(f"{effect.rule_name} allow" + (f" --site {origin}" if origin else ""))
        if allowed:
            return _Asking(allowed_by)
        return _Asking(None, tuple(because), tuple(dict.fromkeys(rules)))

    async def request_plan(
        self,
        *,
        client: str,
        session: str | None,
        draft: PlanDraft,
        client_reported: str | None = None,
        progress: Progress | None = None,
    ) -> Plan:
        """Ask the person to approve a task's plan; the plan as they approved it, started.

        A rule for ``browser_request_access`` decides without asking (a rule typed by the
        person is consent); headless, with no rule, it is denied.

        Raises:
            ApprovalDenied: a rule, a pause, the person, a timeout, or a missing approver.
        """
        if self._paused:
            raise _paused()
        verdict = self.verdict(client=client, tool=PLAN_TOOL, origin=None)
        _denied_by(verdict)
        if verdict.decision == "allow" and verdict.rule is not None:  # not the default
            return self.plans.start(client, session, draft)
        approver = self.approver
        if approver is None:
            raise ApprovalDenied(
                f"{PLAN_TOOL} needs the person's approval, but Tabrelay is running headless "
                "(`tabrelay serve`) with no approval dialog: start the Tabrelay tray app, or "
                f"allow the tools the task needs ahead of time: `tabrelay policy set TOOL allow "
                "--site SITE`",
                decision="denied: needs approval, but no approval dialog (headless)",
            )
        request = ApprovalRequest(
            id=next(self._ids),
            client=client,
            tool=PLAN_TOOL,
            arguments={
                "purpose": draft.purpose,
                "sites": list(draft.sites),
                "actions": list(draft.actions),
                "minutes": draft.minutes,
            },
            client_reported=client_reported,
            offers_always=False,
            offers_session=False,
            timeout=self.settings().approval_timeout,
            plan=draft,
        )
        approved = await self._ask(approver.decide_plan(request), request, progress)
        if approved is None or not approved.sites:
            raise ApprovalDenied(
                f"denied by the person: they did not approve the plan ({PLAN_TOOL})",
                decision="denied by the person",
            )
        plan = self.plans.start(client, session, approved)
        logger.info("plan %s started for %s: %d sites", plan.id, client, len(approved.sites))
        return plan

    async def _ask(
        self, asked: Awaitable[T], request: ApprovalRequest, progress: Progress | None
    ) -> T:
        """The person's answer to ``request`` (``asked``: the approver deciding it), failing
        closed: a timeout, a pause or a cancelled call ends the question."""
        answer = asyncio.ensure_future(asked)
        self.pending[request.id] = request
        self._asking[request.id] = answer
        self._changed()
        waiting = asyncio.ensure_future(self._tell_waiting(request, progress)) if progress else None
        try:
            async with asyncio.timeout(request.timeout):
                # wait() rather than await: the answer may be withdrawn (cancelled) by a pause
                # without this call being cancelled.
                await asyncio.wait({answer})
            if answer.cancelled():
                raise _paused()
            return answer.result()
        except TimeoutError:
            raise ApprovalDenied(
                f"denied: the person did not answer within {request.timeout:g} s",
                decision="denied: no answer in time",
            ) from None
        finally:
            # Nothing is awaited before the question is gone: a cancelled call (an anyio cancel
            # scope in the MCP server) is cancelled again at every await of this block.
            if waiting is not None:
                waiting.cancel()  # nothing says "waiting" once the question ended
            del self.pending[request.id]
            del self._asking[request.id]
            self._changed()
            answer.cancel()  # the dialog goes away with the question
            await asyncio.gather(answer, *([waiting] if waiting else []), return_exceptions=True)

    async def _tell_waiting(self, request: ApprovalRequest, progress: Progress) -> None:
        """Report the seconds waited (of ``request.timeout``) until cancelled."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        waited = 0.0
        while True:
            left = max(0.0, request.timeout - waited)
            try:
                await progress(
                    waited,
                    request.timeout,
                    f"waiting for the person to allow {request.tool} in Tabrelay "
                    f"({left:.0f} s left)",
                )
            # Progress is a courtesy to the client: a send that fails (the client went away)
            # must not decide the question, which its own cancellation ends.
            except Exception:
                logger.debug("could not report that %s waits", request.tool, exc_info=True)
                return
            await asyncio.sleep(self.progress_interval)
            waited = loop.time() - started

    async def _apply(self, choice: Choice, request: ApprovalRequest) -> Approval:
        if choice is Choice.DENY:
            raise ApprovalDenied(
                f"denied by the person: they did not allow {request.tool}",
                decision="denied by the person",
            )
        if choice is Choice.ALLOW_ONCE or not request.offers_session:
            return Approval("approved once by the person", waited=True)
        site = normalize_origin(request.origin) if request.origin else None
        granted = [(request.tool, site)]
        if request.asks_for_effect:
            assert request.effect is not None
            granted.append((request.effect.rule_name, site))  # this effect, on this site
        if request.leaving is not None:  # and the tool where the tab goes
            granted.append((request.tool, site_of(request.leaving)))
        rules = [
            PolicyRule(tool=tool, decision="allow", site=where, client=request.client)
            for tool, where in dict.fromkeys(granted)
        ]
        if choice is Choice.ALLOW_ALWAYS and request.offers_always:

            def keep(settings: Settings) -> None:
                settings.policy_rules.extend(rules)

            await asyncio.to_thread(self.settings_store.update, keep)
            return Approval("approved always by the person", waited=True)
        # "always" for a tool that never offers it is treated as the session grant.
        self.session_rules.extend(rules)
        return Approval("approved for the session by the person", waited=True)

    def forget_client(self, client: str) -> None:
        """Drop the session grants and plans of a client whose token was revoked."""
        self.session_rules = [r for r in self.session_rules if r.client != client]
        self.plans.forget_client(client)


def _denied_by(verdict: Verdict) -> None:
    if verdict.decision == "deny":
        raise ApprovalDenied(
            f"denied by a rule ({verdict.describe()}); ask the person to change it",
            decision=f"denied by {verdict.describe()}",
        )


def site_of(url: str) -> str | None:
    """The site a URL belongs to, as rules name sites (None for an address without one)."""
    origin = origin_of(url)
    return normalize_origin(origin) if origin else None


def _paused() -> ApprovalDenied:
    return ApprovalDenied(
        "denied: paused by the person (they paused agent access in Tabrelay); wait until they "
        "resume it",
        decision="denied: agent access paused",
    )
