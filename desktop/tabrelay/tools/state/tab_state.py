"""Everything Tabrelay keeps about one tab, and ``TabStates``, the one registry that owns it.

A ``TabState`` per (browser id, tab id) holds the refs snapshots handed out, what the event
stream said (console, network, an open dialog), the debugger session's bookkeeping, whether an
agent opened the tab, and when the person was last alerted about it. State lives exactly as
long as its browser's tab list (``Browser.tabs``, kept by the extension's tab events) holds the
tab: it goes when the tab leaves that list (closed, or showing a page Tabrelay may not use) or
the browser disconnects, and a document's refs go when its frame shows a new document; what
another room keeps per tab (an agent's recording) goes then too, told by ``dropped``. No I/O:
the browser registry tells it what changed, and the observer which frame navigated.
"""

from __future__ import annotations

import itertools
import re
import secrets
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tabrelay.listeners import Listeners
from tabrelay.relay.browser import Browser
from tabrelay.relay.registry import BrowserRegistry, Change
from tabrelay.tools.state.object_ids import MARK

Key = tuple[str, int]  # (browser id, tab id)
MAX_REFS_PER_TAB = 20_000
MAX_CONSOLE = 500
MAX_REQUESTS = 500
_REF = re.compile(r"e([1-9][0-9]{0,9})")
# A tab's frames in other processes come and go as child sessions (``child_sessions.py``).
ATTACHED = "Target.attachedToTarget"
DETACHED = "Target.detachedFromTarget"
# Frames only (not the page's workers, nor its service worker, which other tabs share); the
# extension lets nothing else through (``denylist.js``).
AUTO_ATTACH = {
    "autoAttach": True,
    "waitForDebuggerOnStart": False,
    "flatten": True,
    "filter": [{"type": "iframe"}],
}


@dataclass(frozen=True, slots=True)
class PdfPages:
    """The text of the PDF a tab shows, page by page (``tools/page/pdf.py``), kept for the document
    it was read from (its loader id) so continuing reads it again at once."""

    loader_id: str
    pages: tuple[str, ...]  # the text of the first pages, as many as were read
    total: int  # pages the PDF has
    cut: str | None = None  # why fewer than ``total`` were read


class FrameWorlds:
    """Numbers for the frames whose own Tabrelay world holds elements (a frame of another
    origin is read in a world of its own: ``page_outline``). Each world counts its held ids
    from 1; an element held by world ``n`` is known to the tab as ``n * SPAN + id``, the top
    frame's world being 0, so a held id names one element in the whole tab."""

    SPAN = 1 << 32
    LIMIT = 4096  # frames remembered; the longest unused go first (their refs are stale)

    def __init__(self) -> None:
        self._numbers: OrderedDict[str, int] = OrderedDict()
        self._frames: dict[int, str] = {}
        self._next = itertools.count(1)

    def number(self, frame_id: str) -> int:
        number = self._numbers.get(frame_id)
        if number is not None:
            self._numbers.move_to_end(frame_id)  # in use: a long-lived frame keeps its number
        else:
            number = self._numbers[frame_id] = next(self._next)
            self._frames[number] = frame_id
            if len(self._numbers) > self.LIMIT:
                _, oldest = self._numbers.popitem(last=False)
                del self._frames[oldest]
        return number

    def frame(self, number: int) -> str | None:
        """The frame whose world is ``number`` (None: forgotten, or never given)."""
        return self._frames.get(number)


@dataclass(frozen=True, slots=True)
class RefTarget:
    """What a ref names: an element of one document (its frame's loader id), by the id
    Tabrelay's world in the tab holds it by (``page_outline``)."""

    held_id: int
    frame_id: str
    loader_id: str


