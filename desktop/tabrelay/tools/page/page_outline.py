"""The page's outline read where the page is: one script in an isolated world of Tabrelay's own.

``read`` runs ``OUTLINE`` in the tab's top frame, in a world the page's scripts cannot reach
(``WORLD``), over the document, its shadow roots (as laid out: slots filled; closed ones opened to
the world by ``shadow_roots``) and its same-origin frames. The script computes each element's role,
name, value and states the way Chrome's accessibility tree does (HTML-AAM, accname:
``aria-labelledby``, ``aria-label``, labels, ``alt``, contents, ``title``, placeholders), which
elements are laid out inline, focusable only by script, on screen, and which fields hold a secret
(``page_scripts.FIELD_KIND``; such a field's value never leaves the page), and answers in nodes
shaped like Chrome's own for ``outline.build_outline``. Each element gets an id held by that world
(``held``) for the life of its document: a ref names that id, and ``element`` gives the element
back.

The same call says whether the document was still being parsed and (the top frame's) which
tools the page declares (``webmcp``), so a snapshot asks nothing else of the page. The top
frame's world keeps the script's code once it has run it: a later read of that document sends
only a call of it (``_run_outline``; compiling 40 KB anew was most of a small page's read).
A document whose last read needed nothing but that world (one frame, no code editor) is read
again before the frame tree is asked for (``read_again``): one relay command. Its context id
may name another world by then, so the answer counts only with the seal the app gave the world
with the code, and says itself whether the page still needs nothing more.

What can be clicked without a role (a ``div`` a framework listens on) is told by what the page
draws: where the pointing-hand cursor starts, or an ``onclick`` attribute. Listeners are not
asked for: ``DOMDebugger.getEventListeners`` answers with every listener of every kind on the
page (15,000 on a JupyterLab notebook, 950 ms through the extension), and a framework that
listens at its root leaves its clickable elements without one.

Why not Chrome's tree: ``Accessibility.getFullAXTree`` computes every name with its sources and
grows faster than the page (issue 16: 592 ms at 2,000 elements, against this script's tens).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
from dataclasses import dataclass, field, replace
from typing import Any

from tabrelay.errors import CommandFailed
from tabrelay.protocol.messages import uncollected
from tabrelay.tools.context import ToolContext, exception_text
from tabrelay.tools.page import child_sessions, webmcp
from tabrelay.tools.page.outline import PROPERTIES, FrameTree
from tabrelay.tools.page.shadow_roots import CANDIDATES, open_closed_roots
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import CODE_BOXES, EDITORS_AT
from tabrelay.tools.scripts.page_scripts import FIELD_KIND, LABELS_OF, SAFE_DOM, SIGHT
from tabrelay.tools.state import object_ids
from tabrelay.tools.state.tab_state import FrameWorlds

WORLD = "tabrelay-outline"
# The world forgets ids of collected elements when it holds more than twice the ids it kept at
# its last sweep, and at least this many.
HELD_SLACK = 5000
CLICKABLE, INLINE, SCRIPT_FOCUS, ON_SCREEN, IGNORED, POINTER = 1, 2, 4, 8, 16, 32

# ``idOf(element)``: the id the world holds the element by; the same element keeps its id for
# the life of the world (its document). Ids of elements the page let go (collected) are
# forgotten once they are many.
_HELD = script("held.js").replace("HELD_SLACK", str(HELD_SLACK))

OUTLINE = (
    script("outline.js")
    .replace("FIELD_KIND", FIELD_KIND.strip())
    .replace("LABELS_OF", LABELS_OF.strip())
    .replace("GENERATED_TEXT", script("generated_text.js").strip())
    .replace("SIGHT", SIGHT.strip())
    .replace("SAFE_DOM", SAFE_DOM.strip())
    .replace("  HELD\n", _HELD)
    .replace("WEBMCP_LIST", webmcp.LIST.strip())
    .replace("TOOLS_WAIT", str(int(webmcp.ASK_WAIT * 1000)))
    .replace("CLOSED_CANDIDATES", CANDIDATES.strip())
    .replace("CODE_BOXES", CODE_BOXES)
    .replace("EDITORS_AT", EDITORS_AT.strip())
)

# The outline is some 40 KB of code, compiled again each time it is sent (about 5 ms of a small
# page's read): the world keeps it, under a name that changes with its code, and a read of a
# world that has it sends only a call of it.
_KEPT = "__tabrelayOutline_" + hashlib.sha256(OUTLINE.encode()).hexdigest()[:16]
# The world keeps the seal it is given with the code (``_seal``): a value only the app can make,
# so that a call that names the world by its context id alone can tell it ran there.
_SEALED = _KEPT + "_seal"
_KEEP_AND_RUN = (
    "function (seal, ...args) {\n"
    f"  const run = {OUTLINE.strip()};\n"
    f"  globalThis.{_KEPT} = run;\n"
    f"  globalThis.{_SEALED} = seal;\n"
    "  return run.apply(this, args);\n"
    "}"
)
# Its own property only: an element the page names so shows on every world's window too.
_KEPT_RUN = f"const run = Object.hasOwn(globalThis, '{_KEPT}') && globalThis.{_KEPT};"
_RUN_KEPT = (
    f"function (...args) {{ {_KEPT_RUN}"
    " return typeof run === 'function' ? run.apply(this, args) : null; }"
)
# The same, answering [the world's seal, the outline]: a context id that names another world
# now (the page's own, after it moved to a process of its own) answers with no seal of ours.
_RUN_SEALED = (
    f"function (...args) {{ {_KEPT_RUN}"
    f" const seal = Object.hasOwn(globalThis, '{_SEALED}') ? globalThis.{_SEALED} : null;"
    " if (typeof run !== 'function' || typeof seal !== 'string') return null;"
    " return Promise.resolve(run.apply(this, args)).then((answer) => [seal, answer]); }"
)

# The id the world holds ``this`` element by (an element of the world's, from DOM.resolveNode).
ID_OF = script("id_of.js").replace("HELD\n", _HELD)

# The element a held id names, or null when its document or the element is gone.
ELEMENT = script("element.js")


@dataclass(slots=True)
class PageOutline:
    frames: list[FrameTree]
    clickable: set[int] = field(default_factory=set)  # with an onclick attribute
    inline: set[int] = field(default_factory=set)
    script_focus: set[int] = field(default_factory=set)
    visible: set[int] = field(default_factory=set)
    pointer: set[int] = field(default_factory=set)  # where a pointing-hand cursor starts
    secrets: dict[int, str] = field(default_factory=dict)
    # The held ids of each code editor's input and box handed in (``editors``), in order;
    # None for one the page has moved meanwhile.
    editors: list[tuple[int, int] | None] = field(default_factory=list)
    # Texts left out because a sighted person cannot see them, by why ("transparent", …).
    withheld: dict[str, int] = field(default_factory=dict)
    # The documents (frame id → loader id) of frames read through a child session, which the
    # tab's own frame tree does not list.
    loaders: dict[str, str] = field(default_factory=dict)
    parsing: bool = False  # the top document was still being parsed when it was read
    code_editors: bool = False  # a document read holds a code editor (``editor_text``)
    tools: list[webmcp.PageTool] = field(default_factory=list)  # the tools the page declares

    def world_alone(self, url: str) -> bool:
        """Whether reading the page again needs nothing but Tabrelay's world in its top
        document (``read_again``): one frame, no code editor, the document at ``url`` (the
        tab's)."""
        return len(self.frames) == 1 and not self.code_editors and self.frames[0].url == url

    def absorb(self, other: PageOutline) -> None:
        """Take in what ``other`` (a frame of another origin read on its own) found, but its
        frames (spliced in by the reader)."""
        for mine, theirs in (
            (self.clickable, other.clickable),
            (self.inline, other.inline),
            (self.script_focus, other.script_focus),
            (self.visible, other.visible),
            (self.pointer, other.pointer),
        ):
            mine |= theirs
        self.secrets |= other.secrets
        self.loaders |= other.loaders
        for why, count in other.withheld.items():
            self.withheld[why] = self.withheld.get(why, 0) + count


# Resolves true at the page's first change (an element added or removed, text or an attribute
# changed) within ``ms`` milliseconds, false if there was none.
CHANGES = script("changes.js")


async def changes(ctx: ToolContext, *, within: float) -> bool:
    """Whether the tab's document changes within ``within`` seconds (watched from Tabrelay's
    world, where the page cannot fake or hide it).

    Raises:
        CommandFailed: the page could not be watched (between documents, or gone).
    """
    tree = await ctx.cdp("Page.getFrameTree")
    answer = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({CHANGES})({int(within * 1000)})",
            "contextId": await world(ctx, tree["frameTree"]["frame"]["id"]),
            "awaitPromise": True,
            "returnByValue": True,
        },
        timeout=within + 5,
    )
    return answer.get("result", {}).get("value") is True


