"""What a call will touch, as the person is shown it: the elements its arguments name, and the
site a navigation goes to.

``describe_touches`` describes each element before the call is approved — role and name as
Chrome's accessibility tree has them (what ``browser_snapshot`` showed the agent), a short
excerpt of its text, and its frame from the browser's frame tree — for the approval dialog and
the command log. ``Touches.shown`` takes a small picture of each element on screen, outlines the
elements in the page with a label while the person is asked, and takes the outlines away
afterwards, whatever ends the question. Neither reads what a field holds (it may be a
secret), neither clicks, types or scrolls, and neither fails a call: an element that cannot
be described says so. Every step is bounded. ``capture_targets`` takes the locators of the
elements a recorded call names, before it runs, for the recipe.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from tabrelay.errors import TabrelayError
from tabrelay.protocol.urls import InvalidUrl, parse_url
from tabrelay.recipes.model import Locator
from tabrelay.tools.context import ToolContext, settle
from tabrelay.tools.groups.actions import PressKeyParams
from tabrelay.tools.groups.navigation import NavigateParams
from tabrelay.tools.groups.tabs import NewTabParams
from tabrelay.tools.page import child_sessions, effect_facts, locators, page_outline
from tabrelay.tools.page.effect_facts import Facts
from tabrelay.tools.page.refs import FOCUSED, held_of, node_id_of
from tabrelay.tools.redaction import scrub
from tabrelay.tools.scripts import script
from tabrelay.tools.state.guard import origin_of

STEP_TIMEOUT = 2.0  # seconds for each step (describe, outline, picture): a hung page is skipped
MAX_DESCRIBED = 20  # elements described per call; a form may name a hundred
MAX_PICTURED = 4  # pictures per question
MAX_NAME = 100
MAX_TEXT = 80
MAX_FRAME = 100
PICTURE_SIZE = (360, 220)  # device pixels at most
PICTURE_MARGIN = 24  # CSS pixels of the page around the element
MOSTLY_SHOWN = 0.5  # the share of an element that must be on screen for its picture
MAX_PICTURE_BYTES = 64_000
HIGHLIGHT_ATTRIBUTE = "data-tabrelay-highlight"
# Argument pairs that name one element: a ref or a CSS selector, with a prefix for the drag's.
_PAIRS = (("ref", "selector"), ("source_ref", "source_selector"), ("target_ref", "target_selector"))
_SPACES = re.compile(r"\s+")
# What reading an answer of a shape nobody expected raises (a page's own objects, an old
# browser): the step is skipped and says so, it never fails the call.
_ODD_ANSWERS = (KeyError, IndexError, TypeError, ValueError, AttributeError)

# Runs on the element (Runtime.callFunctionOn). Fields give what labels them, never their
# value; other elements their visible text without what fields inside them hold.
_FACTS = script("target_facts.js")
# Outlines the element in its own document, with a label above it (below at the very top).
# Built with the DOM alone (no innerHTML, no <style>), so strict CSP and Trusted Types pages
# show it too; it removes itself after ``ttl`` ms should the removal never come.
_OUTLINE = script("target_outline.js").replace("ATTRIBUTE", HIGHLIGHT_ATTRIBUTE)
_UNOUTLINE = f"""
function (token) {{
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  for (const host of doc.querySelectorAll('[{HIGHLIGHT_ATTRIBUTE}="' + token + '"]')) host.remove();
}}
"""


@dataclass(frozen=True, slots=True)
class TargetView:
    """One element a call names, as the person sees it: never what a field holds."""

    path: str  # the argument that names it: "ref", "fields.2.ref", "source_selector"
    given: str  # what the agent wrote: "e12" or "#buy"
    action: str  # what the call does to it: "click", "type into"
    role: str = ""
    name: str = ""
    text: str = ""  # a short excerpt; for a field, what labels it
    frame: str = ""  # "main frame" or "frame http://host/path"
    kind: str = ""  # an input's type when the role does not say it: "password", "email"
    problem: str | None = None  # why it could not be described
    # What the page says on and around it, read in Tabrelay's world: its effect is decided
    # from it (``approval.effects``). Page text: shown as data, never obeyed.
    facts: Facts | None = field(default=None, repr=False, compare=False)
    # A small JPEG of the element in its page, while the question is asked; never logged.
    picture: bytes | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """One line: ``e12: button "Place order", text "Place order", in the main frame``."""
        if self.problem is not None:
            return f"{self.given}: could not be described ({self.problem})"
        parts = [f'{self.role or "element"} "{self.name}"' if self.name else self.role]
        if self.kind:
            parts.append(f"{self.kind} field")
        if self.text and self.text != self.name:
            parts.append(f'text "{self.text}"')
        if self.frame:
            parts.append(f"in the {self.frame}")
        return f"{self.given}: " + ", ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class _Page:
    """The tab the elements live in, and each described element's remote object by path."""

    ctx: ToolContext
    objects: dict[str, str]


