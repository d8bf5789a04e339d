"""browser_page_tool: call a tool the page declares (WebMCP, issue 26; ``webmcp.py`` lists them
for ``browser_snapshot``).

Tabrelay's own world runs it with ``executeTool``, so a page cannot fake it by redefining
globals of its own world. What it answers is the page's and marked as data, and its hints
never lower an approval (a page that says a tool only reads may be wrong or lying): a call is
an acting call whose effect is unknown, asked about under any grant (``approval/effects.py``).
Bounded: an answer of ``MAX_RESULT`` characters, a call of ``CALL_TIMEOUT`` seconds.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from tabrelay.errors import BrowserError, ToolError
from tabrelay.tools.acting.aftermath import following
from tabrelay.tools.context import TabParams, ToolContext, ToolResult, exception_text
from tabrelay.tools.page import page_outline, webmcp
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script

MAX_RESULT = 20_000
CALL_TIMEOUT = 30.0

# Runs the declared tool ``name`` with the JSON text ``input``: {result} (as text) or {error}.
_CALL = script("webmcp_call.js").replace("MAX_RESULT", str(MAX_RESULT))


class PageToolParams(TabParams):
    name: str = Field(description="The tool's name, as browser_snapshot lists it.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its input.")


async def call(ctx: ToolContext, params: PageToolParams) -> ToolResult:
    try:
        given = json.dumps(params.arguments)
    except (TypeError, ValueError):
        raise ToolError("'arguments' must be JSON") from None
    world = await page_outline.opened_world(ctx)
    async with following(ctx) as watch:
        answer = await ctx.cdp(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": _CALL,
                "executionContextId": world,
                "arguments": [{"value": params.name}, {"value": given}],
                "awaitPromise": True,
                "returnByValue": True,
            },
            timeout=CALL_TIMEOUT,
        )
        if answer.get("exceptionDetails"):
            raise ToolError(f"the call failed ({exception_text(answer['exceptionDetails'])})")
        value = answer.get("result", {}).get("value") or {}
        error = value.get("error") if isinstance(value, dict) else "none"
        if error == "none":
            raise ToolError("this page declares no tools (WebMCP is off, or it registered none)")
        if error == "unknown":
            names = ", ".join(t.name for t in await _declared(ctx, world)) or "none"
            raise ToolError(
                f"the page declares no tool {page_text(params.name[:100])} "
                f"(it declares: {page_text(names)})"
            )
        if error == "threw":
            raise ToolError(
                f"the page's tool {page_text(params.name[:100])} threw: "
                f"{page_text(str(value.get('message', '')))}"
            )
        text = str(value.get("result", ""))
        cut = " (cut short)" if len(text) > MAX_RESULT else ""
        followed = await watch.after()
    name = page_text(params.name[:100])
    return ToolResult(
        f"The page's tool {name} answered{cut}: {page_text(text[:MAX_RESULT])}", followed=followed
    )


async def _declared(ctx: ToolContext, world: int) -> list[webmcp.PageTool]:
    """The tools the page declares, asked in Tabrelay's ``world``; none when it cannot say."""
    try:
        answer = await ctx.cdp(
            "Runtime.evaluate",
            {"expression": webmcp.LIST, "contextId": world, "awaitPromise": True,
             "returnByValue": True},
            timeout=webmcp.ASK_WAIT,
        )  # fmt: skip
    except BrowserError:  # no answer in time (a busy page), or no document
        return []
    return webmcp.parse(answer.get("result", {}).get("value"))
