"""One tool call from start to finish: validate, resolve the tab, redact, describe what it
touches, approve, re-check, run, log.

Every call, allowed or not, ends as one command log row. Secrets are redacted at the door: the
approval dialog and the log only ever get the masked copy of the arguments
(``tools/redaction.py``), whatever the outcome, and the elements the arguments name are
described from the page without their values (``tools/targets.py``), with any secret of the call
the page echoes masked too. The tab's origin comes from the browser, not the agent, and is read
again right before the tool runs, so a page that moved to another site after approval aborts the
call (THREATS A4). Failures surface as ``TabrelayError`` subclasses whose messages tell the
agent what to do next; anything else a tool raises is turned into one here, the single error
boundary. The MCP layer turns them into ``isError`` results. A call that fails or is cancelled
lets go of any input it held down. A call's progress reaches its client as one increasing
sequence: the wait for the person first, then the tool's own steps.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from tabrelay.approval import effects
from tabrelay.approval.effects import Effect, Kind
from tabrelay.approval.gate import Approval, ApprovalGate, site_of
from tabrelay.approval.plans import draft_of
from tabrelay.approval.policy import normalize_origin
from tabrelay.config.settings import SettingsStore
from tabrelay.errors import (
    ApprovalDenied,
    CommandFailed,
    CommandTimeout,
    NavigationBlocked,
    TabrelayError,
    TargetChanged,
    ToolError,
    validation_text,
)
from tabrelay.listeners import Listeners
from tabrelay.protocol.constants import ErrorCode
from tabrelay.protocol.messages import TabInfo
from tabrelay.recipes.model import Locator
from tabrelay.recipes.recorder import Recorder
from tabrelay.recipes.store import RecipeStore
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.store.commandlog import CommandEntry, CommandLog, Status
from tabrelay.tools import results
from tabrelay.tools.catalog import ToolSpec
from tabrelay.tools.context import Action, Params, Progress, ToolContext, ToolResult
from tabrelay.tools.recorders.recording import final_text_of_call, record_call
from tabrelay.tools.redaction import redact, redact_all, secret_values
from tabrelay.tools.response import respond
from tabrelay.tools.state.downloads import Downloads
from tabrelay.tools.state.guard import NavigationGuard, origin_of
from tabrelay.tools.state.handoffs import Handoffs, refusal
from tabrelay.tools.state.sessions import TabSessions
from tabrelay.tools.state.tab_state import Reach, TabStates
from tabrelay.tools.targets import Touches, capture_targets, describe_touches

logger = logging.getLogger(__name__)

MAX_CALLS_PER_CLIENT = 16
MAX_LOGGED_STRING = 200


@dataclass(frozen=True, slots=True)
class Caller:
    client: str  # the authenticated client (its token's name)
    reported: str | None = None  # clientInfo name and version: self-reported
    session: str | None = None  # which of the client's MCP sessions (its recording's key)


class ToolRunner:
    def __init__(
        self,
        *,
        registry: BrowserRegistry,
        gate: ApprovalGate,
        hub: EventHub,
        settings: SettingsStore,
        log: CommandLog,
        guard: Callable[[], NavigationGuard],
        status: Callable[[], dict[str, Any]],
        sessions: TabSessions,
        tabs: TabStates,
        handoffs: Handoffs | None = None,
        recorder: Recorder | None = None,
        recipes: RecipeStore | None = None,
        downloads: Downloads | None = None,
    ) -> None:
        self.registry = registry
        self.downloads = downloads
        self.sessions = sessions
        self.tabs = tabs
        self.handoffs = handoffs
        self.recorder = recorder
        self.recipes = recipes
        self.background: set[asyncio.Future[Any]] = set()
        self.gate = gate
        self.hub = hub
        self.settings_store = settings
        self.log = log
        self._guard = guard
        self._status = status
        self._running: Counter[str] = Counter()
        self._activity_listeners: Listeners[[int]] = Listeners("the running tool calls")

    @property
    def active_calls(self) -> int:
        """How many tool calls are running now (the tray shows "working" while any are)."""
        return sum(self._running.values())

    def add_activity_listener(self, listener: Callable[[int], None]) -> Callable[[], None]:
        """Call ``listener(active_calls)`` whenever a call starts or ends (a failing one is
        logged and cannot break the call); returns the way to stop."""
        return self._activity_listeners.add(listener)

    def _activity(self, delta: int, client: str) -> None:
        self._running[client] += delta
        self._activity_listeners.tell(self.active_calls)

    async def call(
        self, spec: ToolSpec, arguments: dict[str, Any], caller: Caller, progress: Progress
    ) -> ToolResult:
        """Run one tool call; raises ``TabrelayError`` (after logging) when it fails."""
        started = time.time()
        row = _Row(
            caller.client, spec.name, arguments, spec.secrets.names if spec.secrets else None
        )
        if self._running[caller.client] >= MAX_CALLS_PER_CLIENT:
            error = ToolError(
                f"{caller.client} already has {MAX_CALLS_PER_CLIENT} calls running; wait for "
                "them to finish"
            )
            self._record(row, started, "error", error=error)
            raise error
        self._activity(+1, caller.client)
        try:
            result = await self._call(spec, arguments, caller, progress, row)
        except ApprovalDenied as denied:
            row.decision = denied.decision
            self._record(row, started, "denied", error=denied)
            raise
        except CommandTimeout as error:
            self._record(row, started, "timeout", error=error)
            raise
        except TabrelayError as error:
            self._record(row, started, "error", error=error)
            raise
        except asyncio.CancelledError:
            # Recorded here and now: submitting a row never waits, so a cancel cannot cut it
            # short, and nothing is left to the background work that stopping cancels.
            self._record(row, started, "cancelled")
            raise
        # The error boundary for what no tool meant to raise (a page answering in a shape the
        # tool did not expect): the agent gets a sentence it can act on, the log a row and the
        # traceback; never the bare exception text.
        except Exception as exc:
            logger.exception("%s failed with an unexpected error", spec.name)
            internal = ToolError(
                f"{spec.name} failed because of an internal error in Tabrelay "
                f"({type(exc).__name__}). Look at the page again (browser_snapshot) and retry; "
                "if it fails again, tell the person: the details are in Tabrelay's log."
            )
            self._record(row, started, "error", error=internal)
            raise internal from None
        finally:
            self._activity(-1, caller.client)
        self._record(row, started, "ok", size=result.size)
        return result

    async def close(self) -> None:
        """Stop what calls left running in the background (input behind a dialog)."""
        for task in list(self.background):
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)

    async def _call(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        caller: Caller,
        progress: Progress,
        row: _Row,
    ) -> ToolResult:
        try:
            params = spec.params.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for {spec.name}: {validation_text(exc)}") from None
        row.valid = True
        settings = self.settings_store.current  # the owner's snapshot: no I/O
        reporter = _CallProgress(progress)
        ctx = ToolContext(
            browser=None,
            tab=None,
            settings=settings,
            guard=self._guard(),
            hub=self.hub,
            progress=reporter,
            tabs=self.tabs,
            status=self._status,
            background=self.background,
            secrets=row.secrets,
            sessions=self.sessions,
            recipes=self.recipes,
            handoffs=self.handoffs,
            downloads=self.downloads,
            client=caller.client,
            session=caller.session,
            access=functools.partial(self._start_plan, caller, reporter),
        )
        ctx.confirm_download = functools.partial(
            _confirm_download, row, functools.partial(self._check, spec, caller, row, ctx, reporter)
        )
        try:
            return await self._steps(spec, params, caller, row, ctx, reporter)
        finally:  # the page objects the call asked for, whatever step it ended at
            await ctx.release_objects()

    async def _steps(
        self,
        spec: ToolSpec,
        params: Params,
        caller: Caller,
        row: _Row,
        ctx: ToolContext,
        reporter: _CallProgress,
    ) -> ToolResult:
        if spec.target != "none":
            ctx.browser = self.registry.resolve(getattr(params, "browser", None))
            row.browser = ctx.browser.id
        if spec.target == "tab":
            ctx.tab = await self._tab(ctx, getattr(params, "tab_id", None))
            row.tab_id, row.origin = ctx.tab.id, origin_of(ctx.tab.url)
            self._refuse_handed_over(ctx)
            self._refuse_blocked(ctx, spec, ctx.tab)
            self._refuse_behind_dialog(ctx, spec)
        if spec.secrets is not None:
            row.cleared = await spec.secrets.clear(ctx, params)
        if not self.gate.paused:  # a pause denies at once: nothing to look at
            row.touches = await describe_touches(ctx, spec.touches, params)
            row.effect = effects.decide(
                spec.judged,
                params,
                row.touches.targets,
                dialog=self._dialog_message(ctx),
                recipe=await self._recipe_effects(spec, params),
            )
            row.leaving = _leaving(spec.name, params, row.touches, row.origin)
        approval = await self._check(
            spec,
            caller,
            row,
            ctx,
            reporter,
            touches=row.touched(),
            effect=row.effect,
            leaving=row.leaving,
        )
        row.decision = approval.how
        if not spec.read_only:  # where it may take the tab: a redirect elsewhere is judged
            here = normalize_origin(row.origin) if row.origin else None
            sites = (here, site_of(row.leaving) if row.leaving else None)
            ctx.reach = Reach(
                caller.client, caller.session, spec.name, frozenset(s for s in sites if s)
            )
        state = None
        if ctx.tab is not None:
            if approval.waited:  # time passed while the person decided: look again
                await self._recheck(ctx, row.origin)
            self._refuse_handed_over(ctx)  # handed over while the person decided
            self._refuse_behind_dialog(ctx, spec)
            await self.sessions.prepare(ctx.need_browser(), ctx.tab.id, guard=True)
            if not spec.read_only:
                state = ctx.state
                state.reach = ctx.reach
        recording = self.recorder is not None and spec.recorded
        try:
            # Before the tool runs: a click may take its element away.
            locators = await capture_targets(ctx, spec.touches, params) if recording else {}
            result = respond(await spec.run(ctx, params), ctx.budget_bytes)
        except BaseException:
            await ctx.release_input()
            raise
        finally:
            if state is not None and state.reach is ctx.reach:
                state.reach = None  # the call is over: later loads are the page's own
        if recording:
            self._record_steps(spec, params, caller, ctx, row, locators, result)
        if ctx.tab is not None and not spec.leaves_page:
            # What the tool read or did must not have come from a blocked site meanwhile.
            try:
                now = await _fresh(ctx.need_browser(), ctx.tab.id)
            except ToolError:
                return result  # the page closed its tab (a click on "close"): nothing to hide
            except CommandFailed as failed:  # the tab may be anywhere now: fail closed
                raise ToolError(
                    f"could not look at tab {ctx.tab.id} after {spec.name} ran "
                    f"({failed.message}), so its result is withheld (it may come from a site "
                    "agents may not use); look at the tab again and retry"
                ) from None
            self._refuse_blocked(ctx, spec, now, after=True)
        return result

    def _refuse_handed_over(self, ctx: ToolContext) -> None:
        """A tab handed to the person is theirs until they end the handoff."""
        if self.handoffs is None:
            return
        refused = refusal(self.handoffs, ctx.need_browser().id, ctx.need_tab().id)
        if refused is not None:
            raise ToolError(refused)

    def _record_steps(
        self,
        spec: ToolSpec,
        params: Params,
        caller: Caller,
        ctx: ToolContext,
        row: _Row,
        locators: dict[str, Locator],
        result: ToolResult,
    ) -> None:
        """Add what a successful call did to its session's recording
        (``tools/recorders/recording.py``): secrets become parameters there, so none reaches the
        recording's file. Never fails the call: a recording that cannot be written is logged."""
        assert self.recorder is not None
        browser = ctx.need_browser()
        data = result.data or {}
        # A tool on a tab ran there; browser_new_tab made its tab (its id is in the result).
        tab_id = ctx.tab.id if ctx.tab is not None else data.get("tab_id")
        if not isinstance(tab_id, int):
            return
        page_url = ctx.tab.url if ctx.tab is not None else None
        cleared = row.cleared - row.secrets
        names = row.secret_names or frozenset()

        def secret(path: str) -> bool:
            return path.split(".")[-1] in names and path not in cleared

        try:
            made = record_call(
                spec.name, params, locators, secret=secret, page_url=page_url, result=result
            )
            if row.effect is not None and row.effect.consequential:
                judged = {"effect": row.effect.kind.value}
                made = replace(made, steps=[s.model_copy(update=judged) for s in made.steps])
            final_text = final_text_of_call(spec.name, params, result)
            if not made.steps and final_text is None and made.gap is None:
                return
            recording = self.recorder.for_agent(
                caller.client, caller.session or "-", browser.id, tab_id, start_url=page_url
            )
            url = data.get("url")
            self.recorder.add(
                recording,
                made.steps,
                made.params,
                final_url=url if isinstance(url, str) else None,
                final_text=final_text,
                gap=made.gap,
            )
        except (OSError, TabrelayError, ValueError) as error:
            logger.warning("%s was not recorded: %s", spec.name, error)

    def _refuse_blocked(
        self, ctx: ToolContext, spec: ToolSpec, tab: TabInfo, *, after: bool = False
    ) -> None:
        """The guard holds for the tab's whole life: a tab showing a blocked site (a redirect,
        a page's own navigation) is off limits to every tool but those that take it away."""
        if spec.leaves_page:
            return
        try:
            ctx.guard.check(tab.url)
        except NavigationBlocked as blocked:
            shown = results.page_text(origin_of(tab.url) or tab.url[:100])
            if after:
                raise NavigationBlocked(
                    f"tab {tab.id} went to {shown} while {spec.name} ran, and agents may not "
                    f"use that site ({blocked.message}); the result is withheld. Navigate the "
                    "tab elsewhere with browser_navigate, or use another tab"
                ) from None
            raise NavigationBlocked(
                f"tab {tab.id} shows {shown}, which agents may not use ({blocked.message}); "
                "navigate it elsewhere with browser_navigate, or use another tab"
            ) from None

    async def _start_plan(
        self,
        caller: Caller,
        reporter: _CallProgress,
        *,
        purpose: str,
        sites: list[str],
        actions: list[Action],
        minutes: int,
    ) -> dict[str, Any]:
        """Ask the person to approve a task's plan; what they approved (browser_request_access).

        Raises:
            ApprovalDenied: the person, a rule, a pause, a timeout or headless said no.
        """
        plan = await self.gate.request_plan(
            client=caller.client,
            session=caller.session,
            draft=draft_of(purpose, sites, actions, minutes),
            client_reported=caller.reported,
            progress=reporter.waiting,
        )
        return {
            "id": plan.id,
            "sites": list(plan.draft.sites),
            "actions": list(plan.draft.actions),
            "expires_at": plan.expires_at,
        }

    async def _check(
        self,
        spec: ToolSpec,
        caller: Caller,
        row: _Row,
        ctx: ToolContext,
        reporter: _CallProgress,
        *,
        effect: Effect | None,
        touches: Touches | None = None,
        leaving: str | None = None,
    ) -> Approval:
        """The gate's word on this call (``ApprovalGate.check``), with what it is shown of it;
        the wait for the person counts on from the tool's last step, and its steps from after
        the answer (``_CallProgress``)."""
        reporter.answered()
        approval = await self.gate.check(
            client=caller.client,
            tool=spec.name,
            arguments=row.shown(),
            origin=row.origin,
            tab_title=ctx.tab.title if ctx.tab else None,
            tab_id=row.tab_id,
            browser_name=ctx.browser.name if ctx.browser else None,
            client_reported=caller.reported,
            touches=touches,
            progress=reporter.waiting,
            effect=effect,
            leaving=leaving,
            session=caller.session,
        )
        reporter.answered()
        return approval

    async def _recipe_effects(self, spec: ToolSpec, params: Params) -> list[str | None] | None:
        """What each step of the recipe a call replays was judged to do when recorded (None
        for a step not judged); None when the call replays no recipe it can read (the tool
        then says why)."""
        name = getattr(params, "name", None)
        if spec.judged != "recipe" or self.recipes is None or not isinstance(name, str):
            return None
        try:
            recipe = await asyncio.to_thread(self.recipes.load, name)
        except TabrelayError:
            return None
        return [step.effect if step.by == "agent" else "unknown" for step in recipe.steps]

    def _dialog_message(self, ctx: ToolContext) -> str | None:
        """The message of the JavaScript dialog open on the call's tab, if any."""
        if ctx.tab is None or ctx.browser is None:
            return None
        state = self.tabs.get(ctx.browser.id, ctx.tab.id)
        dialog = state.log.dialog if state is not None else None
        return dialog.message if dialog is not None else None

    def _refuse_behind_dialog(self, ctx: ToolContext, spec: ToolSpec) -> None:
        """A JavaScript dialog blocks the page: say so instead of hanging on it."""
        if spec.while_dialog:
            return
        state = self.tabs.get(ctx.need_browser().id, ctx.need_tab().id)
        dialog = state.log.dialog if state is not None else None
        if dialog is not None:
            raise ToolError(
                f"tab {ctx.need_tab().id} shows a {dialog.kind} dialog: "
                f"{results.page_text(repr(dialog.message))}; answer it with "
                "browser_handle_dialog first"
            )

    async def _tab(self, ctx: ToolContext, tab_id: int | None) -> TabInfo:
        browser = ctx.need_browser()
        if tab_id is None:
            tab = _active_tab(await browser.list_tabs())
            if tab is None:
                raise ToolError(f"{browser.name} has no active tab; pass tab_id")
        else:
            tab = await _fresh(browser, tab_id)
        if not ctx.in_scope(tab):
            raise ToolError(_no_tab(tab.id))
        return tab

    async def _recheck(self, ctx: ToolContext, approved_origin: str | None) -> None:
        # The person took their time: ask the browser, not its cache (its event may be late).
        tab = await _fresh(ctx.need_browser(), ctx.need_tab().id, ask=True)
        now = origin_of(tab.url)
        if now != approved_origin:
            raise TargetChanged(
                f"tab {tab.id} changed from {results.page_text(repr(approved_origin or tab.url))} "
                f"to {results.page_text(repr(now or tab.url))} "
                "after the call was approved, so it was not run; look at the tab again and retry"
            )
        ctx.tab = tab

    def _record(
        self,
        row: _Row,
        started: float,
        status: Status,
        *,
        error: Exception | None = None,
        size: int = 0,
    ) -> None:
        entry = CommandEntry(
            time=started,
            client=row.client,
            tool=row.tool,
            arguments=_summary(row.shown()),
            decision=row.decision,
            status=status,
            duration_ms=(time.time() - started) * 1000,
            result_bytes=size,
            browser=row.browser,
            tab_id=row.tab_id,
            origin=row.origin,
            error=results.plain(str(error))[:1000] if error else None,
            targets=touched.summary() if (touched := row.touched()) else None,
            effect=_effect_text(row),
        )
        # Written by the log's own thread, in order, after the answer (``CommandLog.submit``);
        # closing the log writes every row submitted before. Only a call still ending after
        # the log closed (Tabrelay stopping) has no row; the app's log says so.
        try:
            self.log.submit(entry)
        except RuntimeError:
            logger.warning("no command log row for %s: the log is closed", row.tool)