@dataclass(frozen=True, slots=True)
class Touches:
    """What one call will touch: the elements its arguments name, and where it goes."""

    targets: tuple[TargetView, ...] = ()
    destination: str | None = None  # navigate, new tab: the origin the guard reads
    unnamed: int = 0  # elements named beyond ``MAX_DESCRIBED``
    page: _Page | None = field(default=None, repr=False, compare=False)

    def summary(self) -> str | None:
        """The command log's text: where the call goes and what it touches, or ``None``."""
        lines = [f"goes to {self.destination}"] if self.destination else []
        lines += [target.describe() for target in self.targets]
        if self.unnamed:
            lines.append(f"and {self.unnamed} more elements")
        return "; ".join(lines) or None

    def scrubbed(self, secret_texts: frozenset[str]) -> Touches:
        """A copy with every secret the page echoed masked (``redaction.scrub``)."""
        if not secret_texts:
            return self
        targets = tuple(
            replace(t, name=scrub(t.name, secret_texts), text=scrub(t.text, secret_texts))
            for t in self.targets
        )
        return replace(self, targets=targets)

    @contextlib.asynccontextmanager
    async def shown(self, *, timeout: float) -> AsyncIterator[tuple[TargetView, ...]]:
        """Outline the elements in the page while the person is asked (about ``timeout``
        seconds at most), and yield them with their pictures.

        The outlines go when this exits — an answer, a timeout, a pause, a cancelled call —
        in a clean-up that a cancellation cannot stop; should even that never reach the page,
        they remove themselves a little after ``timeout``. Nothing here raises but a cancel.
        """
        page = self.page
        if page is None or not page.objects:
            yield self.targets
            return
        token = secrets.token_hex(8)
        marked: list[str] = []  # objects an outline may have reached, noted before it is sent
        try:
            yield await _show(page, self.targets, token, marked, ttl=timeout + STEP_TIMEOUT)
        finally:
            if marked:
                await settle(_unmark(page.ctx, token, marked), page.ctx.background)


def named_elements(
    touches: str | None, params: BaseModel
) -> list[tuple[str, str | None, str | None]]:
    """Each element the arguments of a call name: (argument path, ref, selector), nested fields
    too; none for a tool that touches no element (``ToolSpec.touches``: a selector it waits
    for is a condition, an element that may not exist yet)."""
    return [] if touches is None else list(_named(params, ""))


def _named(params: BaseModel, prefix: str) -> Iterator[tuple[str, str | None, str | None]]:
    values = dict(params)
    for ref_name, selector_name in _PAIRS:
        ref, selector = values.get(ref_name), values.get(selector_name)
        if isinstance(ref, str):
            yield f"{prefix}{ref_name}", ref, None
        elif isinstance(selector, str):
            yield f"{prefix}{selector_name}", None, selector
    for name, value in values.items():
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from _named(item, f"{prefix}{name}.{index}.")


async def capture_targets(
    ctx: ToolContext, touches: str | None, params: BaseModel
) -> dict[str, Locator]:
    """The locators of the elements a recorded call names (``touches``: what it does to them,
    ``ToolSpec.touches``), taken before it runs: ``ref`` (a ref or selector),
    ``source``/``target`` (drag), ``fields.<i>`` (fill form), ``element`` (press key's optional
    target). Empty for a tool that names no element.

    Never raises (but a cancel); bounded by ``locators.CAPTURE_TIMEOUT`` altogether.
    """
    if ctx.tab is None:
        return {}
    named = _recipe_keys(touches, params)
    if not named:
        return {}
    found: dict[str, Locator] = {}
    tasks: dict[str, asyncio.Task[Locator | None]] = {}
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(locators.CAPTURE_TIMEOUT * 1.5):
            async with asyncio.TaskGroup() as group:
                for key, ref, selector in named:
                    tasks[key] = group.create_task(
                        locators.locator_of(ctx, ref=ref, selector=selector)
                    )
    for key, task in tasks.items():
        if task.done() and not task.cancelled() and (locator := task.result()) is not None:
            found[key] = locator
    return found