class RefNumbers:
    """Where ref numbers come from: one count for every tab of a ``TabStates``, across tab
    closes and browser reconnects, so no ref is ever handed out twice (a tab's state made again
    after a reconnect would otherwise count from e1 for the same document)."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self.last = 0

    def take(self) -> int:
        self.last = next(self._counter)
        return self.last


class TabRefs:
    """The refs handed out for one tab; the same node keeps its ref across snapshots.

    Ref numbers come from ``numbers`` (shared by every tab; one of its own if none is given) and
    are never handed out twice, so a ref of a released document is known as stale (``issued``)
    rather than unknown.
    """

    def __init__(self, numbers: RefNumbers | None = None) -> None:
        self._numbers = numbers if numbers is not None else RefNumbers()
        self._by_node: dict[RefTarget, str] = {}
        self._targets: OrderedDict[str, RefTarget] = OrderedDict()
        self._loaders: dict[str, str] = {}  # frame id → the document its refs are of
        # ref → the backend node id Chrome gave its element, once a tool looked it up: the same
        # for the element's life, so later uses skip asking the world for it.
        self._nodes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._targets)

    def assign(self, target: RefTarget) -> str:
        ref = self._by_node.get(target)
        if ref is not None:
            return ref
        if self._loaders.get(target.frame_id, target.loader_id) != target.loader_id:
            self.release_frame(target.frame_id, keep=target.loader_id)
        self._loaders[target.frame_id] = target.loader_id
        ref = f"e{self._numbers.take()}"
        self._by_node[target] = ref
        self._targets[ref] = target
        if len(self._targets) > MAX_REFS_PER_TAB:
            evicted, oldest = self._targets.popitem(last=False)
            self._by_node.pop(oldest, None)
            self._nodes.pop(evicted, None)
        return ref

    def get(self, ref: str) -> RefTarget | None:
        return self._targets.get(ref)

    def node_of(self, ref: str) -> int | None:
        """The backend node id learnt for ``ref`` (``learn_node``), if any."""
        return self._nodes.get(ref)

    def learn_node(self, ref: str, backend: int) -> None:
        if ref in self._targets:
            self._nodes[ref] = backend

    def issued(self, ref: str) -> bool:
        """Whether ``ref`` was handed out (for this tab or, sharing numbers, another; it may
        have been released since)."""
        match = _REF.fullmatch(ref)
        return match is not None and int(match.group(1)) <= self._numbers.last

    def release_frame(self, frame_id: str, *, keep: str | None = None) -> None:
        """Forget the refs of ``frame_id``'s documents other than ``keep``."""
        stale = [
            ref
            for ref, target in self._targets.items()
            if target.frame_id == frame_id and target.loader_id != keep
        ]
        for ref in stale:
            self._by_node.pop(self._targets.pop(ref), None)
            self._nodes.pop(ref, None)
        if keep is None:
            self._loaders.pop(frame_id, None)
        else:
            self._loaders[frame_id] = keep

    def release_all(self, *, keep: tuple[str, str] | None = None) -> None:
        """Forget every ref but those of the document ``keep`` (frame id, loader id): the
        tab's main frame shows a new document, and the old one's frames went with it."""
        if keep is None or not any(
            (t.frame_id, t.loader_id) == keep for t in self._targets.values()
        ):
            self._by_node.clear()
            self._targets.clear()
            self._loaders.clear()
            self._nodes.clear()
            return
        for ref, target in list(self._targets.items()):
            if (target.frame_id, target.loader_id) != keep:
                self._by_node.pop(self._targets.pop(ref), None)
                self._nodes.pop(ref, None)
        self._loaders = {keep[0]: keep[1]}


@dataclass(slots=True)
class ConsoleMessage:
    time: float
    level: str
    text: str
    source: str = ""


@dataclass(slots=True)
class Request:
    id: str
    time: float
    method: str
    url: str
    resource_type: str = ""
    status: int | None = None
    mime_type: str = ""
    failed: str | None = None
    finished: bool = False
    size: int = 0


@dataclass(slots=True)
class Dialog:
    kind: str  # alert, confirm, prompt, beforeunload
    message: str
    default_prompt: str = ""