async def _confirm_download(
    row: _Row, check: Callable[..., Awaitable[Approval]], what: str, *, beyond: bool
) -> None:
    """Let a download the call's action began go on (``what``: its file, size, type and source,
    the page's words marked): the call's own approval covers it when it weighed a download
    (asked the person about one, or a rule named ``effect:download``), unless it is ``beyond``
    what that covers (``tools.acting.download``: too large, of no stated size, a program, or
    flagged by Chrome); otherwise ``check`` (the call's gate) asks, as for any consequential
    effect. The command log's row says how it went.

    Raises:
        ApprovalDenied: the person, a rule, a pause, a timeout or headless said no.
    """
    if row.effect is not None and row.effect.kind is Kind.DOWNLOAD and not beyond:
        return
    try:
        approval = await check(effect=Effect(Kind.DOWNLOAD, what, certain=True))
    except ApprovalDenied as denied:
        row.decision = f"{row.decision}; its download {denied.decision}"
        raise
    row.decision = f"{row.decision}; its download {approval.how}"


class _CallProgress:
    """One call's progress as its client sees it. MCP requires each notification's progress to
    be larger than the last; the wait for the person counts seconds from 0 and a tool counts its
    own steps from 0, so the tool's are sent after the wait, and anything that would not
    increase is not sent."""

    def __init__(self, send: Progress) -> None:
        self._send = send
        self._last: float | None = None
        self._offset = 0.0

    async def waiting(self, waited: float, timeout: float | None, message: str | None) -> None:
        offset = self._offset  # a later question counts on from the tool's steps
        await self._increasing(
            waited + offset, None if timeout is None else timeout + offset, message
        )

    def answered(self) -> None:
        """The person answered: the tool's steps count on from after the wait."""
        if self._last is not None:
            self._offset = self._last + 1

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        offset = self._offset
        await self._increasing(done + offset, None if total is None else total + offset, message)

    async def _increasing(self, done: float, total: float | None, message: str | None) -> None:
        if self._last is not None and done <= self._last:
            return
        self._last = done
        await self._send(done, total, message)


