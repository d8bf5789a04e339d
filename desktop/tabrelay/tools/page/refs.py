"""Refs and targets: from an agent's ``ref`` or CSS selector to a live element it may act on.

A ref names a backend DOM node of one document (the frame's loader id at snapshot time). It
resolves only while that document is still shown and the node is still in it; otherwise the
agent is told to take a new snapshot. Before any input the target is scrolled into view and
checked like a person would: visible, enabled, and not covered by something else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, replace
from typing import Any

from tabrelay.errors import CommandFailed, ToolError
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import child_sessions, page_outline
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import BOX_OF, CODE_BOXES, EDITOR, INPUT_OF
from tabrelay.tools.scripts.page_scripts import FIELD_KIND, QUERY, SAFE_DOM
from tabrelay.tools.state import object_ids

_NO_MATCH = "nothing on the page matches the selector {selector!r}"
STALE = (
    "ref {ref} is from an earlier version of the page (it navigated or re-rendered); take a new "
    "snapshot with browser_snapshot and use its refs"
)


@dataclass(frozen=True, slots=True)
class Located:
    """A live element, checked and scrolled into view; ``x``/``y`` is its centre in viewport px."""

    object_id: str
    x: float
    y: float
    tag: str
    input_type: str
    editable: bool
    secret: str | None  # "password", "one-time code", "card detail": what the field takes
    description: str
    # For typing: the kind of editor or field whose input this is ("CodeMirror 5", "field").
    editor: str | None = None
    # A link with a download attribute (a click saves the file, not navigates): its address.
    download: str | None = None


_CONTROL = script("control.js")
_KIND_OF = f"function () {{ return ({FIELD_KIND})(({_CONTROL})(this)); }}"

# Runs on the element itself (Runtime.callFunctionOn). Scrolls it into view, then checks it
# the way a person would see it: present, visible, enabled, and the topmost thing at its centre.
_CHECK = (
    script("check_element.js")
    .replace("CODE_BOXES", CODE_BOXES)
    .replace("FIELD_KIND", FIELD_KIND.strip())
    .replace("EDITOR", EDITOR.strip())
    .replace("SAFE_DOM", SAFE_DOM.strip())
)

_VISIBLE_LABEL = script("visible_label.js")

_DRAWN_TWICE = script("drawn_twice.js")
RENDER_WAIT = 0.5  # seconds an action waits at most for a frame of another process to draw


async def locate(
    ctx: ToolContext, *, ref: str | None, selector: str | None, action: str
) -> Located:
    """The element a tool acts on, checked and in view.

    Raises:
        ToolError: no ref or selector, an unknown or stale ref, nothing matches, or the element
            is hidden, disabled or covered (each with what to do next).
    """
    object_id = await object_for(ctx, ref=ref, selector=selector)
    gone = went_away(ref, selector)
    result = await _check(ctx, object_id, action, gone)
    if result.get("retarget") in ("label", "input"):
        retarget = _VISIBLE_LABEL if result["retarget"] == "label" else INPUT_OF
        found = await ctx.call_on(object_id, retarget, by_value=False)
        object_id = str(found["result"]["objectId"])
        result = await _check(ctx, object_id, action, gone)
    what = ref or selector
    match result.get("error"):
        case "stale":
            raise ToolError(gone)
        case "hidden":
            raise ToolError(
                f"{what} ({page_text(str(result.get('what')))}) is not visible, so a person "
                "could not use it; scroll, open the menu or dialog that holds it, or wait for it"
            )
        case "disabled":
            raise ToolError(
                f"{what} ({page_text(str(result.get('what')))}) is disabled; complete what "
                "enables it first"
            )
        case "obscured":
            raise ToolError(
                f"{what} ({page_text(str(result.get('what')))}) is covered by "
                f"{page_text(str(result.get('by')))}; close or dismiss that first (a banner, "
                "dialog or overlay)"
            )
    editor = str(result["editor"]) if result.get("editor") else None
    shown = await _box_of(ctx, object_id) if result.get("boxed") else object_id
    session = object_ids.session_of(object_id)
    if session is not None:  # in view in its own frame: now its frame in the page's view
        await _frame_in_view(ctx, session, shown)
    x, y = await _centre(ctx, shown)
    if action != "hover" and not await _reaches(ctx, ref, session, result, x, y):
        raise ToolError(
            f"{what} is covered by something of the page around its frame; close or dismiss "
            "that first (a banner, dialog or overlay), or scroll it into view"
        )
    return Located(
        object_id=object_id,
        x=x,
        y=y,
        tag=str(result.get("tag", "")),
        input_type=str(result.get("type", "")),
        editable=bool(result.get("editable")),
        secret=str(result["secret"]) if result.get("secret") else None,
        description=page_text(str(result["what"])) if "what" in result else str(what),
        editor=editor,
        download=result["download"] if isinstance(result.get("download"), str) else None,
    )


async def _reaches(
    ctx: ToolContext,
    ref: str | None,
    session: str | None,
    checked: dict[str, Any],
    x: float,
    y: float,
) -> bool:
    """Whether nothing of the page around the element's frame is over its point ``x``, ``y``
    (the tab's viewport): checked from outside for a frame of another process, and for a frame
    of this one drawn through a transform (``checked``: what its own check said; a frame drawn
    plainly was checked in the page)."""
    if session is not None:
        return await child_sessions.reaches(ctx, session, x, y)
    target = ctx.state.refs.get(ref) if ref is not None else None
    if checked.get("drawnThrough") is not True or target is None:
        return True
    hit = await child_sessions.hit(ctx, x, y)
    if hit.get("frameId") == target.frame_id:
        return True  # in the element's own document, which its check looked at
    # Else the hit must be the <iframe> of its frame or of a frame around it.
    frames = page_outline.frames_of((await ctx.cdp("Page.getFrameTree"))["frameTree"])
    frame = frames.get(target.frame_id)
    while frame is not None and frame.get("parentId"):
        if await child_sessions.owner_of(ctx, frame["id"]) == hit.get("backendNodeId"):
            return True
        frame = frames.get(frame["parentId"])
    return False


async def _frame_in_view(ctx: ToolContext, session: str, object_id: str) -> None:
    quads = (await ctx.cdp("DOM.getContentQuads", {"objectId": object_id})).get("quads") or []
    if not quads:
        return  # said by _centre
    left, top, right, bottom = child_sessions.bounds(quads)
    await child_sessions.scroll_into_view(ctx, session, (left, top, right - left, bottom - top))
    await _rendered(ctx, object_id)


async def _rendered(ctx: ToolContext, object_id: str) -> None:
    """Wait (at most RENDER_WAIT) for the element's frame to draw twice. Input to a frame of
    another process goes where the browser's picture of the page says it is; until the frame
    has drawn since it loaded or scrolled, that picture is behind, and a click lands on the
    <iframe> in the page around it (the frame never hears of it)."""
    with contextlib.suppress(TimeoutError, CommandFailed):
        async with asyncio.timeout(RENDER_WAIT):
            await ctx.cdp(
                "Runtime.callFunctionOn",
                {"objectId": object_id, "functionDeclaration": _DRAWN_TWICE, "awaitPromise": True},
            )


async def _box_of(ctx: ToolContext, object_id: str) -> str:
    """What a person sees of the editor whose input this is (its input may have no area)."""
    found = await ctx.call_on(object_id, BOX_OF, by_value=False)
    return str(found.get("result", {}).get("objectId") or object_id)


# What a key with no target goes to: the focused element, as the approval described it; in
# ``ToolContext.found``, NOTHING_FOCUSED when the approval found none.
FOCUSED = ":focus"
NOTHING_FOCUSED = ""
# Whether this element (an object of Tabrelay's world, where the page cannot redefine what
# the document says has the focus) still has the keyboard focus.
_STILL_FOCUSED = f"function () {{ return ({QUERY})({json.dumps(FOCUSED)}) === this; }}"
_NONE_FOCUSED = f"({QUERY})({json.dumps(FOCUSED)}) === null"


async def focus_kept(ctx: ToolContext) -> None:
    """Before a key with no target is pressed: the focus is where the approval showed it (on
    an element, or on none), as Tabrelay's world reads it.

    Raises:
        ToolError: the page moved the focus since (the key would go elsewhere).
    """
    shown = ctx.found.get((ctx.need_tab().id, "selector", FOCUSED))
    if shown is None:
        return  # not described (a recipe's step): the key goes to the page as it is
    try:
        if shown == NOTHING_FOCUSED:
            answer = await ctx.cdp(
                "Runtime.evaluate",
                {
                    "expression": _NONE_FOCUSED,
                    "contextId": await page_outline.opened_world(ctx),
                    "returnByValue": True,
                },
            )
        else:
            adopted = await page_outline.adopt(ctx, shown)
            answer = {} if adopted is None else await ctx.call_on(adopted, _STILL_FOCUSED)
    # Its document gone, or an answer not Chrome's: not known to be kept, so not pressed.
    except (CommandFailed, KeyError, TypeError, ValueError):
        answer = {}
    if answer.get("result", {}).get("value") is not True:
        raise ToolError(
            "the keyboard focus moved since the key was described to the person (the page "
            "moved it, or loaded again); look at the page again and retry"
        )


def went_away(ref: str | None, selector: str | None) -> str:
    """What a call says of the element a ref or selector named once it is gone (the page took
    it away or loaded again since the call found it)."""
    if ref is not None:
        return STALE.format(ref=ref)
    return f"{selector!r} went away (the page removed it or loaded again); look at the page again"


async def _check(ctx: ToolContext, object_id: str, action: str, gone: str) -> dict[str, Any]:
    try:
        checked = await ctx.call_on(object_id, _CHECK, action)
    except CommandFailed:  # its document is gone
        raise ToolError(gone) from None
    value = checked.get("result", {}).get("value")
    return value if isinstance(value, dict) else {}


async def secret_kind(ctx: ToolContext, *, ref: str | None, selector: str | None) -> str | None:
    """What kind of secret the target takes (``"password"``…), or ``None`` for plain text.

    Raises:
        ToolError: the ref or selector finds no element (as ``locate`` would say).
    """
    object_id = await object_for(ctx, ref=ref, selector=selector)
    found = await ctx.call_on(object_id, _KIND_OF)
    if found.get("exceptionDetails"):
        raise ToolError(f"could not inspect {ref or selector} (a script error in the page)")
    kind = found.get("result", {}).get("value")
    return str(kind) if kind else None


def held_of(ctx: ToolContext, ref: str | None) -> int | None:
    """The held id ``ref`` names (``page_outline.adopt`` reads it), None for none."""
    target = ctx.state.refs.get(ref) if ref is not None else None
    return None if target is None else target.held_id


@dataclass(frozen=True, slots=True)
class Node:
    """A target's backend node id, the child session it is good in (a frame in another
    process: ``child_sessions``; None: the tab's own), and its page object (in the call's
    object group)."""

    backend: int
    session: str | None
    object_id: str


async def node_id_of(ctx: ToolContext, *, ref: str | None, selector: str | None) -> Node:
    """The backend node of a target, without the actionability checks (file inputs, what a
    call touches). A ref's node is known once its object is found: no describing again."""
    object_id = await object_for(ctx, ref=ref, selector=selector)
    backend = ctx.state.refs.node_of(ref) if ref is not None else None
    if backend is None:
        try:
            described = await ctx.cdp("DOM.describeNode", {"objectId": object_id})
        except CommandFailed:  # its document is gone
            raise ToolError(went_away(ref, selector)) from None
        backend = int(described["node"]["backendNodeId"])
    return Node(backend, object_ids.session_of(object_id), object_id)


