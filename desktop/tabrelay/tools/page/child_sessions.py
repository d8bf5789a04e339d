"""Frames of a tab that run in other processes (cross-site frames), reached through child sessions.

Chrome runs a frame of another site in a process of its own; the tab's debugger session does not
reach into it. ``Target.setAutoAttach`` (flat) gives each such frame a child session of the tab's,
named by a session id that rides along on commands (``Browser.cdp(session_id=…)``) and events
(``HubEvent.session_id``). ``attach`` turns that on in a session once (the tab's, then each
child's, for frames nested in frames) and learns the children it has; the observer
(``observer.py``) learns the ones that come and go later. Both keep them in the tab's
``SessionState``, which forgets them when the tab's own session ends.

An object of a child session is only good in that session: ``ToolContext.cdp`` marks its id
with the session's and sends a command that names it there (``object_ids``), so everything that
acts on an element reaches it wherever it lives. Coordinates of a child session are its frame's
own; ``Placement`` is where a frame's viewport is drawn in the viewport around it (moved, and
scaled or turned by a CSS transform of its <iframe>), and ``quads`` puts an element's box in the
tab's viewport through each frame around it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tabrelay.errors import CommandFailed, EventsClosed
from tabrelay.tools.state.object_ids import session_of
from tabrelay.tools.state.tab_state import ATTACHED, AUTO_ATTACH, DETACHED, FrameWorlds

if TYPE_CHECKING:
    from tabrelay.tools.context import ToolContext

MAX_DEPTH = 8  # frames in frames of other sites, deeper than any real page nests them


async def attach(ctx: ToolContext, session: str | None = None) -> None:
    """Have Chrome attach to the frames of other processes under ``session`` (the tab's own:
    None) and learn them, once per session.

    Raises:
        CommandFailed: the session is gone.
    """
    state = ctx.state.session
    key = session or ""
    if key in state.auto_attached:
        return
    browser, tab = ctx.need_browser(), ctx.need_tab()
    # Chrome tells of the frames it attaches to before it answers: listen from before asking.
    heard = ctx.hub.subscribe(
        maxlen=1000,
        accept=lambda e: (
            e.kind == "cdp"
            and e.browser_id == browser.id
            and e.tab_id == tab.id
            and e.method in (ATTACHED, DETACHED)
        ),
    )
    try:
        await ctx.cdp("Target.setAutoAttach", AUTO_ATTACH, session=session)
        state.auto_attached.add(key)
        with contextlib.suppress(EventsClosed):
            for event in heard.drain():
                state.learn(event.method, event.params, event.session_id)
    finally:
        heard.close()


def session_for(ctx: ToolContext, frame: str) -> str | None:
    """The child session that reaches ``frame``: its own, that of the frame of another process
    it is in (read there: ``within``), or None (the tab's own)."""
    state = ctx.state.session
    return state.children.get(frame) or state.within.get(frame)


def holder_frame(ctx: ToolContext, held: int | None) -> str | None:
    """The frame of another origin whose own world holds ``held`` (None: the top frame's)."""
    return None if held is None else ctx.state.worlds.frame(held // FrameWorlds.SPAN)


def holder_session(ctx: ToolContext, held: int) -> str | None:
    """The child session that reaches the world holding ``held`` (None: the tab's own)."""
    frame = holder_frame(ctx, held)
    return None if frame is None else session_for(ctx, frame)


def frame_of(ctx: ToolContext, session: str) -> str:
    """The frame the child ``session`` reaches.

    Raises:
        CommandFailed: it went away.
    """
    frame = next((f for f, s in ctx.state.session.children.items() if s == session), None)
    if frame is None:
        raise CommandFailed("the frame went away")
    return frame


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a frame's viewport is drawn in the viewport of the frame holding its <iframe>: the
    point its top left is drawn at, and what one CSS pixel of the frame along x and along y is
    there (a transform of the <iframe> scales, turns or skews them; without one, (1, 0) and
    (0, 1))."""

    left: float
    top: float
    along_x: tuple[float, float] = (1.0, 0.0)
    along_y: tuple[float, float] = (0.0, 1.0)

    @classmethod
    def of(cls, model: dict[str, Any]) -> Placement:
        """From the <iframe>'s ``DOM.getBoxModel``: its quads are drawn (transformed); its
        width and height are its own (untransformed) border box's."""
        content, border = model["content"], model["border"]
        width, height = float(model.get("width") or 0), float(model.get("height") or 0)
        if width <= 0 or height <= 0:
            return cls(float(content[0]), float(content[1]))
        return cls(
            float(content[0]),
            float(content[1]),
            ((border[2] - border[0]) / width, (border[3] - border[1]) / width),
            ((border[6] - border[0]) / height, (border[7] - border[1]) / height),
        )

    def out(self, x: float, y: float) -> tuple[float, float]:
        """A point of the frame's viewport, in the viewport around it."""
        (ax, ay), (bx, by) = self.along_x, self.along_y
        return self.left + x * ax + y * bx, self.top + x * ay + y * by

    def into(self, x: float, y: float) -> tuple[float, float]:
        """A point of the viewport around the frame, in the frame's viewport."""
        (ax, ay), (bx, by) = self.along_x, self.along_y
        det = ax * by - bx * ay
        if abs(det) < 1e-9:  # drawn flat: nothing in it can be reached
            return float("inf"), float("inf")
        dx, dy = x - self.left, y - self.top
        return (dx * by - dy * bx) / det, (dy * ax - dx * ay) / det

    def scale(self) -> tuple[float, float]:
        """How long one CSS pixel of the frame is drawn, along x and along y."""
        return abs(complex(*self.along_x)), abs(complex(*self.along_y))


async def _around(ctx: ToolContext, session: str) -> list[tuple[str | None, int, Placement]]:
    """The frame the child ``session`` reaches and the frames of other processes around it,
    innermost first: the session holding each one's <iframe> (None: the tab's own), that
    <iframe>'s backend node id, and where the frame is drawn in that session's viewport.

    Raises:
        CommandFailed: a frame or its owner is gone.
    """
    around: list[tuple[str | None, int, Placement]] = []
    for _ in range(MAX_DEPTH):
        frame = frame_of(ctx, session)
        parent = ctx.state.session.parents.get(frame)
        backend = await owner_of(ctx, frame, parent)
        around.append((parent, backend, Placement.of(await _box(ctx, backend, parent))))
        if parent is None:
            return around
        session = parent
    raise CommandFailed("the frame is nested too deep")


async def owner_of(ctx: ToolContext, frame: str, parent: str | None = None) -> int:
    """The backend node id of ``frame``'s <iframe>, in the session ``parent`` holding it."""
    owner = await ctx.cdp("DOM.getFrameOwner", {"frameId": frame}, session=parent)
    return int(owner["backendNodeId"])


async def _box(ctx: ToolContext, backend: int, session: str | None) -> dict[str, Any]:
    """The box model of the node ``backend`` (an <iframe>) in ``session``."""
    answer = await ctx.cdp("DOM.getBoxModel", {"backendNodeId": backend}, session=session)
    return dict(answer["model"])


async def scroll_into_view(
    ctx: ToolContext, session: str, box: tuple[float, float, float, float]
) -> None:
    """Scroll the frames around the frame the child ``session`` reaches until ``box`` (x, y,
    width, height in that frame's viewport) is in the tab's view: each frame's <iframe> within
    the frame holding it, innermost first (an element scrolled into view in its own frame can
    still be out of the page's view).

    Raises:
        CommandFailed: a frame or its owner is gone.
    """
    x, y, width, height = box
    for _ in range(MAX_DEPTH):
        frame = frame_of(ctx, session)
        parent = ctx.state.session.parents.get(frame)
        backend = await owner_of(ctx, frame, parent)
        model = await _box(ctx, backend, parent)
        # The rect is in the <iframe>'s own border box (untransformed); the frame's viewport
        # starts at its content box.
        place = Placement.of(model)
        border = Placement(model["border"][0], model["border"][1], place.along_x, place.along_y)
        inside = border.into(model["content"][0], model["content"][1])
        rect = {"x": x + inside[0], "y": y + inside[1], "width": max(width, 1.0),
                "height": max(height, 1.0)}  # fmt: skip
        await ctx.cdp(
            "DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend, "rect": rect}, session=parent
        )
        if parent is None:
            return
        place = Placement.of(await _box(ctx, backend, parent))  # where the scroll left it
        (x, y), (wide, high) = place.out(x, y), place.scale()
        width, height = width * wide, height * high
        session = parent
    raise CommandFailed("the frame is nested too deep")


async def reaches(ctx: ToolContext, session: str, x: float, y: float) -> bool:
    """Whether the point ``x``, ``y`` of the tab's viewport, inside the frame ``session``
    reaches, falls on that frame's <iframe> in every frame around it: nothing of the page
    around the frame (an overlay, a clipping box) is over it there.

    Raises:
        CommandFailed: a frame or its owner is gone.
    """
    for parent, owner, place in reversed(await _around(ctx, session)):
        if (await hit(ctx, x, y, parent)).get("backendNodeId") != owner:
            return False
        x, y = place.into(x, y)
    return True


async def hit(ctx: ToolContext, x: float, y: float, session: str | None = None) -> dict[str, Any]:
    """What a pointer at ``x``, ``y`` of the viewport of ``session`` (None: the tab's own) hits,
    as ``DOM.getNodeForLocation`` answers (past what has pointer-events none).

    Raises:
        CommandFailed: the page is gone.
    """
    # Hit-tested at a point of the document: where the viewport is scrolled to counts.
    scrolled = (await ctx.cdp("Page.getLayoutMetrics", session=session))["cssVisualViewport"]
    return dict(
        await ctx.cdp(
            "DOM.getNodeForLocation",
            {"x": round(x + scrolled["pageX"]), "y": round(y + scrolled["pageY"])},
            session=session,
        )
    )


async def quads(ctx: ToolContext, object_id: str) -> list[list[float]]:
    """The element's content quads in the tab's viewport, wherever its frame runs.

    Raises:
        CommandFailed: it is gone.
    """
    found = (await ctx.cdp("DOM.getContentQuads", {"objectId": object_id})).get("quads") or []
    session = session_of(object_id)
    if session is None or not found:
        return list(found)
    places = [place for _, _, place in await _around(ctx, session)]

    def out(x: float, y: float) -> list[float]:
        for place in places:
            x, y = place.out(x, y)
        return [x, y]

    return [[v for i in range(0, 8, 2) for v in out(quad[i], quad[i + 1])] for quad in found]


def bounds(quads: list[list[float]]) -> tuple[float, float, float, float]:
    """The box around ``quads`` (not empty): left, top, right, bottom."""
    xs = [v for quad in quads for v in quad[0::2]]
    ys = [v for quad in quads for v in quad[1::2]]
    return min(xs), min(ys), max(xs), max(ys)
