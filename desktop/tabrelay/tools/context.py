"""What a tool receives and returns, and the parameter models every tool shares.

A tool is a plain async function ``run(ctx, params) -> ToolResult``. The endpoint resolves the
browser and tab, passes approval and logs the call; the tool only does its work through
``ctx.browser`` and explains failures by raising ``TabrelayError`` subclasses.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tabrelay.config.settings import Settings
from tabrelay.errors import CommandFailed, CommandTimeout, EventsClosed, TabrelayError, ToolError
from tabrelay.protocol.messages import TabInfo
from tabrelay.recipes.store import RecipeStore
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.tools.state import object_ids
from tabrelay.tools.state.downloads import Downloads, Owner
from tabrelay.tools.state.guard import NavigationGuard
from tabrelay.tools.state.handoffs import Handoffs
from tabrelay.tools.state.sessions import TabSessions
from tabrelay.tools.state.tab_state import Reach, TabState, TabStates

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
TargetKind = Literal["none", "browser", "tab"]  # what the endpoint resolves for a tool
# The kinds of action a task's plan names (``browser_request_access``, ``ToolSpec.plan``).
Action = Literal["navigate", "click", "type", "select", "press_key", "scroll", "hover", "drag"]
BYTES_PER_TOKEN = 4  # a rough, conservative ratio for English text and markup
RELEASE_TIMEOUT = 2.0  # releasing input a failed call left held; a dialog may block it
_groups = itertools.count(1)


class Params(BaseModel):
    """Base of every tool's parameters: unknown arguments are an error, not silently dropped.

    JSON ``null`` for an optional argument means "not given": clients that put OpenAI's strict
    mode over a tool list every argument as required and send ``null`` for those the model
    leaves out. A required argument that is ``null`` is still refused, with the field named.
    The schemas agents see come from ``tools/schema.py``.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        optional = _optional_not_nullable(cls)
        return {k: v for k, v in data.items() if not (v is None and k in optional)}


@functools.cache
def _optional_not_nullable(model: type[Params]) -> frozenset[str]:
    """The arguments of ``model`` that have a default and do not take ``None`` themselves (for
    those that do, ``None`` is a value and passes through)."""
    return frozenset(
        key
        for name, info in model.model_fields.items()
        if not info.is_required() and not _admits_none(info.annotation)
        for key in {name, info.alias or name}
    )


def _admits_none(annotation: Any) -> bool:
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in get_args(annotation))
    return False


class BrowserParams(Params):
    # No description: it is on every tool (a thousand bytes of tools/list), the name says what
    # it is, and a call that needs it is refused naming the ids to choose from (relay/registry).
    browser: str | None = None


class TabParams(BrowserParams):
    # Without it, the active tab (browser_status says so once, for every tool).
    tab_id: int | None = None


# An element a tool acts on: a ref from a snapshot, or a CSS selector.
class Target(Params):
    ref: str | None = Field(default=None, description="From browser_snapshot.")
    selector: str | None = Field(default=None, description="Or a CSS selector.")


class TargetParams(TabParams, Target):
    @model_validator(mode="after")
    def _one_target(self) -> TargetParams:
        if (self.ref is None) == (self.selector is None):
            raise ValueError("give either 'ref' (from browser_snapshot) or 'selector'")
        return self


@dataclass
class Image:
    data: str  # base64
    mime_type: str
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Reading:
    """The page's words a reading tool read, whole: the response (``tools.response``) fits
    them to the budget, marked as the page's, with how to read on when they do not fit."""

    words: str  # unmarked: the response marks them
    read_on: Callable[[int], str]  # how to read on, given how many bytes of ``words`` were shown
    head: str = ""  # the page's words shown before them (a snapshot's title line)
    after: str = ""  # Tabrelay's words after them (notes), kept whatever the cut


class Outcome(Protocol):
    """Where an acting call left its tab (``acting.aftermath.Followed``), which the response
    says after what the tool did."""

    def note(self) -> str: ...
    def data(self) -> dict[str, Any]: ...


