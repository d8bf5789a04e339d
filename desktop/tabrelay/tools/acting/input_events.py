"""Real input: mouse and keyboard events (``Input.dispatchMouseEvent``,
``Input.dispatchKeyEvent``) sent to the tab, and the keyboard focus they go to.

A click or key that opens a JavaScript dialog returns at once with the dialog instead of
waiting on the blocked page (``_until_dialog``). Every press is noted in
``ToolContext.held_input`` until its release is answered, so a call that fails or is cancelled
half-way never leaves a button or key held down (the runner lets go).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from tabrelay.errors import CommandFailed, TabrelayError, ToolError
from tabrelay.tools.acting.keys import MODIFIERS, Key, parse_combo
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page.refs import Located
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script

DIALOG_EVENT = "Page.javascriptDialogOpening"
MOUSE_EVENT = "Input.dispatchMouseEvent"
KEY_EVENT = "Input.dispatchKeyEvent"
# Editing shortcuts Chrome runs as commands rather than from the raw key (Puppeteer does this too).
_EDIT_COMMANDS = {
    (2, "a"): "selectAll", (4, "a"): "selectAll", (2, "c"): "copy", (4, "c"): "copy",
    (2, "v"): "paste", (4, "v"): "paste", (2, "x"): "cut", (4, "x"): "cut",
    (2, "z"): "undo", (4, "z"): "undo",
}  # fmt: skip


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


# --- primitives ------------------------------------------------------------------------------


# Why the element does not have the keyboard focus after DOM.focus, or null when it has it.
_FOCUS_PROBLEM = script("focus_problem.js")


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
    await mouse(ctx, "mouseMoved", x, y, modifiers=modifiers)
    for count in range(1, clicks + 1):
        base = {"button": button, "clickCount": count, "modifiers": modifiers}
        await mouse(ctx, "mousePressed", x, y, **base)
        dialog = await _until_dialog(ctx, mouse(ctx, "mouseReleased", x, y, **base))
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


async def mouse(ctx: ToolContext, kind: str, x: float, y: float, **extra: Any) -> None:
    """One mouse event at (x, y) in the tab's viewport; a pressed button is noted as held."""
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