@dataclass
class _Row:
    """One call as the command log will keep it. ``arguments`` is only ever read redacted."""

    client: str
    tool: str
    arguments: dict[str, Any]
    secret_names: frozenset[str] | None  # argument names that may carry typed secrets
    decision: str = "not reached"
    browser: str | None = None
    tab_id: int | None = None
    origin: str | None = None
    valid: bool = False  # the arguments are what the tool takes
    cleared: frozenset[str] = frozenset()  # paths proven not secret before approval
    secrets: set[str] = field(default_factory=set)  # paths the tool found secret later
    touches: Touches | None = None  # what the page showed of the elements named, unscrubbed
    effect: Effect | None = None  # what the call will most likely do
    leaving: str | None = None  # the address of another site the call takes the tab to

    def touched(self) -> Touches | None:
        """What the call touches as anyone may see it: any secret of it the page echoed
        (a label, a placeholder) masked like the arguments."""
        if self.touches is None or not self.secret_names:
            return self.touches
        cleared = self.cleared - self.secrets
        return self.touches.scrubbed(secret_values(self.arguments, self.secret_names, cleared))

    def shown(self) -> dict[str, Any]:
        """The arguments as anyone may see them: secrets masked, unproven ones too; all of
        them for a tool that types, when they are not what it takes."""
        if not self.secret_names:
            return self.arguments
        if not self.valid:
            masked: dict[str, Any] = redact_all(self.arguments)
            return masked
        masked = redact(self.arguments, self.secret_names, self.cleared - self.secrets)
        return masked