@dataclass
class ToolResult:
    """What a tool did: its text (the page's words marked with ``results.page_text``), an
    image, structured content and which of its fields are the page's words; and what the
    response (``tools.response``, the one place a result is put together) adds to the text:
    the page's words it read, where an acting call left the tab, or the dialog it opened."""

    text: str
    image: Image | None = None
    data: dict[str, Any] | None = None
    page_fields: tuple[str, ...] = ()
    reading: Reading | None = None
    followed: Outcome | None = None
    dialog: dict[str, Any] | None = None  # Page.javascriptDialogOpening's params

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8")) + (len(self.image.data) if self.image else 0)


# A tool's function: its context and parameters in, what happened out.
Runner = Callable[["ToolContext", Any], Awaitable[ToolResult]]


@dataclass
class ToolContext:
    browser: Browser | None
    tab: TabInfo | None
    settings: Settings
    guard: NavigationGuard
    hub: EventHub
    progress: Progress
    tabs: TabStates  # everything kept per tab (refs, events, sessions, who opened it)
    status: Callable[[], dict[str, Any]] = field(default=lambda: {})
    sessions: TabSessions | None = None  # to guard a tab a tool opens before it loads a page
    recipes: RecipeStore | None = None  # the saved recipes (browser_run_recipe reads them)
    handoffs: Handoffs | None = None  # the tabs handed to the person (browser_handoff)
    downloads: Downloads | None = None  # what agents' actions downloaded, by session
    client: str | None = None  # the MCP client making the call
    session: str | None = None  # which of the client's MCP sessions
    reach: Reach | None = None  # an acting call's: where it was allowed to take the tab
    # Asks the person to approve a task's plan (purpose, sites, actions, minutes); what they
    # approved, started (browser_request_access). Given by the endpoint, which owns approvals.
    access: Callable[..., Awaitable[dict[str, Any]]] | None = None
    # Lets a download this call's action began go on, asking the person first unless the
    # call's approval already weighed a download (``beyond``: it is larger or riskier than
    # that covers); raises ApprovalDenied. Given by the endpoint, which owns approvals.
    confirm_download: Callable[..., Awaitable[None]] | None = None
    # Input commands still running after a dialog blocked the page (kept so they finish).
    background: set[asyncio.Future[Any]] = field(default_factory=set)
    # What this call holds down in the page (a mouse button, a key), each with the CDP event
    # that lets it go: set before the press is sent, cleared once the release is answered.
    held_input: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    # Argument paths ("text", "fields.2.value") the tool found to be secrets while it ran.
    secrets: set[str] = field(default_factory=set)
    # The page objects this call asked for (elements it acts on) live in one object group,
    # released when the call ends however it ends; named on first use, released only once a
    # command may have put something in it (an answer with an object, or no answer).
    object_group: str | None = None
    objects_made: bool = False
    child_sessions: set[str] = field(default_factory=set)  # those this call sent commands to
    # The page object each ref or selector (of a tab) named in this call (``refs.object_for``):
    # found once however many steps ask (the approval's description, the recipe's locator,
    # the secret check, the action), so what the person was shown is what is acted on; good
    # as long as the object group holds it.
    found: dict[tuple[int, str, str], str] = field(default_factory=dict)
    # Those page objects as objects of Tabrelay's world (``page_outline.adopt``), alike.
    adopted: dict[str, str | None] = field(default_factory=dict)

    @property
    def owner(self) -> Owner:
        """Whose downloads this call's are: its client and MCP session."""
        return (self.client or "", self.session)

    @property
    def state(self) -> TabState:
        """Everything kept about the target tab: made on first use, and a throwaway (kept
        nowhere) once the tab is gone (``TabStates.tab``)."""
        return self.tabs.tab(self.need_browser().id, self.need_tab().id)

    def adopt(self, tab_id: int, *, loading: bool = False) -> None:
        """A tab this call opened: the agent's (in scope whatever the person shared); one it
        is about to load a page in (``loading``) has that load's redirects judged like this
        call's."""
        state = self.tabs.tab(self.need_browser().id, tab_id)
        state.agent_opened = True
        if loading:
            state.reach = self.reach

    @property
    def objects(self) -> str:
        """The object group for page objects this call asks for (see ``release_objects``)."""
        if self.object_group is None:
            self.object_group = f"tabrelay-call-{next(_groups)}"
        return self.object_group

    @property
    def budget_bytes(self) -> int:
        return self.settings.response_budget_tokens * BYTES_PER_TOKEN

    def need_browser(self) -> Browser:
        assert self.browser is not None, "the endpoint resolves the browser for this tool"
        return self.browser

    def need_tab(self) -> TabInfo:
        assert self.tab is not None, "the endpoint resolves the tab for this tool"
        return self.tab

    def in_scope(self, tab: TabInfo, *, browser: Browser | None = None) -> bool:
        """Whether agents may see and use ``tab`` (of ``browser``, default the call's) under the
        person's tab-scope setting."""
        if self.settings.tab_scope == "all":
            return True
        owner = browser or self.need_browser()
        if tab.shared:
            return True
        state = self.tabs.get(owner.id, tab.id)
        return state is not None and state.agent_opened

    async def cdp(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        **kw: Any,
    ) -> Any:
        """A CDP command to the target tab: to its child ``session`` (a frame in another
        process) when given, or when ``params`` name an object of one (``object_ids``);
        object ids in the answer of a child session are marked as its.

        Raises:
            CommandFailed: it names objects of two sessions.
        """
        session, params = object_ids.routed(session, params)
        if session is not None:  # before sending: what it makes there is released there too
            self.child_sessions.add(session)
        makes = object_ids.may_make(params)
        try:
            answer = await self.need_browser().cdp(
                self.need_tab().id, method, params, session_id=session, **kw
            )
        except BaseException:
            self.objects_made = self.objects_made or makes  # it may have run: not known
            raise
        self.objects_made = self.objects_made or (makes and object_ids.holds_object(answer))
        return answer if session is None else object_ids.tag_objects(answer, session)

    async def call_on(
        self,
        object_id: str,
        function: str,
        *args: Any,
        by_value: bool = True,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Run ``function`` with ``this`` bound to a page object (``Runtime.callFunctionOn``).

        The CDP answer as it is: ``result`` and, for a script error, ``exceptionDetails``. An
        object returned (``by_value=False``) joins this call's object group.

        Raises:
            CommandFailed: the object is gone (its document changed) or the page refused.
        """
        params: dict[str, Any] = {
            "objectId": object_id,
            "functionDeclaration": function,
            "returnByValue": by_value,
        }
        if args:
            params["arguments"] = [{"value": a} for a in args]
        if not by_value:
            params["objectGroup"] = self.objects
        answer: dict[str, Any] = await self.cdp("Runtime.callFunctionOn", params, timeout=timeout)
        return answer

    async def resolve(self, backend: int, context: int, session: str | None = None) -> str | None:
        """The object of the node ``backend`` names in the world ``context`` (of the child
        ``session``, if given; in this call's object group), or None when it is gone."""
        try:
            resolved = await self.cdp(
                "DOM.resolveNode",
                {
                    "backendNodeId": backend,
                    "executionContextId": context,
                    "objectGroup": self.objects,
                },
                session=session,
            )
        except CommandFailed:
            return None  # gone meanwhile
        object_id = resolved.get("object", {}).get("objectId")
        return str(object_id) if object_id else None

    async def release_objects(self) -> None:
        """Let the page free the objects this call asked for, even while it is cancelled.

        Bounded; a page that is gone freed them itself.
        """
        group, self.object_group = self.object_group, None
        made, self.objects_made = self.objects_made, False
        self.found.clear()
        self.adopted.clear()
        if group is not None and made and self.browser is not None and self.tab is not None:
            await self.settle(self._release_group(group, [None, *self.child_sessions]))

    async def _release_group(self, group: str, sessions: list[str | None]) -> None:
        async def release(session: str | None) -> None:
            with contextlib.suppress(TimeoutError, TabrelayError):
                async with asyncio.timeout(RELEASE_TIMEOUT):
                    await self.cdp(
                        "Runtime.releaseObjectGroup", {"objectGroup": group}, session=session
                    )

        await asyncio.gather(*(release(s) for s in sessions))

    async def release_input(self) -> None:
        """Let go of whatever a failed or cancelled call left held down, last pressed first.

        Best effort and bounded: the page may be gone or blocked by a dialog.
        """
        held, self.held_input = self.held_input, {}
        if held and self.browser is not None and self.tab is not None:
            await self.settle(self._release(list(held.values())))

    async def _release(self, held: list[tuple[str, dict[str, Any]]]) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RELEASE_TIMEOUT):
                for method, params in reversed(held):
                    # Nothing to report: the call already failed with its own error.
                    with contextlib.suppress(TabrelayError):
                        await self.cdp(method, params)

    async def settle(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` to its end even while this call is being cancelled (see ``settle``)."""
        await settle(work, self.background)

    @contextlib.asynccontextmanager
    async def events(self, *methods: str, tab_updates: bool = False) -> AsyncIterator[EventWaiter]:
        """Collect the target tab's CDP events of ``methods`` from now on (subscribe first),
        and with ``tab_updates`` the browser's word of the tab (``updated``: where it is)."""
        browser, tab = self.need_browser(), self.need_tab()
        wanted = frozenset(methods)
        told = frozenset({"removed", "updated"} if tab_updates else {"removed"})
        subscription = self.hub.subscribe(
            maxlen=1000,
            accept=lambda e: (
                e.browser_id == browser.id
                and e.tab_id == tab.id
                and (
                    (e.kind == "cdp" and e.method in wanted and e.session_id is None)
                    or (e.kind == "tab" and e.method in told)
                )
            ),
        )
        try:
            yield EventWaiter(subscription.wait, tab.id)
        finally:
            subscription.close()


async def settle(work: Coroutine[Any, Any, None], background: set[asyncio.Future[Any]]) -> None:
    """Run ``work`` to its end even while the calling task is being cancelled.

    The MCP SDK cancels a handler with a cancel scope that cancels every await that follows,
    so clean-up awaited in ``finally`` would never run. ``work`` runs as its own task, kept in
    ``background`` (the calls' background work, which stopping Tabrelay cancels); a cancel
    arriving meanwhile still ends the caller at once.
    """
    task = asyncio.ensure_future(work)
    background.add(task)
    task.add_done_callback(background.discard)
    await asyncio.shield(task)


def exception_text(details: dict[str, Any]) -> str:
    """What a page script's exception says, from CDP's ``exceptionDetails`` (cut short)."""
    exception = details.get("exception") or {}
    return str(exception.get("description") or details.get("text") or "a script error")[:200]


class EventWaiter:
    def __init__(self, wait: Callable[[], Awaitable[list[HubEvent]]], tab_id: int) -> None:
        self._wait = wait
        self._tab_id = tab_id
        self.seen: list[HubEvent] = []

    async def until(self, predicate: Callable[[HubEvent], bool], *, timeout: float) -> HubEvent:
        """The first event (already seen or coming) that satisfies ``predicate``.

        Raises:
            CommandTimeout: none within ``timeout`` seconds.
            ToolError: the tab was closed meanwhile, or its events ended (Tabrelay stopping).
        """
        for event in self.seen:
            if predicate(event):
                return event
        try:
            async with asyncio.timeout(timeout):
                while True:
                    batch = await self._wait()
                    self.seen.extend(batch)
                    for event in batch:
                        if event.kind == "tab" and event.method == "removed":
                            raise ToolError(f"tab {self._tab_id} was closed while waiting")
                        if predicate(event):
                            return event
        except TimeoutError:
            raise CommandTimeout(f"the page did not get there within {timeout:g} s") from None
        except EventsClosed:
            raise ToolError(
                f"stopped waiting on tab {self._tab_id}: its events ended (Tabrelay is stopping "
                "or the call was cancelled)"
            ) from None