@dataclass(slots=True)
class TabLog:
    """What the tab's event stream said lately (bounded buffers)."""

    console: deque[ConsoleMessage] = field(default_factory=lambda: deque(maxlen=MAX_CONSOLE))
    requests: OrderedDict[str, Request] = field(default_factory=OrderedDict)
    dialog: Dialog | None = None
    stopped: tuple[str, str] | None = None  # the last load the guard stopped: (url, why)
    console_dropped: int = 0
    last_network_activity: float = 0.0  # time.monotonic() of the last network event

    def in_flight(self) -> int:
        return sum(1 for r in self.requests.values() if not r.finished and r.failed is None)


@dataclass(slots=True)
class SessionState:
    """The tab's debugger session as the app keeps it (``sessions.TabSessions`` changes it)."""

    enabled: set[str] = field(default_factory=set)  # CDP domains enabled in this session
    domains: tuple[str, ...] | None = None  # the person's choice; None: the default
    last_used: float | None = None  # time.monotonic() of the last use
    guarded: bool = False  # an agent drives the tab: its document requests pass the guard
    # Owners that need the session kept (an open handoff, a demonstration being recorded): the
    # idle detach leaves the tab alone while any holds it. Theirs, so a detach keeps it.
    holds: int = 0
    # The tab's frames in other processes (``child_sessions``): frame id → child session id,
    # and the session each hangs under (None: the tab's own); the sessions ("" the tab's own)
    # where Chrome attaches to them.
    children: dict[str, str] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)
    auto_attached: set[str] = field(default_factory=set)
    # Frames of another origin in the process of such a frame (no session of their own): the
    # child session they were read through.
    within: dict[str, str] = field(default_factory=dict)
    # Tabrelay's world in a document: (child session or "", frame id, loader id) → its
    # execution context, for the reads that know the document (``page_outline.world``).
    worlds: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # The top document (its key in ``worlds``) whose last read needed nothing but that world:
    # the next one is made at once (``page_outline.read_again``).
    again: tuple[str, str, str] | None = None
    # Seals Tabrelay's worlds as the app's own (``page_outline``); never leaves the app.
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    def learn(self, method: str, params: dict[str, Any], parent: str | None) -> None:
        """A child session came (``ATTACHED``, under ``parent``) or went (``DETACHED``)."""
        if method == ATTACHED:
            info = params.get("targetInfo") or {}
            child = params.get("sessionId")
            if info.get("type") == "iframe" and isinstance(child, str) and MARK not in child:
                frame = str(info.get("targetId", ""))
                self.children[frame] = child
                self.parents[frame] = parent
        elif method == DETACHED:
            gone = params.get("sessionId")
            for frame, child in list(self.children.items()):
                if child == gone:
                    del self.children[frame]
                    self.parents.pop(frame, None)
                    self.auto_attached.discard(child)
            for frame, through in list(self.within.items()):
                if through == gone:
                    del self.within[frame]
            for key in [key for key in self.worlds if key[0] == gone]:
                del self.worlds[key]

    def fresh(self) -> None:
        """A new debugger session: nothing enabled in it, no child session known."""
        self.enabled.clear()
        self.children.clear()
        self.parents.clear()
        self.auto_attached.clear()
        self.within.clear()
        self.worlds.clear()
        self.again = None

    def reset(self) -> None:
        """The session ended (detached): nothing is enabled, nothing is held for the guard."""
        self.fresh()
        self.last_used = None
        self.guarded = False


@dataclass(frozen=True, slots=True)
class Reach:
    """Where an acting call on a tab was allowed to take it, and whose call it is: a server's
    redirect to another site on the way is judged against it (``interception.py``)."""

    client: str
    session: str | None
    tool: str
    sites: frozenset[str]  # origins, as rules name sites


