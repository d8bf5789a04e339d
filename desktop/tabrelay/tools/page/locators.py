"""Locators that survive a re-render: describe an element as a recipe ``Locator`` when a step
runs, and find the element a locator names again later (replay), as a ref every tool takes.

The page scripts here compute an element's ARIA role and accessible name the way Playwright's
``get_by_role`` and Chrome's accessibility tree do for the common controls (HTML-AAM, accname),
its label, placeholder, test id, visible text, a CSS path and the path of iframes down to its
document. A way is kept only if it names exactly this element at capture time. Nothing here
reads what a field holds (its value may be a secret). A page script cannot see across origins
(the script answers ``{crossOrigin: true}`` there): an element of a frame of another site is
described in that frame's own world, behind the path of iframes down to it (``locator_of``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tabrelay.errors import CommandFailed, TabrelayError, ToolError
from tabrelay.recipes.model import Locator
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import child_sessions, page_outline
from tabrelay.tools.page.refs import frame_loaders, held_of, object_for
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.page_scripts import LABELS_OF, SAFE_DOM
from tabrelay.tools.state.tab_state import RefTarget

CAPTURE_TIMEOUT = 2.0  # seconds for one element's locator; a hung page gives none
POLL_INTERVAL = 0.2  # between looks while find waits for the element
LOOK_TIMEOUT = 3.0  # one look at the page while finding
MAX_NEARBY = 5

# Helpers every locator script shares: role, accessible name, label, text, CSS path, frames,
# and the ways to count what a locator's fields name in a document. ``budget`` bounds the work
# on huge pages: past its deadline a count answers "unknown" (-1), and an unknown is never one.
_HELPERS = (
    script("locator_helpers.js")
    .replace("LABELS_OF", LABELS_OF.strip())
    .replace("SAFE_DOM", SAFE_DOM.strip())
)

# ``(element, msBudget) => fields``: the locator of an element as model.Locator's fields (only
# the ways that name it alone), or ``{crossOrigin: true}``. Demonstrations run it in their world.
LOCATOR_SCRIPT = script("locator_of.js").replace("HELPERS\n", _HELPERS)

# ``(locator, msBudget) => answer`` in the top document: the one element the first way that
# names exactly one names, or a JSON string saying how many each way named and what is near.
_FIND_SCRIPT = script("find_locator.js").replace("HELPERS\n", _HELPERS)

_DESCRIBE = f"function (msBudget) {{ return ({LOCATOR_SCRIPT})(this, msBudget); }}"
# ``(frames) => index``: the first of the ``frames`` path (from this world's document) whose
# document this world cannot see (a frame of another site), -1 when it sees them all, -2 when
# one is not there.
_CROSSING = script("frame_crossing.js").replace("HELPERS\n", _HELPERS)
_FRAME_ELEMENT = script("frame_element.js").replace("HELPERS\n", _HELPERS)


class TargetMissing(ToolError):
    """A locator named no single element in time: what was looked for, how, and what is near."""

    title = "Element not found"


async def locator_of(
    ctx: ToolContext, *, ref: str | None = None, selector: str | None = None
) -> Locator | None:
    """The locator of the element a ref or selector names, as it is now; ``None`` when it cannot
    be said (no such element, a page that does not answer in time). An element of a frame of
    another site is described in that frame, behind the path of iframes down to it.

    Never raises (but a cancel), and is bounded (``CAPTURE_TIMEOUT``).
    """
    try:
        async with asyncio.timeout(CAPTURE_TIMEOUT):
            # Described in Tabrelay's world, which walks closed shadow roots too.
            held = held_of(ctx, ref)
            object_id = await page_outline.adopt(
                ctx, await object_for(ctx, ref=ref, selector=selector), held=held
            )
            if object_id is None:
                return None
            locator = await _described(ctx, object_id)
            holder = child_sessions.holder_frame(ctx, held)
            if locator is None or holder is None:
                return locator
            above = await _frames_down_to(ctx, holder)
            if above is None:
                return None
            frames = [*above, *locator.frames]
            return Locator.model_validate({**locator.model_dump(), "frames": frames})
    # A locator is a nicety of recording: a step without one is still recorded by the caller.
    except (TimeoutError, TabrelayError, KeyError, TypeError, ValueError):  # ValidationError too
        return None


async def _described(ctx: ToolContext, object_id: str) -> Locator | None:
    answer = await ctx.call_on(object_id, _DESCRIBE, int(CAPTURE_TIMEOUT * 400))
    return locator_from(answer.get("result", {}).get("value"))


async def _frames_down_to(ctx: ToolContext, frame: str) -> list[str] | None:
    """The path of iframes from the top document to (and with) ``frame``, a frame of another
    origin read in a world of its own: its <iframe> described in the frame that holds it (in
    the parent's child session when ``frame`` runs in a process of its own), that frame's path
    first."""
    state = ctx.state.session
    # Its <iframe> is in the session its parent is reached through.
    parent = state.parents.get(frame) if frame in state.children else state.within.get(frame)
    owner = await child_sessions.owner_of(ctx, frame, parent)
    element = await ctx.resolve(owner, await page_outline.opened_world(ctx, parent), parent)
    if element is None:
        return None
    iframe = await _described(ctx, element)
    if iframe is None:
        return None
    if parent is None:
        return [*iframe.frames, iframe.css]
    above = await _frames_down_to(ctx, child_sessions.frame_of(ctx, parent))
    return None if above is None else [*above, *iframe.frames, iframe.css]


def locator_from(value: Any) -> Locator | None:
    """A ``Locator`` from what ``LOCATOR_SCRIPT`` answered, or ``None`` when it is not one."""
    if not isinstance(value, dict) or value.get("crossOrigin") or not value.get("css"):
        return None
    fields = {k: value[k] for k in Locator.model_fields if value.get(k) not in (None, "")}
    if fields.get("name") is not None and fields.get("role") is None:
        fields.pop("name")
    try:
        return Locator.model_validate(fields)
    except ValidationError:
        return None


async def find(ctx: ToolContext, locator: Locator, *, timeout: float = 10.0) -> str:
    """The ref of the element ``locator`` names, minted in the tab's refs as a snapshot's are.

    Tries the ways in ``STRATEGIES`` order; the first that names exactly one element (or one
    visible element) wins. Until one does, looks again every ``POLL_INTERVAL`` for ``timeout``
    seconds, as acting tools wait for their element.

    Raises:
        TargetMissing: nothing named one element in time (the message says what was looked
            for, how each way fared and what the page offers nearby).
        TabrelayError: the tab went away or the page cannot be read.
    """
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    while True:
        left = deadline - time.monotonic()
        budget_ms = int(max(100.0, min(1000.0, left * 1000 / 2)))
        found: dict[str, Any] = {}
        where = None
        try:
            async with asyncio.timeout(LOOK_TIMEOUT):
                where = await _world_under(ctx, locator.frames)
                if where is None:
                    last = {"frame": True}
                else:
                    world, rest = where
                    wanted = {**locator.model_dump(mode="json"), "frames": rest}
                    found = await ctx.cdp(
                        "Runtime.evaluate",
                        {
                            "expression": f"({_FIND_SCRIPT})({json.dumps(wanted)}, {budget_ms})",
                            "contextId": world.context,
                            "returnByValue": False,
                            "objectGroup": ctx.objects,
                        },
                        session=world.session,
                    )
        except (TimeoutError, CommandFailed):
            found = {}  # a look that took too long, or a page between documents: look again
        result = found.get("result", {})
        if result.get("subtype") == "node" and result.get("objectId") and where is not None:
            ref = await _mint(ctx, str(result["objectId"]), *where)
            if ref is not None:
                return ref
        elif isinstance(result.get("value"), str):
            with contextlib.suppress(ValueError):
                last = json.loads(result["value"])
        if time.monotonic() + POLL_INTERVAL >= deadline:
            raise TargetMissing(_missing(locator, last, timeout))
        await asyncio.sleep(POLL_INTERVAL)


@dataclass(frozen=True, slots=True)
class _World:
    """Tabrelay's world in one frame: its execution context, the child session it is reached
    through (None: the tab's own), and the frame whose world it is (None: the top frame's)."""

    context: int
    session: str | None
    frame: str | None


async def _world_under(ctx: ToolContext, frames: list[str]) -> tuple[_World, list[str]] | None:
    """Where to look for an element under the iframe path ``frames``: Tabrelay's world in the
    deepest frame of another origin on that path (through its child session when it runs in
    another process; the top frame's if there is none), and the rest of the path from there;
    None when a frame on it is not there.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    where, rest = _World(await page_outline.opened_world(ctx), None, None), list(frames)
    for _ in range(child_sessions.MAX_DEPTH):
        crossing = await ctx.cdp(
            "Runtime.evaluate",
            {
                "expression": f"({_CROSSING})({json.dumps(rest)})",
                "contextId": where.context,
                "returnByValue": True,
            },
            session=where.session,
        )
        at = crossing.get("result", {}).get("value")
        if at == -1:
            return where, rest
        if not isinstance(at, int) or at < 0:
            return None
        frame = await _frame_shown(ctx, where, rest[: at + 1])
        if frame is None:
            return None
        await child_sessions.attach(ctx, where.session)
        # In a process of its own, through its child session; else in the same session.
        session = ctx.state.session.children.get(frame, where.session)
        tree = (await ctx.cdp("Page.getFrameTree", session=session))["frameTree"]
        node = page_outline.frame_node(tree, frame)
        if node is None or ctx.guard.refusal(str(node["frame"].get("url", ""))) is not None:
            return None  # gone, or a site agents may not use: nothing of it is acted on
        context = await page_outline.opened_world(ctx, session, frame=frame)
        where, rest = _World(context, session, frame), rest[at + 1 :]
    return None


async def _frame_shown(ctx: ToolContext, where: _World, frames: list[str]) -> str | None:
    """The id of the frame the last iframe of the path ``frames`` shows, looked up in the world
    ``where``; None when it is not there."""
    owner = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({_FRAME_ELEMENT})({json.dumps(frames)})",
            "contextId": where.context,
            "returnByValue": False,
            "objectGroup": ctx.objects,
        },
        session=where.session,
    )
    owner_id = owner.get("result", {}).get("objectId")
    if not owner_id:
        return None
    frame = (await ctx.cdp("DOM.describeNode", {"objectId": owner_id}))["node"].get("frameId")
    return str(frame) if frame else None