async def object_for(ctx: ToolContext, *, ref: str | None, selector: str | None) -> str:
    """The page object (in the call's object group) of the element a ref or selector names,
    without the actionability checks; ToolError when there is none.

    Found once per call (``ToolContext.found``): an element the approval described is the one
    the call acts on, whatever the selector names by then."""
    if (ref is None) == (selector is None):
        raise ToolError("give either 'ref' (from browser_snapshot) or 'selector' (CSS)")
    key = (ctx.need_tab().id, "ref" if ref is not None else "selector", str(ref or selector))
    if (known := ctx.found.get(key)) is not None:
        if ref is not None and ctx.state.refs.get(ref) is None:  # its document went meanwhile
            raise ToolError(went_away(ref, selector))
        if known == NOTHING_FOCUSED:
            raise ToolError(_NO_MATCH.format(selector=selector))
        return known
    if ref is not None:
        known = await _object_for_ref(ctx, ref)
    else:
        try:
            known = await _object_for_selector(ctx, str(selector))
        except ToolError:
            if selector == FOCUSED:  # what the approval saw: a key then goes to the page
                ctx.found[key] = NOTHING_FOCUSED
            raise
    ctx.found[key] = known
    return known


async def _object_for_selector(ctx: ToolContext, selector: str) -> str:
    found = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"{QUERY}({json.dumps(selector)})",
            "returnByValue": False,
            "objectGroup": ctx.objects,
        },
    )
    if found.get("exceptionDetails"):
        raise ToolError(f"{selector!r} is not a valid CSS selector")
    obj = found.get("result", {})
    if obj.get("subtype") == "null" or "objectId" not in obj:
        raise ToolError(_NO_MATCH.format(selector=selector))
    return str(obj["objectId"])


