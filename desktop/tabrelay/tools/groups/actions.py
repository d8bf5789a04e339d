"""Pointer and keyboard tools: click, hover, drag, scroll, press a key, answer a dialog.

Input is real (``input_events.py``): mouse and key events at the element's centre after
``refs.locate`` scrolled it into view and checked it; keys go to what has the focus. A click
that opens a JavaScript dialog returns at once and says so, instead of waiting on the blocked
page. Otherwise each action follows what it started (``aftermath.following``: a new page, a
route, a new tab) and its answer says where the tab is now.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Literal

from pydantic import Field

from tabrelay.errors import CommandTimeout, TabrelayError, ToolError
from tabrelay.tools.acting.aftermath import after_action, following
from tabrelay.tools.acting.input_events import click_at, focus, mouse, press
from tabrelay.tools.acting.keys import MODIFIERS, parse_combo
from tabrelay.tools.context import TabParams, Target, TargetParams, ToolContext, ToolResult
from tabrelay.tools.page.refs import Located, focus_kept, locate, recentre
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script
from tabrelay.tools.state import object_ids

Modifier = Literal["Alt", "Control", "Meta", "Shift"]
Button = Literal["left", "right", "middle"]
DRAG_EVENT = "Input.dispatchDragEvent"


class ClickParams(TargetParams):
    button: Button = Field(default="left", description="Mouse button.")
    double: bool = Field(default=False, description="Double-click.")
    modifiers: list[Modifier] = Field(default_factory=list, description="Keys held down.")


async def click(ctx: ToolContext, params: ClickParams) -> ToolResult:
    target = await locate(ctx, ref=params.ref, selector=params.selector, action="click")
    mask = _mask(params.modifiers)
    elsewhere = object_ids.session_of(target.object_id) is not None  # a frame's own process
    async with following(ctx, download=target.download, its_events=not elsewhere) as watch:
        dialog = await click_at(
            ctx,
            target.x,
            target.y,
            button=params.button,
            clicks=2 if params.double else 1,
            modifiers=mask,
        )
        verb = "Double-clicked" if params.double else "Clicked"
        return await after_action(
            f"{verb} {params.ref or params.selector} ({target.description}).", watch, dialog
        )


class HoverParams(TargetParams):
    pass


async def hover(ctx: ToolContext, params: HoverParams) -> ToolResult:
    target = await locate(ctx, ref=params.ref, selector=params.selector, action="hover")
    async with following(ctx) as watch:
        await mouse(ctx, "mouseMoved", target.x, target.y)
        return await after_action(
            f"The pointer is over {params.ref or params.selector} ({target.description}).",
            watch,
            None,
        )


class DragParams(TabParams):
    source_ref: str | None = Field(default=None, description="Ref of what to drag.")
    source_selector: str | None = Field(default=None, description="Or its CSS selector.")
    target_ref: str | None = Field(default=None, description="Ref of where to drop it.")
    target_selector: str | None = Field(default=None, description="Or its CSS selector.")


async def drag(ctx: ToolContext, params: DragParams) -> ToolResult:
    source = await locate(
        ctx, ref=params.source_ref, selector=params.source_selector, action="drag"
    )
    target = await locate(
        ctx, ref=params.target_ref, selector=params.target_selector, action="hover"
    )
    source = await recentre(ctx, source)  # bringing the target into view may have scrolled
    await ctx.cdp("Input.setInterceptDrags", {"enabled": True})
    try:
        async with ctx.events("Input.dragIntercepted") as events, following(ctx) as watch:
            await mouse(ctx, "mouseMoved", source.x, source.y)
            await mouse(ctx, "mousePressed", source.x, source.y, button="left", clickCount=1)
            # Let go of a drag cut short before the button: an intercepted HTML5 drag ignores
            # the mouse until it is dropped or cancelled.
            ctx.held_input["drag"] = (DRAG_EVENT, _drag_event("dragCancel", source, _NO_DATA))
            steps = 8
            for step in range(1, steps + 1):
                x = source.x + (target.x - source.x) * step / steps
                y = source.y + (target.y - source.y) * step / steps
                await mouse(ctx, "mouseMoved", x, y, button="left")
            try:
                intercepted = await events.until(lambda e: True, timeout=0.3)
            except CommandTimeout:
                intercepted = None
            if intercepted is not None:  # an HTML5 drag: drop its data on the target
                data = intercepted.params["data"]
                ctx.held_input["drag"] = (DRAG_EVENT, _drag_event("dragCancel", target, data))
                for kind in ("dragEnter", "dragOver", "drop"):
                    await ctx.cdp(DRAG_EVENT, _drag_event(kind, target, data))
            ctx.held_input.pop("drag", None)
            await mouse(ctx, "mouseReleased", target.x, target.y, button="left", clickCount=1)
            done = f"Dragged {source.description} onto {target.description}."
            return await after_action(done, watch, None)
    except BaseException:
        await ctx.release_input()  # while drags are still intercepted
        raise
    finally:
        await ctx.settle(_stop_intercepting_drags(ctx))


async def _stop_intercepting_drags(ctx: ToolContext) -> None:
    # The person's own drags in this tab work again (the tab may be gone: nothing to undo).
    with contextlib.suppress(TabrelayError):
        await ctx.cdp("Input.setInterceptDrags", {"enabled": False})


def _drag_event(kind: str, at: Located, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "x": at.x, "y": at.y, "data": data}


_NO_DATA: dict[str, Any] = {"items": [], "dragOperationsMask": 1}


class ScrollParams(TabParams, Target):
    direction: Literal["up", "down", "top", "bottom", "to_element", "to_text"] = Field(
        description="up/down a screen, top/bottom, or to an element or text."
    )
    text: str | None = Field(default=None, description="For to_text.")
    amount: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Pixels for up/down (default: most of a screen).",
    )


_SCROLL_TO_TEXT = script("scroll_to_text.js")
_POSITION = (
    "JSON.stringify([Math.round(scrollY), Math.round(document.scrollingElement.scrollHeight), "
    "Math.round(innerHeight)])"
)


async def scroll(ctx: ToolContext, params: ScrollParams) -> ToolResult:
    direction = params.direction
    if direction in ("up", "down"):
        metrics = (await ctx.cdp("Page.getLayoutMetrics"))["cssVisualViewport"]
        amount = params.amount or int(metrics["clientHeight"] * 0.8)
        x, y = metrics["clientWidth"] / 2, metrics["clientHeight"] / 2
        delta = amount if direction == "down" else -amount
        await mouse(ctx, "mouseWheel", x, y, deltaX=0, deltaY=delta)
    elif direction in ("top", "bottom"):
        end = "0" if direction == "top" else "document.scrollingElement.scrollHeight"
        await _evaluate(ctx, f"window.scrollTo(0, {end})")
    elif direction == "to_element":
        if params.ref is None and params.selector is None:
            raise ToolError("to_element needs 'ref' or 'selector'")
        await locate(ctx, ref=params.ref, selector=params.selector, action="hover")
    else:
        if not params.text:
            raise ToolError("to_text needs 'text'")
        found = await _evaluate(ctx, f"{_SCROLL_TO_TEXT}({json.dumps(params.text)})")
        if found is None:
            raise ToolError(f"the text {params.text!r} is not on the page")
    top, height, view = json.loads(await _evaluate(ctx, _POSITION))
    percent = 100 if height <= view else round(100 * top / (height - view))
    return ToolResult(
        f"Scrolled {direction.replace('_', ' ')}: now at {top} of {height} px ({percent}% down).",
        data={"scroll_y": top, "page_height": height, "viewport_height": view},
    )


class PressKeyParams(TabParams, Target):
    key: str = Field(description="E.g. Enter, Tab, ArrowDown, Backspace, Control+a, Shift+Tab.")
    repeat: int = Field(default=1, ge=1, le=50, description="Times to press it.")


async def press_key(ctx: ToolContext, params: PressKeyParams) -> ToolResult:
    modifiers, key = parse_combo(params.key)
    if params.ref is not None or params.selector is not None:
        target = await locate(ctx, ref=params.ref, selector=params.selector, action="type")
        await focus(ctx, target, params.ref or params.selector or "")
    else:
        await focus_kept(ctx)
    async with following(ctx) as watch:
        dialog = None
        for _ in range(params.repeat):
            dialog = await press(ctx, key, modifiers)
            if dialog is not None:
                break
        times = f" {params.repeat} times" if params.repeat > 1 else ""
        return await after_action(f"Pressed {params.key}{times}.", watch, dialog)


class DialogParams(TabParams):
    accept: bool = Field(description="True: OK; false: Cancel.")
    prompt_text: str | None = Field(default=None, description="The answer, for a prompt().")
    secret: bool = Field(
        default=False,
        description="The answer is a secret: never stored or shown.",
    )


# A prompt() that asks for one of these gets an answer that is never stored or shown.
_SECRET_PROMPT = re.compile(
    r"pass(word|code|phrase)|\bpin\b|one[- ]time|verification code|\botp\b|\bcv[cv]2?\b|"
    r"security code",
    re.IGNORECASE,
)


async def clear_dialog(ctx: ToolContext, params: DialogParams) -> frozenset[str]:
    """``prompt_text`` is shown unless hidden by the caller or the prompt asks for a secret."""
    dialog = ctx.state.log.dialog
    if params.secret or dialog is None or _SECRET_PROMPT.search(dialog.message):
        return frozenset()
    return frozenset({"prompt_text"})


async def handle_dialog(ctx: ToolContext, params: DialogParams) -> ToolResult:
    tab = ctx.need_tab()
    log = ctx.state.log
    if log.dialog is None:
        raise ToolError(f"no dialog is open in tab {tab.id}")
    dialog = log.dialog
    request: dict[str, Any] = {"accept": params.accept}
    if params.prompt_text is not None:
        if dialog.kind != "prompt":
            raise ToolError(f"the open dialog is a {dialog.kind}, which takes no text")
        request["promptText"] = params.prompt_text
    async with following(ctx) as watch:
        await ctx.cdp("Page.handleJavaScriptDialog", request)
        log.dialog = None
        answer = "OK" if params.accept else "Cancel"
        # The page goes on from its dialog: it may leave (a "Leave page?") or open another.
        return await after_action(
            f"Answered the {dialog.kind} {page_text(repr(dialog.message))} with {answer}.",
            watch,
            None,
        )


async def _evaluate(ctx: ToolContext, expression: str) -> Any:
    result = await ctx.cdp("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    if result.get("exceptionDetails"):
        raise ToolError("the page refused the scroll (a script error)")
    return result.get("result", {}).get("value")


def _mask(modifiers: list[Modifier]) -> int:
    mask = 0
    for name in modifiers:
        mask |= MODIFIERS[name]
    return mask