async def _mint(ctx: ToolContext, object_id: str, where: _World, frames: list[str]) -> str | None:
    """A ref for the element found in the world ``where`` under the rest of the iframe path
    ``frames`` (``None``: its frame went away meanwhile; look again)."""
    loaders = await frame_loaders(ctx, where.session)
    if frames:
        frame = await _frame_shown(ctx, where, frames)
    else:
        frame = where.frame or next(iter(loaders))
    if not frame or frame not in loaders:
        return None
    held = await page_outline.held_id(ctx, object_id, where.frame)
    if held is None:
        return None
    return ctx.state.refs.assign(RefTarget(held, frame, loaders[frame]))


def _missing(locator: Locator, last: dict[str, Any], timeout: float) -> str:
    if last.get("frame"):
        how = f"its frame ({' > '.join(locator.frames)}) is not on the page, or is of another site"
    else:
        counts = dict((str(w), int(n)) for w, n in last.get("tried", []) if isinstance(n, int))
        tried = []
        for way, value in locator.strategies():
            shown = f'{value} "{locator.name}"' if way == "role" and locator.name else value
            n = counts.get(way, 0)
            said = "none" if n == 0 else (f"{n} elements" if n < 50 else "50 or more elements")
            tried.append(f"{way} {json.dumps(shown, ensure_ascii=False)}: {said}")
        how = "tried " + "; ".join(tried)
        if last.get("over"):
            how += " (the page is too big to look through in full)"
    nearby = [
        f"{n.get('role')} {json.dumps(n.get('name') or '', ensure_ascii=False)}"
        for n in last.get("nearby", [])[:MAX_NEARBY]
        if isinstance(n, dict)
    ]
    offers = (
        "the page offers nearby: " + page_text(", ".join(nearby)) if nearby else "nothing alike"
    )
    # The recipe's locator was recorded from a page: its names are the page's words too.
    return (
        f"could not find {page_text(locator.describe())} within {timeout:g} s "
        f"({page_text(how)}); {offers}"
    )