def _recipe_keys(
    touches: str | None, params: BaseModel
) -> list[tuple[str, str | None, str | None]]:
    """The elements the call names (``named_elements``) under their recipe keys:
    "ref", "source"/"target" (drag), "fields.<i>", and "element" for press_key's target."""
    named = []
    for path, ref, selector in named_elements(touches, params):
        key = path.removesuffix("selector").removesuffix("ref").rstrip("_.") or "ref"
        named.append(("element" if isinstance(params, PressKeyParams) else key, ref, selector))
    return named


def action_of(touches: str, path: str) -> str:
    """What a call does to the element at ``path`` (``touches``: to the elements it names), as
    the label in the page says it ("… wants to click this")."""
    return "drop something onto" if path.startswith("target_") else touches


async def describe_touches(ctx: ToolContext, touches: str | None, params: BaseModel) -> Touches:
    """Describe what a call will touch (``touches``: what its tool does to the elements it
    names, ``ToolSpec.touches``), before it is approved.

    Each element gets at most ``STEP_TIMEOUT`` seconds, all of them together too; one that
    cannot be described says why.

    Raises:
        NavigationBlocked: the call would open a site the guard refuses (asking is pointless).
    """
    destination = await _destination(ctx, params)
    named = named_elements(touches, params)
    if isinstance(params, PressKeyParams) and not named:
        named = [("focused", None, FOCUSED)]  # a key goes where the focus is
    if touches is None or not named or ctx.tab is None:
        return Touches(destination=destination)
    described = named[:MAX_DESCRIBED]
    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(_describe(ctx, path, ref, selector, action_of(touches, path)))
            for path, ref, selector in described
        ]
    results = [task.result() for task in tasks]
    return Touches(
        targets=tuple(view for view, _ in results),
        destination=destination,
        unnamed=len(named) - len(described),
        page=_Page(ctx, {view.path: obj for view, obj in results if obj is not None}),
    )


async def _destination(ctx: ToolContext, params: BaseModel) -> str | None:
    """Where a navigation goes, as the guard reads it (``NavigationBlocked`` if refused)."""
    if isinstance(params, NewTabParams | NavigateParams) and params.url:
        return _site(ctx.guard.check(params.url))
    if not isinstance(params, NavigateParams) or params.action is None or ctx.tab is None:
        return None
    if params.action == "reload":
        return _site(ctx.tab.url)
    try:
        async with asyncio.timeout(STEP_TIMEOUT):
            history = await ctx.cdp("Page.getNavigationHistory")
        index = int(history["currentIndex"]) + (-1 if params.action == "back" else 1)
        entries = history["entries"]
        url = str(entries[index]["url"]) if 0 <= index < len(entries) else None
    # The history is only shown; the tool reads it again and says what is wrong.
    except (TimeoutError, TabrelayError, *_ODD_ANSWERS):
        return None
    return _site(ctx.guard.check(url)) if url else None


def _site(url: str) -> str:
    return origin_of(url) or _short(url, MAX_FRAME)


async def _describe(
    ctx: ToolContext, path: str, ref: str | None, selector: str | None, action: str
) -> tuple[TargetView, str | None]:
    """One element's view and its remote object (``None`` when it could not be described)."""
    view = TargetView(path, ref if ref is not None else str(selector), action)
    try:
        async with asyncio.timeout(STEP_TIMEOUT):
            node = await node_id_of(ctx, ref=ref, selector=selector)
            object_id = node.object_id
            # Three reads of the element that need nothing of each other go out together; all
            # three end before the first one's failure is raised.
            read = await asyncio.gather(
                ctx.cdp(
                    "Accessibility.getPartialAXTree",
                    {"backendNodeId": node.backend, "fetchRelatives": False},
                    session=node.session,
                ),
                ctx.call_on(object_id, _FACTS),
                _frame(ctx, ref, node.session),
                return_exceptions=True,
            )
            for answer in read:
                if isinstance(answer, BaseException):
                    raise answer
            ax, facts, frame = read
        described = _described(view, ax, node.backend, facts, frame)
    except TimeoutError:
        return replace(view, problem="the page did not answer in time"), None
    except TabrelayError as error:
        return replace(view, problem=_short(error.message, 160)), None
    except _ODD_ANSWERS:
        return replace(view, problem="the page answered in an unexpected way"), None
    return replace(
        described, facts=await _effect_facts(ctx, object_id, ref, node.backend)
    ), object_id