def _leaving(tool: str, params: Params, touches: Touches, origin: str | None) -> str | None:
    """The address of another site than the tab's that the call takes the tab to: a URL it
    opens, a link it clicks, a form it submits (with Enter too), or a page in its history."""
    url: str | None = None
    if tool in ("browser_navigate", "browser_new_tab"):
        url = getattr(params, "url", None) or touches.destination
    else:
        facts = next((t.facts for t in touches.targets if t.facts is not None), None)
        key = str(getattr(params, "key", "")).rsplit("+", 1)[-1].casefold()
        enter = (tool == "browser_type" and getattr(params, "submit", False)) or (
            tool == "browser_press_key" and key in ("enter", "return")
        )
        if facts is not None and facts.form is not None and (enter or facts.form.submits):
            url = facts.form.action or None
        elif facts is not None and tool == "browser_click" and facts.href is not None:
            url = facts.href
    if not url:
        return None
    there = site_of(url)
    here = normalize_origin(origin) if origin else None
    return url if there is not None and there != here else None


def _effect_text(row: _Row) -> str | None:
    """The command log's effect: ``pay: button “Place order” in a form …``, where it goes."""
    parts = []
    if row.effect is not None and row.effect.consequential:
        parts.append(f"{row.effect.kind.value}: {results.plain(row.effect.why)}".rstrip(": "))
    if row.leaving is not None:
        parts.append(f"goes to another site: {row.leaving[:300]}")
    return "; ".join(parts) or None


