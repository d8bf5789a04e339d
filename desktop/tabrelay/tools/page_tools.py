"""Tools a page declares for agents (WebMCP, issue 26): listed by ``browser_snapshot``, called by
``browser_page_tool``.

A page registers tools with ``document.modelContext.registerTool`` (Chromium behind
``--enable-features=WebMCP``); Tabrelay's own world asks ``getTools()`` and runs one with
``executeTool``, so a page cannot fake the list by redefining globals of its own world. Every
word of a declared tool is the page's: its name, description, input schema and annotations, and
what it answers, are marked as data, and its hints never lower an approval (a page that says a
tool only reads may be wrong or lying): a call is an acting call whose effect is unknown, asked
about under any grant (``approval/effects.py``). Bounded: ``MAX_TOOLS`` tools, each part cut
short, an answer of ``MAX_RESULT`` characters, a call of ``CALL_TIMEOUT`` seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from tabrelay.errors import BrowserError, ToolError
from tabrelay.tools import page_outline
from tabrelay.tools.aftermath import PAGE_FIELDS, following
from tabrelay.tools.context import TabParams, ToolContext, ToolResult, exception_text
from tabrelay.tools.results import page_text

MAX_TOOLS = 50
MAX_RESULT = 20_000
MAX_LISTING = 8_000  # bytes of the snapshot's list of them
MAX_LISTING = 8_000  # bytes of the snapshot's list of them
CALL_TIMEOUT = 30.0

# The tools the page declares, as JSON text (names, descriptions and schemas cut short), or
# null when it declares none (or the browser has no WebMCP).
_LIST = r"""
(async () => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function') return null;
  const cut = (text, n) => String(text ?? '').slice(0, n);
  const tools = await context.getTools();
  return JSON.stringify(Array.from(tools).slice(0, MAX_TOOLS).map((tool) => {
    let schema = '';
    try { schema = JSON.stringify(tool.inputSchema ?? {}); } catch (error) { schema = ''; }
    const hints = tool.annotations || {};
    return {
      name: cut(tool.name, 100),
      description: cut(tool.description, 500),
      schema: cut(schema, 1000),
      readOnly: hints.readOnlyHint === true,
    };
  }));
})()
""".replace("MAX_TOOLS", str(MAX_TOOLS))

# Runs the declared tool ``name`` with the JSON text ``input``: {result} (as text) or {error}.
_CALL = r"""
(async (name, input) => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function') return {error: 'none'};
  const tool = Array.from(await context.getTools()).find((t) => t.name === name);
  if (!tool) return {error: 'unknown'};
  try {
    const answer = await context.executeTool(tool, JSON.parse(input));
    const text = typeof answer === 'string' ? answer : JSON.stringify(answer ?? null);
    return {result: String(text).slice(0, MAX_RESULT + 1)};
  } catch (error) {
    return {error: 'threw', message: String(error && error.message || error).slice(0, 300)};
  }
})
""".replace("MAX_RESULT", str(MAX_RESULT))


@dataclass(frozen=True, slots=True)
class PageTool:
    name: str
    description: str
    schema: str
    read_only: bool  # as the page says


async def declared(ctx: ToolContext) -> list[PageTool]:
    """The tools the tab's page declares (none when it declares none, or cannot be asked)."""
    try:
        tree = await ctx.cdp("Page.getFrameTree")
        answer = await ctx.cdp(
            "Runtime.evaluate",
            {
                "expression": _LIST,
                "contextId": await page_outline.world(ctx, tree["frameTree"]["frame"]["id"]),
                "awaitPromise": True,
                "returnByValue": True,
            },
            timeout=5.0,
        )
        value = answer.get("result", {}).get("value")
        listed = json.loads(value) if isinstance(value, str) else []
        return [
            PageTool(str(t["name"]), str(t["description"]), str(t["schema"]), t["readOnly"] is True)
            for t in listed
            if isinstance(t, dict) and t.get("name")
        ]
    # Unasked for want of an answer in time (a busy page) or of a document: the snapshot goes on.
    except (BrowserError, ValueError, KeyError, TypeError):
        return []


def listing(tools: list[PageTool]) -> str:
    """The section ``browser_snapshot`` adds for them (the page's words marked), at most
    ``MAX_LISTING`` bytes."""
    lines: list[str] = []
    size = 0
    for tool in tools:
        line = (
            f"- {page_text(tool.name)}: {page_text(tool.description)} "
            f"(input: {page_text(tool.schema or '{}')})"
            + (" (the page says it only reads)" if tool.read_only else "")
        )
        size += len(line.encode())
        if size > MAX_LISTING:
            lines.append(f"({len(tools) - len(lines)} more not shown)")
            break
        lines.append(line)
    return (
        "\nTools this page declares (browser_page_tool calls one; the person is asked each "
        "time):\n" + "\n".join(lines)
    )


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
            names = ", ".join(t.name for t in await declared(ctx)) or "none"
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
    note = followed.note()
    name = page_text(params.name[:100])
    said = f"The page's tool {name} answered{cut}: {page_text(text[:MAX_RESULT])}"
    return ToolResult(
        f"{said} {note}" if note else said, data=followed.data(), page_fields=PAGE_FIELDS
    )