def _described(
    view: TargetView, ax: dict[str, Any], backend: int, facts: dict[str, Any], frame: str
) -> TargetView:
    role, name = _role_and_name(ax, backend)
    value = facts.get("result", {}).get("value") or {}
    if not isinstance(value, dict):
        value = {}
    if value.get("holdsFields") or value.get("namedByFields"):
        # A name from contents, labels or aria-labelledby says what the fields there hold.
        name = ""
    kind = str(value.get("type") or "")
    return replace(
        view,
        role=role,
        name=_short(name, MAX_NAME),
        text=_short(str(value.get("text") or ""), MAX_TEXT),
        frame=frame,
        kind=kind if kind not in ("", "text", "submit", "button", "checkbox", "radio") else "",
    )


def _role_and_name(ax: dict[str, Any], backend: int) -> tuple[str, str]:
    nodes = ax.get("nodes") or []
    node = next((n for n in nodes if n.get("backendDOMNodeId") == backend), None)
    if node is None and nodes:
        node = nodes[0]
    if node is None:
        return "", ""
    role = str((node.get("role") or {}).get("value") or "")
    name = str((node.get("name") or {}).get("value") or "")
    return ("" if role in ("none", "generic", "Ignored") else role), name


async def _effect_facts(
    ctx: ToolContext, object_id: str, ref: str | None, backend: int
) -> Facts | None:
    """What the page says around the element, read in Tabrelay's world (where the page's
    scripts cannot change what the DOM answers), in its own ``STEP_TIMEOUT``; None when it
    cannot be read (its effect is then unsure, so the call asks)."""
    try:
        async with asyncio.timeout(STEP_TIMEOUT):
            adopted = await page_outline.adopt(
                ctx, object_id, held=held_of(ctx, ref), backend=backend
            )
            if adopted is None:
                return None
            answer = await ctx.call_on(adopted, effect_facts.FACTS)
    except (TimeoutError, TabrelayError, *_ODD_ANSWERS):
        return None
    return effect_facts.read(answer)


async def _frame(ctx: ToolContext, ref: str | None, session: str | None) -> str:
    """Which frame the element is in, from the browser's frame tree (the page cannot say):
    the tab's, or that of the frame in another process the child ``session`` reaches.

    A selector is looked up in the top document (and its open shadow roots) only.
    """
    if ref is None:
        return "main frame"
    target = ctx.state.refs.get(ref)
    tree = (await ctx.cdp("Page.getFrameTree", session=session))["frameTree"]
    if target is None or (session is None and target.frame_id == tree["frame"]["id"]):
        return "main frame"
    stack: list[dict[str, Any]] = [tree] if session else list(tree.get("childFrames", []))
    while stack:
        node = stack.pop()
        if node["frame"]["id"] == target.frame_id:
            return "frame " + _frame_url(str(node["frame"].get("url", "")))
        stack.extend(node.get("childFrames", []))
    return "frame that is gone"


def _frame_url(url: str) -> str:
    """Origin and path: a query may carry a session or a token, which no log should keep."""
    try:
        parsed = parse_url(url)
    except InvalidUrl:
        return _short(url.split("?", 1)[0].split("#", 1)[0], MAX_FRAME)
    origin = origin_of(url)
    where = f"{origin}{parsed.path}" if origin else f"{parsed.scheme}:{parsed.path}"
    return _short(where, MAX_FRAME)