def _active_tab(tabs: list[TabInfo]) -> TabInfo | None:
    active = [t for t in tabs if t.active]
    focused = [t for t in active if t.focused]
    candidates = focused or active
    return candidates[0] if candidates else None


async def _fresh(browser: Browser, tab_id: int, *, ask: bool = False) -> TabInfo:
    """The tab now.

    Raises:
        ToolError: it does not exist: the browser said so by ``ErrorCode.NO_TAB`` (a seed
            extension, which has no tabs.get, has the tab looked for in tabs.list, and its
            absence gets that code too).
        CommandFailed: the browser failed to say (any other failure, or one without a code):
            whether the tab exists is not known.
    """
    try:
        return await browser.get_tab(tab_id, ask=ask)
    except CommandFailed as failed:
        if failed.code == ErrorCode.NO_TAB:
            raise ToolError(_no_tab(tab_id)) from None
        raise


def _no_tab(tab_id: int) -> str:
    return (
        f"tab {tab_id} does not exist or is not shared with agents (was it closed?); "
        "see browser_list_tabs"
    )


def _summary(arguments: dict[str, Any]) -> str:
    """The (already redacted) arguments as the log keeps them: long strings and lists cut."""

    def shorten(value: Any) -> Any:
        if isinstance(value, str) and len(value) > MAX_LOGGED_STRING:
            return value[:MAX_LOGGED_STRING] + f"… ({len(value)} chars)"
        if isinstance(value, dict):
            return {k: shorten(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shorten(v) for v in value[:20]]
        return value

    kept = {k: shorten(v) for k, v in arguments.items() if v is not None}
    return json.dumps(kept, ensure_ascii=False, default=str)
