"""Pointer and keyboard tools: click, hover, drag, scroll, press a key, answer a dialog.

Input is real: ``Input.dispatchMouseEvent`` and ``Input.dispatchKeyEvent`` at the element's
centre after ``refs.locate`` scrolled it into view and checked it; keys go to what has the
focus (``focus`` says what keeps it elsewhere). A click that opens a JavaScript dialog returns
at once and says so, instead of waiting on the blocked page. Otherwise each action follows what
it started (``aftermath.following``: a new page, a route, a new tab) and its answer says where
the tab is now. Every press is noted in ``ToolContext.held_input`` until its release is
answered, so a call that fails or is cancelled half-way never leaves a button or key held down
(the runner lets go).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Coroutine
from typing import Any, Literal

from pydantic import Field, model_validator

from tabrelay.errors import CommandFailed, CommandTimeout, TabrelayError, ToolError
from tabrelay.tools import object_ids
from tabrelay.tools.aftermath import PAGE_FIELDS, ActionWatch, following
from tabrelay.tools.context import Params, TabParams, ToolContext, ToolResult
from tabrelay.tools.keys import MODIFIERS, Key, parse_combo
from tabrelay.tools.refs import Located, locate, recentre
from tabrelay.tools.results import page_text

Modifier = Literal["Alt", "Control", "Meta", "Shift"]
Button = Literal["left", "right", "middle"]
DIALOG_EVENT = "Page.javascriptDialogOpening"
MOUSE_EVENT = "Input.dispatchMouseEvent"
DRAG_EVENT = "Input.dispatchDragEvent"
KEY_EVENT = "Input.dispatchKeyEvent"
# Editing shortcuts Chrome runs as commands rather than from the raw key (Puppeteer does this too).
_EDIT_COMMANDS = {
    (2, "a"): "selectAll", (4, "a"): "selectAll", (2, "c"): "copy", (4, "c"): "copy",
    (2, "v"): "paste", (4, "v"): "paste", (2, "x"): "cut", (4, "x"): "cut",
    (2, "z"): "undo", (4, "z"): "undo",
}  # fmt: skip


class Target(Params):
    ref: str | None = Field(default=None, description="From browser_snapshot.")
    selector: str | None = Field(default=None, description="Or a CSS selector.")


class TargetParams(TabParams, Target):
    @model_validator(mode="after")
    def _one_target(self) -> TargetParams:
        if (self.ref is None) == (self.selector is None):
            raise ValueError("give either 'ref' (from browser_snapshot) or 'selector'")
        return self


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


async def after_action(text: str, watch: ActionWatch, dialog: dict[str, Any] | None) -> ToolResult:
    """An acting tool's answer: what it did, and where that left the tab — after waiting for
    the page it started to load — or the dialog that now blocks the page."""
    if dialog is not None:
        opened = {"kind": str(dialog.get("type", "")), "message": str(dialog.get("message", ""))}
        return ToolResult(
            text + dialog_note(dialog),
            data={"navigated": False, "dialog": opened},
            page_fields=PAGE_FIELDS,
        )
    followed = await watch.after()
    note = followed.note()
    return ToolResult(
        f"{text} {note}" if note else text, data=followed.data(), page_fields=PAGE_FIELDS
    )


class HoverParams(TargetParams):
    pass


async def hover(ctx: ToolContext, params: HoverParams) -> ToolResult:
    target = await locate(ctx, ref=params.ref, selector=params.selector, action="hover")
    async with following(ctx) as watch:
        await _mouse(ctx, "mouseMoved", target.x, target.y)
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
            await _mouse(ctx, "mouseMoved", source.x, source.y)
            await _mouse(ctx, "mousePressed", source.x, source.y, button="left", clickCount=1)
            # Let go of a drag cut short before the button: an intercepted HTML5 drag ignores
            # the mouse until it is dropped or cancelled.
            ctx.held_input["drag"] = (DRAG_EVENT, _drag_event("dragCancel", source, _NO_DATA))
            steps = 8
            for step in range(1, steps + 1):
                x = source.x + (target.x - source.x) * step / steps
                y = source.y + (target.y - source.y) * step / steps
                await _mouse(ctx, "mouseMoved", x, y, button="left")
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
            await _mouse(ctx, "mouseReleased", target.x, target.y, button="left", clickCount=1)
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


_SCROLL_TO_TEXT = r"""
((needle) => {
  const lower = needle.toLowerCase();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.toLowerCase().includes(lower) && node.parentElement
        && node.parentElement.getClientRects().length) {
      node.parentElement.scrollIntoView({block: 'center', behavior: 'instant'});
      return node.parentElement.innerText.trim().slice(0, 120);
    }
  }
  return null;
})
"""
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
        await _mouse(ctx, "mouseWheel", x, y, deltaX=0, deltaY=delta)
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
    async with following(ctx) as watch:
        dialog = None
        for _ in range(params.repeat):
            dialog = await press(ctx, key, modifiers)
            if dialog is not None:
                break
        times = f" {params.repeat} times" if params.repeat > 1 else ""
        return await after_action(f"Pressed {params.key}{times}.", watch, dialog)


async def press(ctx: ToolContext, key: Key, modifiers: int = 0) -> dict[str, Any] | None:
    """Press (and release) one key with modifiers held; the dialog it opened, if any."""
    held = [name for name, bit in MODIFIERS.items() if modifiers & bit]
    for name in held:
        await _key(ctx, "rawKeyDown", parse_combo(name)[1], modifiers)
    command = _EDIT_COMMANDS.get((modifiers & ~8, key.key.lower()))
    printable = key.text and not modifiers & ~8  # Shift alone still types
    down: dict[str, Any] = {}
    if command:
        down["commands"] = [command]
    dialog = await _until_dialog(
        ctx, _key(ctx, "keyDown" if printable else "rawKeyDown", key, modifiers, **down)
    )
    if dialog is None:
        await _key(ctx, "keyUp", key, modifiers)
    for name in reversed(held):
        await _key(ctx, "keyUp", parse_combo(name)[1], 0)
    return dialog


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


# --- primitives ------------------------------------------------------------------------------


# Why the element does not have the keyboard focus after DOM.focus, or null when it has it.
_FOCUS_PROBLEM = r"""
function () {
  const describe = (el) => {
    if (!el || !el.tagName) return 'nothing';
    let text = el.tagName.toLowerCase();
    if (el.id) text += '#' + el.id;
    const said = (el.innerText || '').replace(/\s+/g, ' ').trim();
    return said ? `${text} "${said.length > 60 ? said.slice(0, 59) + '…' : said}"` : text;
  };
  // Asked of the element itself: the focus inside a shadow root (closed ones too, which this
  // world cannot walk down to) is found from where it is.
  if (this.matches(':focus-within')) return null;
  const doc = this.ownerDocument;
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) {
    active = active.shadowRoot.activeElement;
  }
  let modal = null;
  try { modal = doc.querySelector('dialog:modal'); } catch (error) { modal = null; }
  if (modal && !modal.contains(this)) return {why: 'modal', by: describe(modal)};
  const inert = this.closest('[inert]');
  if (inert) return {why: 'inert', by: describe(inert)};
  return {why: 'elsewhere', by: active === doc.body ? 'the page' : describe(active)};
}
"""


async def focus(ctx: ToolContext, target: Located, what: str) -> None:
    """Give ``target`` the keyboard focus.

    Raises:
        ToolError: it cannot take the focus, saying what keeps it (a modal dialog, an inert
            region, another element).
    """
    named = f"{what} ({target.description})"
    # Not focusable (now): what keeps it is looked for below.
    with contextlib.suppress(CommandFailed):
        await ctx.cdp("DOM.focus", {"objectId": target.object_id})
    answer = await ctx.call_on(target.object_id, _FOCUS_PROBLEM)
    problem = answer.get("result", {}).get("value")
    if not isinstance(problem, dict):
        return
    by = page_text(str(problem.get("by", "something")))
    match problem.get("why"):
        case "modal":
            raise ToolError(
                f"{named} cannot take the keyboard: the modal dialog {by} is open over the page; "
                "answer or close it first"
            )
        case "inert":
            raise ToolError(f"{named} takes no input now: it is inside {by}, which is inert")
        case _:
            raise ToolError(
                f"{named} did not take the keyboard focus (it stayed on {by}), so nothing can "
                "be typed there; click it first, or check that it is where text goes"
            )


async def click_at(
    ctx: ToolContext,
    x: float,
    y: float,
    *,
    button: str = "left",
    clicks: int = 1,
    modifiers: int = 0,
) -> dict[str, Any] | None:
    """Move to (x, y) and click; the JavaScript dialog the click opened, if any."""
    await _mouse(ctx, "mouseMoved", x, y, modifiers=modifiers)
    for count in range(1, clicks + 1):
        base = {"button": button, "clickCount": count, "modifiers": modifiers}
        await _mouse(ctx, "mousePressed", x, y, **base)
        dialog = await _until_dialog(ctx, _mouse(ctx, "mouseReleased", x, y, **base))
        if dialog is not None:
            return dialog
    return None


async def _until_dialog(
    ctx: ToolContext, command: Coroutine[Any, Any, None]
) -> dict[str, Any] | None:
    """Await an input command, unless the page opens a JavaScript dialog first.

    The input event is only acknowledged after its handlers ran, and a handler blocked on
    alert() or confirm() waits for an answer: the command then keeps running in the background
    (bounded by the command timeout) and the dialog is returned. Whatever else happens — an
    error, the tab closing, the call being cancelled — neither task outlives this function.
    """
    async with ctx.events(DIALOG_EVENT) as events:
        sent = asyncio.ensure_future(command)
        # The command's own timeout bounds this wait: whichever comes first ends it.
        opened = asyncio.ensure_future(events.until(lambda e: True, timeout=3600))
        keep_sent = False
        try:
            await asyncio.wait({sent, opened}, return_when=asyncio.FIRST_COMPLETED)
            if sent.done():
                sent.result()
                return None
            event = opened.result()
            keep_sent = True
            ctx.background.add(sent)
            sent.add_done_callback(_forget(ctx.background))
            return dict(event.params)
        finally:
            opened.cancel()
            if not keep_sent:
                sent.cancel()
            # Collect what was cancelled (or failed) so no task is left unretrieved, even when
            # this call is being cancelled itself.
            await ctx.settle(_collect(opened, *(() if keep_sent else (sent,))))


async def _collect(*tasks: asyncio.Future[Any]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


def _forget(tasks: set[asyncio.Future[Any]]) -> Any:
    def done(task: asyncio.Future[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            with contextlib.suppress(TabrelayError):
                task.result()

    return done


def dialog_note(dialog: dict[str, Any] | None) -> str:
    if dialog is None:
        return ""
    kind, message = dialog.get("type", "dialog"), dialog.get("message", "")
    return (
        f" The page opened a {kind} dialog: {page_text(repr(message))}. Answer it with "
        "browser_handle_dialog before anything else."
    )


async def _mouse(ctx: ToolContext, kind: str, x: float, y: float, **extra: Any) -> None:
    event = {"type": kind, "x": x, "y": y, **extra}
    held = f"mouse:{extra.get('button', 'none')}"
    if kind == "mousePressed":
        release = {**event, "type": "mouseReleased", "clickCount": extra.get("clickCount", 1)}
        ctx.held_input[held] = (MOUSE_EVENT, release)
    await ctx.cdp(MOUSE_EVENT, event)
    if kind == "mouseReleased":
        ctx.held_input.pop(held, None)


async def _key(ctx: ToolContext, kind: str, key: Key, modifiers: int, **extra: Any) -> None:
    event: dict[str, Any] = {
        "type": kind,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
        "modifiers": modifiers,
        **extra,
    }
    if kind == "keyDown" and key.text:
        event["text"] = event["unmodifiedText"] = key.text
    held = f"key:{key.code or key.key}"
    if kind in ("keyDown", "rawKeyDown"):
        release = {
            k: v for k, v in event.items() if k not in ("text", "unmodifiedText", "commands")
        }
        ctx.held_input[held] = (KEY_EVENT, {**release, "type": "keyUp", "modifiers": 0})
    await ctx.cdp(KEY_EVENT, event)
    if kind == "keyUp":
        ctx.held_input.pop(held, None)


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