def _short(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


async def _show(
    page: _Page, targets: tuple[TargetView, ...], token: str, marked: list[str], *, ttl: float
) -> tuple[TargetView, ...]:
    """Picture the first few elements as the page shows them, then outline every one (the
    label an outline carries is often wider than its element: a picture would cut it)."""
    pictured = [t for t in targets if t.path in page.objects][:MAX_PICTURED]
    async with asyncio.TaskGroup() as group:
        pictures = {
            t.path: group.create_task(_picture(page.ctx, page.objects[t.path])) for t in pictured
        }
    async with asyncio.TaskGroup() as group:
        for target in targets:
            object_id = page.objects.get(target.path)
            if object_id is not None:
                label = f"Tabrelay: the agent wants to {target.action} this"
                group.create_task(_mark(page.ctx, object_id, token, label, ttl, marked))
    return tuple(
        replace(t, picture=pictures[t.path].result()) if t.path in pictures else t for t in targets
    )


async def _mark(
    ctx: ToolContext, object_id: str, token: str, label: str, ttl: float, marked: list[str]
) -> None:
    marked.append(object_id)  # before it is sent: a cancel in flight still takes it away
    await _call_on(ctx, object_id, _OUTLINE, token, label, ttl * 1000)


async def _unmark(ctx: ToolContext, token: str, marked: list[str]) -> None:
    """Take the outlines away (best effort: a closed tab or a new page took them already)."""
    async with asyncio.TaskGroup() as group:
        for object_id in dict.fromkeys(marked):
            group.create_task(_call_on(ctx, object_id, _UNOUTLINE, token))


async def _call_on(ctx: ToolContext, object_id: str, function: str, *args: object) -> None:
    """Run ``function`` on the element, bounded; a hung page or a gone tab is no failure."""
    with contextlib.suppress(TimeoutError, TabrelayError):
        async with asyncio.timeout(STEP_TIMEOUT):
            await ctx.call_on(object_id, function, *args)


async def _picture(ctx: ToolContext, object_id: str) -> bytes | None:
    """A small JPEG of the element and a margin around it, as far as it is on screen."""
    try:
        async with asyncio.timeout(STEP_TIMEOUT):
            quads = await child_sessions.quads(ctx, object_id)
            metrics = await ctx.cdp("Page.getLayoutMetrics")
            clip = _clip(quads, metrics)
            if clip is None:
                return None
            shot = await ctx.cdp(
                "Page.captureScreenshot", {"format": "jpeg", "quality": 70, "clip": clip}
            )
        data = base64.b64decode(str(shot["data"]), validate=True)
    # A picture is a nicety: none is shown when the page cannot give one.
    except (TimeoutError, TabrelayError, *_ODD_ANSWERS):
        return None
    return data if 0 < len(data) <= MAX_PICTURE_BYTES else None


def _clip(quads: list[list[float]], metrics: dict[str, Any]) -> dict[str, float] | None:
    """The part of the viewport around the element (CSS pixels of the page), and the scale
    that fits it into ``PICTURE_SIZE``; ``None`` unless the element itself is mostly on
    screen (a picture of its margin alone would show a neighbour as what will be touched)."""
    if not quads:
        return None
    view = metrics["cssVisualViewport"]
    x0, y0, x1, y1 = child_sessions.bounds(quads)
    screen_w, screen_h = float(view["clientWidth"]), float(view["clientHeight"])
    shown_w = min(x1, screen_w) - max(x0, 0.0)
    shown_h = min(y1, screen_h) - max(y0, 0.0)
    area = (x1 - x0) * (y1 - y0)
    shown = max(shown_w, 0.0) * max(shown_h, 0.0)
    if shown <= 0 or shown < MOSTLY_SHOWN * min(area, screen_w * screen_h):
        return None
    left = max(0.0, x0 - PICTURE_MARGIN)
    top = max(0.0, y0 - PICTURE_MARGIN)
    right = min(screen_w, x1 + PICTURE_MARGIN)
    bottom = min(screen_h, y1 + PICTURE_MARGIN)
    width, height = right - left, bottom - top
    if width < 1 or height < 1:
        return None
    layout, device = metrics.get("cssLayoutViewport"), metrics.get("layoutViewport")
    ratio = 1.0
    if layout and device and layout.get("clientWidth"):
        ratio = max(0.25, float(device["clientWidth"]) / float(layout["clientWidth"]))
    scale = min(1.0, PICTURE_SIZE[0] / (width * ratio), PICTURE_SIZE[1] / (height * ratio))
    return {
        "x": left + float(view["pageX"]),
        "y": top + float(view["pageY"]),
        "width": width,
        "height": height,
        "scale": scale,
    }