@dataclass(slots=True)
class TabState:
    """All Tabrelay keeps about one tab. Room for more per-tab state goes here, nowhere else."""

    key: Key
    refs: TabRefs = field(default_factory=TabRefs)
    log: TabLog = field(default_factory=TabLog)
    session: SessionState = field(default_factory=SessionState)
    agent_opened: bool = False  # an agent opened it: in scope whatever the person shared
    alerted: float | None = None  # time.monotonic() of the last "stopped a load" alert
    # While an acting call runs on the tab (or, for a tab it opened, until that tab shows its
    # first page): where the call may take it. None: the page's own loads.
    reach: Reach | None = None
    main_frame: str | None = None  # the id of the tab's own frame, once a document showed
    pdf: PdfPages | None = None  # the last PDF the tab showed and a tool read
    worlds: FrameWorlds = field(default_factory=FrameWorlds)  # frames read in worlds of their own


class TabStates:
    """The one owner of per-tab state; see the module docstring.

    ``tab()`` creates a tab's state on first use, but keeps it only for a tab its connected
    browser lists: a call still running on a tab that closed (or went to a page Tabrelay may
    not use) gets a throwaway state, so nothing that outlives its tab can be left behind, and
    the same tab back on a page Tabrelay may use gets state that is kept again.
    """

    def __init__(self, registry: BrowserRegistry) -> None:
        self._registry = registry
        self._tabs: dict[Key, TabState] = {}
        self._numbers = RefNumbers()
        # Told (browser id, tab id) as a tab's state goes, for what other rooms keep per tab.
        self.dropped: Listeners[[str, int]] = Listeners("per-tab state dropped")
        self._unsubscribe = registry.add_listener(self._browser_changed)

    def __len__(self) -> int:
        return len(self._tabs)

    def __iter__(self) -> Iterator[TabState]:
        return iter(list(self._tabs.values()))

    def get(self, browser_id: str, tab_id: int) -> TabState | None:
        """The tab's state if Tabrelay keeps any."""
        return self._tabs.get((browser_id, tab_id))

    def tab(self, browser_id: str, tab_id: int) -> TabState:
        """The tab's state, made on first use (kept only while its browser lists the tab)."""
        key = (browser_id, tab_id)
        state = self._tabs.get(key)
        if state is None:
            state = TabState(key, refs=TabRefs(self._numbers))
            browser = self._registry.get(browser_id)
            if browser is not None and tab_id in browser.tabs:
                self._tabs[key] = state
        return state

    def of_browser(self, browser_id: str) -> list[TabState]:
        return [s for s in self._tabs.values() if s.key[0] == browser_id]

    def closed(self, browser_id: str, tab_id: int) -> None:
        """A tool closed the tab: its state goes now (the browser's tab event, which takes the
        tab off its list, may come after the tool's answer)."""
        if self._tabs.pop((browser_id, tab_id), None) is not None:
            self.dropped.tell(browser_id, tab_id)

    def navigated(
        self, browser_id: str, tab_id: int, frame_id: str, loader_id: str, *, main: bool
    ) -> None:
        """A frame of the tab shows a new document: refs into the old one are released, and
        Tabrelay's world in it forgotten."""
        state = self._tabs.get((browser_id, tab_id))
        if state is None:
            return
        if main:
            state.main_frame = frame_id
            state.reach = None  # the call's navigation arrived: what follows is the page's
            state.refs.release_all(keep=(frame_id, loader_id))
        else:
            state.refs.release_frame(frame_id, keep=loader_id)
        worlds = state.session.worlds  # kept by the document: the old one's is gone
        for key in [k for k in worlds if k[:2] == ("", frame_id) and k[2] != loader_id]:
            del worlds[key]

    def close(self) -> None:
        """Stop listening to the browser registry and forget everything."""
        self._unsubscribe()
        self._tabs.clear()

    def _browser_changed(self, change: Change, browser: Browser) -> None:
        # Told synchronously as the browser applies a tab event or a tab list, so a state is
        # never dropped for an older word than the list it is checked against.
        if change == "disconnected":
            gone = [k for k in self._tabs if k[0] == browser.id]
        else:
            gone = [k for k in self._tabs if k[0] == browser.id and k[1] not in browser.tabs]
        for key in gone:
            del self._tabs[key]
            self.dropped.tell(*key)