async def _object_for_ref(ctx: ToolContext, ref: str) -> str:
    tab = ctx.need_tab()
    refs = ctx.state.refs
    target = refs.get(ref)
    if target is None and refs.issued(ref):  # of a document the tab no longer shows
        raise ToolError(STALE.format(ref=ref))
    if target is None:
        raise ToolError(
            f"there is no ref {ref!r} for tab {tab.id}; take a snapshot (browser_snapshot) first"
        )
    # A frame in another process is reached through its child session (``child_sessions``).
    session = child_sessions.holder_session(ctx, target.held_id)
    # resolveNode needs the document requested; both reads go out together.
    try:
        loaders, _ = await asyncio.gather(
            frame_loaders(ctx, session),
            ctx.cdp("DOM.getDocument", {"depth": 0}, session=session),
        )
    except CommandFailed:  # its frame went away
        raise ToolError(STALE.format(ref=ref)) from None
    if loaders.get(target.frame_id) != target.loader_id:
        raise ToolError(STALE.format(ref=ref))
    try:
        backend = refs.node_of(ref)
        if backend is None:
            held = await page_outline.element(ctx, next(iter(loaders)), target.held_id)
            if held is None:
                raise ToolError(STALE.format(ref=ref))
            described = await ctx.cdp("DOM.describeNode", {"objectId": held})
            backend = int(described["node"]["backendNodeId"])
            refs.learn_node(ref, backend)
        # The page's own object for it: tools run their scripts in the page's world.
        resolved = await ctx.cdp(
            "DOM.resolveNode",
            {"backendNodeId": backend, "objectGroup": ctx.objects},
            session=session,
        )
    except CommandFailed:
        raise ToolError(STALE.format(ref=ref)) from None
    return str(resolved["object"]["objectId"])


async def frame_loaders(ctx: ToolContext, session: str | None = None) -> dict[str, str]:
    """Every frame's current loader id (which document it shows), the top frame first: the
    tab's, or those of the frame in another process that child ``session`` reaches."""
    tree = await ctx.cdp("Page.getFrameTree", session=session)
    return page_outline.loaders_of(tree["frameTree"])


async def recentre(ctx: ToolContext, located: Located) -> Located:
    """The same element with its centre measured again (after the page scrolled)."""
    x, y = await _centre(ctx, located.object_id)
    return replace(located, x=x, y=y)


async def _centre(ctx: ToolContext, object_id: str) -> tuple[float, float]:
    """The element's centre in the top frame's viewport (iframes included)."""
    quads = await child_sessions.quads(ctx, object_id)
    if not quads:
        raise ToolError("the element has no area on screen; scroll to it or wait for it")
    quad = max(quads, key=_area)
    return sum(quad[0::2]) / 4, sum(quad[1::2]) / 4


def _area(quad: list[float]) -> float:
    xs, ys = quad[0::2], quad[1::2]
    return abs(sum(xs[i] * ys[(i + 1) % 4] - xs[(i + 1) % 4] * ys[i] for i in range(4)) / 2)