def _world_key(frame_id: str, session: str | None, loader: str | None) -> tuple[str, str, str]:
    """Where ``SessionState.worlds`` keeps Tabrelay's world in a frame's document."""
    return (session or "", frame_id, loader or "")


async def world(
    ctx: ToolContext, frame_id: str, session: str | None = None, *, loader: str | None = None
) -> int:
    """The execution context of Tabrelay's world in ``frame_id`` (of the child ``session``
    when the frame runs in another process; made on first use; the same world after that, for
    as long as the frame shows the same document). Given the document's ``loader`` (from a
    frame tree read in this call), the context is kept for that document and not asked for
    again; a context id alone could name another document's context after a navigation."""
    key = _world_key(frame_id, session, loader)
    known = ctx.state.session.worlds.get(key) if loader else None
    if known is not None:
        return known
    made = await ctx.cdp(
        "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, session=session
    )
    context = int(made["executionContextId"])
    if loader:
        ctx.state.session.worlds[key] = context
    return context


async def opened_world(
    ctx: ToolContext, session: str | None = None, *, frame: str | None = None
) -> int:
    """The execution context of Tabrelay's world in ``frame`` (by default the tab's top frame,
    or the frame the child ``session`` reaches), with the page's closed shadow roots opened to
    it (``shadow_roots``).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    loader = None
    if frame is None and session is not None:
        frame = child_sessions.frame_of(ctx, session)
    elif frame is None:
        top = (await ctx.cdp("Page.getFrameTree"))["frameTree"]["frame"]
        frame, loader = top["id"], top.get("loaderId")
    key = _world_key(frame, session, loader)
    kept = loader is not None and key in ctx.state.session.worlds
    context = await world(ctx, frame, session, loader=loader)
    try:
        await open_closed_roots(ctx, context, session)
    except CommandFailed:
        if not kept:
            raise
        ctx.state.session.worlds.pop(key, None)  # the document's world went: made anew
        context = await world(ctx, frame, session, loader=loader)
        await open_closed_roots(ctx, context, session)
    return context


async def adopt(
    ctx: ToolContext, object_id: str, *, held: int | None = None, backend: int | None = None
) -> str | None:
    """The element ``object_id`` names (in any world, of any frame's session) as an object of
    Tabrelay's world, where closed shadow roots are walked as open ones; None when it is gone.
    ``held``: the held id its ref names, which says the world of the frame of another origin
    that holds it, if one does; ``backend``: its backend node id, when the caller knows it.

    Adopted once per call (``ToolContext.adopted``).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    if object_id in ctx.adopted:
        return ctx.adopted[object_id]
    if held is not None and held >= FrameWorlds.SPAN:
        adopted = await element(ctx, None, held)
    else:
        if backend is None:
            described = await ctx.cdp("DOM.describeNode", {"objectId": object_id})
            backend = int(described["node"]["backendNodeId"])
        session = object_ids.session_of(object_id)
        adopted = await ctx.resolve(backend, await opened_world(ctx, session), session)
    ctx.adopted[object_id] = adopted
    return adopted


async def read(
    ctx: ToolContext,
    frame_id: str,
    *,
    loader: str,
    viewport: bool,
    refused: list[str],
    editors: list[list[list[int | str]]],
    tools: bool = False,
) -> PageOutline:
    """The outline's nodes of the page whose top frame is ``frame_id`` (showing the document
    ``loader``); frames at ``refused`` URLs are not read. ``editors``: where the code editors
    the page's world read are (``editor_text.paths``), each one's input and box given back as
    held ids (``PageOutline.editors``); ``tools``: the tools the page declares too (waited for
    at most ``webmcp.ASK_WAIT``).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    key = _world_key(frame_id, None, loader)
    read_before = key in ctx.state.session.worlds  # it keeps the outline
    context = await world(ctx, frame_id, loader=loader)
    try:
        arguments = _top_arguments(viewport, refused, tools, editors)
        seal = _seal(ctx, key)
        answer = await _run_outline(ctx, context, arguments, kept=read_before, seal=seal)
        if _closed_unseen(answer.get("result", {}).get("value")):
            # Opened to the world, then read with them.
            await open_closed_roots(ctx, context)
            arguments[3] = {"value": False}
            answer = await _run_outline(ctx, context, arguments, kept=True, seal=seal)
        if answer.get("exceptionDetails"):
            raise CommandFailed(
                f"the page could not be read ({exception_text(answer['exceptionDetails'])})"
            )
    except CommandFailed:
        ctx.state.session.worlds.pop(key, None)  # asked for again next time
        raise
    page = decode(answer.get("result", {}).get("value"), frame_id, len(editors))
    # Read again at once next time (``read_again``) if nothing but the world was needed.
    alone = not editors and page.world_alone(ctx.need_tab().url)
    ctx.state.session.again = key if alone else None
    await _name_frames(ctx, page, context)
    await _other_origins(ctx, page, None, viewport=viewport, depth=0)
    return page


async def read_again(ctx: ToolContext, *, viewport: bool, tools: bool = False) -> Again | None:
    """The outline of the tab's document read last, read at once, before the frame tree
    (``read``'s arguments but the frame's): when that read needed nothing but Tabrelay's world
    (one frame, no code editor) and this one still needs nothing more. None when it cannot
    say: the world is gone or another's, or the page has changed so (read as ``read`` does).

    The world's context id alone may name another world by now (the page moved on, to a
    process of its own): its answer counts only with the seal the app gave the world, and
    only if it read the document at the tab's address.

    Raises:
        CommandFailed: the tab could not be looked at (gone, or the browser failed to say).
    """
    session = ctx.state.session
    key = session.again
    context = session.worlds.get(key) if key is not None else None
    if key is None or context is None:
        return None
    session.again = None  # until this read says it may be read so again
    try:
        answer = await ctx.cdp(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": _RUN_SEALED,
                "executionContextId": context,
                "arguments": _top_arguments(viewport, [], tools, []),
                "awaitPromise": True,
                "returnByValue": True,
            },
            with_tab=True,  # the look after the call: as in ``_run_outline``
        )
    except CommandFailed:
        session.worlds.pop(key, None)  # gone with its document
        return None
    text = sealed(answer.get("result", {}).get("value"), _seal(ctx, key))
    if answer.get("exceptionDetails") or text is None:
        session.worlds.pop(key, None)  # not proved Tabrelay's: asked for again if needed
        return None
    if _closed_unseen(text):
        return None
    try:
        page = decode(text, key[1], 0)
    except CommandFailed:
        return None
    tab = await ctx.need_browser().get_tab(ctx.need_tab().id)  # the carried look: no trip
    if not page.world_alone(tab.url):
        return None
    session.again = key
    return Again(page, frame_id=key[1], loader=key[2])


@dataclass(frozen=True, slots=True)
class Again:
    """The outline ``read_again`` read, and the document it is of."""

    page: PageOutline
    frame_id: str
    loader: str


def sealed(value: Any, seal: str) -> Any:
    """The outline in a ``_RUN_SEALED`` answer, if it came with ``seal``; else None."""
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
        return None
    # As bytes: a string that is not ASCII (the page's to send) is compared, not an error.
    return value[1] if hmac.compare_digest(value[0].encode(), seal.encode()) else None


def _seal(ctx: ToolContext, key: tuple[str, str, str]) -> str:
    """The seal of Tabrelay's world in the document ``key`` (``_world_key``): made from the
    tab session's secret, which never leaves the app, and so beyond any page's making."""
    return hmac.new(ctx.state.session.secret, repr(key).encode(), "sha256").hexdigest()


def _top_arguments(
    viewport: bool, refused: list[str], tools: bool, editors: list[list[list[int | str]]]
) -> list[dict[str, Any]]:
    """The outline's arguments for the top frame's world (``read``'s, as named there)."""
    return [
        {"value": viewport},
        {"value": refused},
        {"value": tools},
        {"value": True},  # it first looks for closed shadow roots the world lacks
        {"value": editors},
    ]


def _closed_unseen(value: Any) -> bool:
    """Whether the outline said (``value``: its answer), instead of reading the page, that it
    has closed shadow roots Tabrelay's world was not given yet (the answer is the world's own
    JSON: the page cannot write it)."""
    return isinstance(value, str) and value.startswith('{"closed":')


async def _run_outline(
    ctx: ToolContext,
    context: int,
    arguments: list[dict[str, Any]],
    *,
    kept: bool,
    session: str | None = None,
    seal: str = "",
) -> Any:
    """Run the outline in the world ``context`` (of the child ``session``): the world's own
    copy when it is ``kept`` there (sent whole, to be kept with ``seal``, when it turns out not
    to be), else sent whole and kept. Chrome's answer.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    call = {
        "executionContextId": context,
        "arguments": arguments,
        "awaitPromise": True,  # the page's answer about its tools
        "returnByValue": True,
    }
    # The tab after it comes with the answer: a snapshot's last command, so the look at the tab
    # the endpoint takes after every call (the guard's) needs no round trip of its own.
    carried = session is None
    if kept:
        answer = await ctx.cdp(
            "Runtime.callFunctionOn",
            {"functionDeclaration": _RUN_KEPT, **call},
            session=session,
            with_tab=carried,
        )
        if not answer.get("exceptionDetails") and answer.get("result", {}).get("value") is not None:
            return answer
    return await ctx.cdp(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": _KEEP_AND_RUN,
            **call,
            "arguments": [{"value": seal}, *arguments],
        },
        session=session,
        with_tab=carried,
    )


async def _name_frames(
    ctx: ToolContext, page: PageOutline, context: int, session: str | None = None, base: int = 0
) -> None:
    """Give each frame of ``page`` but its first the id of the frame its <iframe> shows (for
    its document's loader, and to say where it is). Its elements are held by the world
    ``context`` read them in, whose held ids start at ``base``."""
    owners = [f.owner for f in page.frames[1:] if f.owner is not None]
    ids = await asyncio.gather(*(_frame_of(ctx, context, o - base, session) for o in owners))
    found = dict(zip(owners, ids, strict=True))
    page.frames[1:] = [
        replace(f, frame_id=found.get(f.owner) or f.frame_id) if f.owner is not None else f
        for f in page.frames[1:]
    ]


async def _other_origins(
    ctx: ToolContext, page: PageOutline, session: str | None, *, viewport: bool, depth: int
) -> None:
    """Read each frame of another origin in ``page`` (read through the child ``session``, or
    the tab's own) in a world of its own, through its own child session when it runs in a
    process of its own, in place of the line that said it was not included; frames in those
    frames too, up to ``child_sessions.MAX_DEPTH``. A frame of a site agents may not use is
    left out, saying so; one that cannot be read stays as it was."""
    others = [f for f in page.frames if f.error and f.frame_id and f.owner is not None]
    if not others or depth >= child_sessions.MAX_DEPTH:
        return
    with contextlib.suppress(CommandFailed):  # an extension that cannot: none of them
        await child_sessions.attach(ctx, session)
    children = ctx.state.session.children
    where = {id(f): children.get(f.frame_id, session) for f in others}
    sessions = list(dict.fromkeys(where.values()))
    trees = await asyncio.gather(
        *(ctx.cdp("Page.getFrameTree", session=s) for s in sessions), return_exceptions=True
    )
    for tree in trees:  # a frame going away leaves its own out, not the others
        if isinstance(tree, BaseException) and not isinstance(tree, CommandFailed):
            raise tree
    tree_of = {
        s: t["frameTree"] for s, t in zip(sessions, trees, strict=True) if isinstance(t, dict)
    }
    reads = await asyncio.gather(
        *(
            _other_origin(ctx, f, where[id(f)], tree_of[where[id(f)]], viewport, depth)
            for f in others
            if where[id(f)] in tree_of
        )
    )
    others = [f for f in others if where[id(f)] in tree_of]
    read = {id(f): r for f, r in zip(others, reads, strict=True)}
    frames: list[FrameTree] = []
    for frame in page.frames:
        got = read.get(id(frame))
        if isinstance(got, PageOutline):
            frames += got.frames
            page.absorb(got)
        else:
            frames.append(got or frame)
    page.frames = frames


async def _other_origin(
    ctx: ToolContext,
    frame: FrameTree,
    session: str | None,
    tree: dict[str, Any],
    viewport: bool,
    depth: int,
) -> PageOutline | FrameTree | None:
    """The outline of ``frame`` (another origin's, reached through ``session``, whose frame
    tree is ``tree``), the frame refused, or None if it cannot be read."""
    node = frame_node(tree, frame.frame_id)
    if node is None:
        return None
    url = str(node["frame"].get("url", ""))
    if ctx.guard.refusal(url) is not None:
        return replace(frame, url=url, error=None, refused="agents may not use it")
    if session is not None and ctx.state.session.children.get(frame.frame_id) != session:
        ctx.state.session.within[frame.frame_id] = session  # in its parent's process
    base = ctx.state.worlds.number(frame.frame_id) * FrameWorlds.SPAN
    try:
        context = await world(ctx, frame.frame_id, session)
        await open_closed_roots(ctx, context, session)
        arguments: list[dict[str, Any]] = [
            {"value": viewport},
            {"value": refused_under(ctx, node)},
            {"value": False},
        ]
        answer = await _run_outline(ctx, context, arguments, kept=False, session=session)
        if answer.get("exceptionDetails"):
            return None
        page = decode(answer.get("result", {}).get("value"), frame.frame_id, 0, base=base)
        page.frames[0] = replace(page.frames[0], owner=frame.owner)
        page.loaders = loaders_of(node)
        await _name_frames(ctx, page, context, session, base)
    except CommandFailed:
        return None
    await _other_origins(ctx, page, session, viewport=viewport, depth=depth + 1)
    return page


def frame_node(tree: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    """The node of ``frame_id`` in a ``Page.getFrameTree`` answer's tree, None if not in it."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node["frame"].get("id") == frame_id:
            return node
        stack += node.get("childFrames", [])
    return None


def refused_under(ctx: ToolContext, node: dict[str, Any]) -> list[str]:
    """The URLs of the frames under ``node`` of a frame tree that show a site agents may not
    use (a frame loaded before an agent first used the tab, when its loads were not guarded):
    never read."""
    found: list[str] = []
    for child in node.get("childFrames", []):
        url = str(child["frame"].get("url", ""))
        if ctx.guard.refusal(url) is not None:
            found.append(url)
        found += refused_under(ctx, child)
    return found


def loaders_of(tree: dict[str, Any]) -> dict[str, str]:
    """Every frame's loader id in a ``Page.getFrameTree`` answer, the top frame first."""
    return {id_: frame.get("loaderId", "") for id_, frame in frames_of(tree).items()}


def frames_of(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every frame of a ``Page.getFrameTree`` answer's tree by its id (each names its
    ``parentId``), the top frame first."""
    frames: dict[str, dict[str, Any]] = {}
    stack: list[dict[str, Any]] = [tree]
    while stack:
        node = stack.pop()
        frames[node["frame"]["id"]] = node["frame"]
        stack.extend(node.get("childFrames", []))
    return frames


async def _frame_of(
    ctx: ToolContext, context: int, owner: int, session: str | None = None
) -> str | None:
    """The frame id shown by the <iframe> the world holds as ``owner``."""
    found = await _held(ctx, context, owner, session)
    if found is None:
        return None
    described = await ctx.cdp("DOM.describeNode", {"objectId": found})
    frame = described["node"].get("frameId")
    return str(frame) if frame else None


async def element(ctx: ToolContext, top_frame_id: str | None, held: int) -> str | None:
    """The page object (in the call's object group, in Tabrelay's world) of the element
    ``held`` names in the tab whose top frame is ``top_frame_id`` (asked for when None), or
    None when it is gone.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    number, local = divmod(held, FrameWorlds.SPAN)
    if number == 0:
        if top_frame_id is None:
            top_frame_id = (await ctx.cdp("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        return await _held(ctx, await world(ctx, top_frame_id), held)
    frame = ctx.state.worlds.frame(number)
    if frame is None:
        return None
    session = child_sessions.holder_session(ctx, held)
    return await _held(ctx, await world(ctx, frame, session), local, session)


async def held_id(ctx: ToolContext, object_id: str, frame: str | None) -> int | None:
    """The held id of the element ``object_id`` (an object of Tabrelay's world in the tab's
    top frame, or in ``frame``, one of another origin read in a world of its own): the
    snapshot's, if it gave the element a ref, so one element has one ref however it was found;
    None when it is gone."""
    answer = await ctx.call_on(object_id, ID_OF)
    value = answer.get("result", {}).get("value")
    if not isinstance(value, int) or answer.get("exceptionDetails"):
        return None
    return value + (0 if frame is None else ctx.state.worlds.number(frame) * FrameWorlds.SPAN)


async def _held(
    ctx: ToolContext, context: int, held: int, session: str | None = None
) -> str | None:
    found = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({ELEMENT})({json.dumps(held)})",
            "contextId": context,
            "objectGroup": ctx.objects,
        },
        session=session,
    )
    result = found.get("result", {})
    if found.get("exceptionDetails") or result.get("subtype") == "null":
        return None
    object_id = result.get("objectId")
    return str(object_id) if object_id else None


def decode(text: Any, top: str, editors: int, *, base: int = 0) -> PageOutline:
    """The outline script's answer (JSON text) as nodes for ``build_outline``; ``editors``:
    how many code editors were handed to the script; ``base`` is added to each held id
    (a world other than the top frame's: ``FrameWorlds``).

    Raises:
        CommandFailed: the answer is not what the script gives (Chrome cut it short, or an
            extension answered for it); nothing of it is used.
    """
    try:
        with uncollected():
            value = json.loads(text)
            page = _outline(value["frames"], top, base)
        placed = [None if e is None else (int(e[0]), int(e[1])) for e in value["editors"]]
        withheld = {str(why)[:40]: int(n) for why, n in value.get("withheld", {}).items()}
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
        raise CommandFailed(f"the page's outline came back malformed ({error!r:.100})") from None
    if len(placed) != editors:
        raise CommandFailed("the page's outline came back malformed (its code editors)")
    page.editors = placed
    page.withheld = withheld
    page.parsing = value.get("parsing") is True
    page.code_editors = value.get("codeEditors") is True
    page.tools = webmcp.parse(value.get("tools"))
    return page


def _outline(frames: list[dict[str, Any]], top: str, base: int) -> PageOutline:
    page = PageOutline([])
    flagged = (
        (CLICKABLE, page.clickable),
        (INLINE, page.inline),
        (SCRIPT_FOCUS, page.script_focus),
        (ON_SCREEN, page.visible),
        (POINTER, page.pointer),
    )
    for index, frame in enumerate(frames):
        raw = frame["nodes"]
        if base:
            raw = [[e[0] + base if e[0] else e[0], *e[1:]] for e in raw]
        ids = [f"{index}.{i}" for i in range(len(raw))]
        children: list[list[str]] = [[] for _ in raw]
        for i, entry in enumerate(raw):
            parent = entry[1]
            if parent != -1 and not 0 <= parent < i:  # parents come first: no cycle
                raise ValueError(f"node {i} has parent {parent!r}")
            if parent >= 0:
                children[parent].append(ids[i])
        nodes = []
        for i, (held, parent, role, name, contents, value, props, flags) in enumerate(raw):
            node: dict[str, Any] = {"nodeId": ids[i], "role": {"value": role}}
            node["childIds"] = children[i]
            if parent >= 0:
                node["parentId"] = ids[parent]
            if held:
                node["backendDOMNodeId"] = held
            if name or contents:
                sources = [{"type": "contents", "value": {"value": name}}] if contents else []
                node["name"] = {"value": name, "sources": sources, "whole": True}
            if value is not None:
                node["value"] = {"value": value}
            if props:
                secret = props.pop("secret", None)
                if secret:
                    page.secrets[held] = secret
                node[PROPERTIES] = props
            if flags & IGNORED:
                node["ignored"] = True
            if flags and held:
                for flag, found in flagged:
                    if flags & flag:
                        found.add(held)
            nodes.append(node)
        page.frames.append(
            FrameTree(
                top if index == 0 else "",
                nodes,
                str(frame.get("url", "")),
                frame["owner"] + base if frame.get("owner") is not None else None,
                error="cross-origin" if frame.get("error") else None,
                refused="agents may not use it" if frame.get("refused") else None,
            )
        )
    return page
