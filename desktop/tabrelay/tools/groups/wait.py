"""browser_wait_for: until text appears or disappears, an element shows, a load state, or a time.

Conditions on the page are checked in the page (every 100 ms) inside one awaited evaluation,
retried when a navigation replaces the document. Cancelling the MCP call stops the wait at
once. A condition not met in time is an error that says what was seen.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Literal

from pydantic import Field, model_validator

from tabrelay.errors import CommandFailed, CommandTimeout, ToolError
from tabrelay.tools.acting.loading import ready_state
from tabrelay.tools.context import TabParams, ToolContext, ToolResult
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script

LoadState = Literal["load", "domcontentloaded", "networkidle"]
NETWORK_QUIET = 0.5  # seconds without requests in flight that count as "idle"

_POLL = script("wait_poll.js")


class WaitParams(TabParams):
    text: str | None = Field(default=None, description="Wait until this text is on the page.")
    text_gone: str | None = Field(default=None, description="Until this text is gone.")
    selector: str | None = Field(default=None, description="Wait until this element is shown.")
    load_state: LoadState | None = Field(default=None, description="Wait for this load state.")
    seconds: float | None = Field(default=None, gt=0, le=60, description="Just wait this long.")
    timeout: float = Field(default=10.0, gt=0, le=120, description="Give up after this long.")

    @model_validator(mode="after")
    def _exactly_one(self) -> WaitParams:
        given = [self.text, self.text_gone, self.selector, self.load_state, self.seconds]
        if sum(value is not None for value in given) != 1:
            raise ValueError("give exactly one of text, text_gone, selector, load_state, seconds")
        return self


async def wait_for(ctx: ToolContext, params: WaitParams) -> ToolResult:
    started = time.monotonic()
    if params.seconds is not None:
        await _sleep(ctx, params.seconds)
        return ToolResult(f"Waited {params.seconds:g} s.")
    if params.load_state is not None:
        await _load_state(ctx, params.load_state, params.timeout)
        what = f"the page reached {params.load_state}"
    else:
        kind, value = next(
            (k, v)
            for k, v in (
                ("text", params.text),
                ("text_gone", params.text_gone),
                ("selector", params.selector),
            )
            if v is not None
        )
        await _condition(ctx, kind, value, params.timeout)
        what = {
            "text": f"{value!r} appeared",
            "text_gone": f"{value!r} is gone",
            "selector": f"{value!r} is shown",
        }[kind]
    return ToolResult(f"Done: {what} after {time.monotonic() - started:.1f} s.")


async def _condition(ctx: ToolContext, kind: str, value: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    await ctx.progress(0, timeout, f"waiting until {kind.replace('_', ' ')} {value!r}")
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        expression = f"{_POLL}({json.dumps(kind)}, {json.dumps(value)}, {int(left * 1000)})"
        try:
            result = await ctx.cdp(
                "Runtime.evaluate",
                {"expression": expression, "awaitPromise": True, "returnByValue": True},
                timeout=left + 5,
            )
        except CommandFailed:
            await asyncio.sleep(0.1)  # the document was replaced mid-wait: check the new one
            continue
        outcome = result.get("result", {}).get("value") or {}
        if outcome.get("error"):
            raise ToolError(f"cannot wait for {value!r}: {page_text(str(outcome['error']))}")
        if outcome.get("met"):
            return
    seen = {
        "text": "the text never appeared",
        "text_gone": "the text is still there",
        "selector": "no such element became visible",
    }[kind]
    raise ToolError(f"waited {timeout:g} s for {value!r}: {seen}")


async def _load_state(ctx: ToolContext, state: LoadState, timeout: float) -> None:
    if state == "networkidle":
        await _network_idle(ctx, timeout)
        return
    ready = "complete" if state == "load" else ("interactive", "complete")
    async with ctx.events("Page.loadEventFired", "Page.domContentEventFired") as events:
        if await ready_state(ctx) in ready:
            return
        wanted = "Page.loadEventFired" if state == "load" else "Page.domContentEventFired"
        try:
            await events.until(lambda e: e.method == wanted, timeout=timeout)
        except CommandTimeout:
            raise ToolError(f"the page did not reach {state} within {timeout:g} s") from None


async def _network_idle(ctx: ToolContext, timeout: float) -> None:
    log = ctx.state.log
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.in_flight() == 0 and time.monotonic() - log.last_network_activity >= NETWORK_QUIET:
            return
        await asyncio.sleep(0.1)
    in_flight = log.in_flight()
    raise ToolError(
        f"the network did not go quiet within {timeout:g} s ({in_flight} requests open)"
    )


async def _sleep(ctx: ToolContext, seconds: float) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        await ctx.progress(seconds - left, seconds, "waiting")
        await asyncio.sleep(min(1.0, left))
