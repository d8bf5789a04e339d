"""Tools a page declares for agents (WebMCP, issue 26), listed by ``browser_snapshot`` (the
outline asks for them in its own call, ``page_outline``).

A page registers tools with ``document.modelContext.registerTool`` (Chromium behind
``--enable-features=WebMCP``); Tabrelay's own world asks ``getTools()``, so a page cannot fake
the list by redefining globals of its own world. Every word of a declared tool is the page's
(its name, description, input schema and annotations): all are marked as data. Bounded:
``MAX_TOOLS`` tools, each part cut short, a listing of ``MAX_LISTING`` bytes.
``page_tools.py`` calls one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script

MAX_TOOLS = 50
MAX_LISTING = 8_000  # bytes of the snapshot's list of them

ASK_WAIT = 5.0  # seconds the page is given to list them
# The tools the page declares, as JSON text (names, descriptions and schemas cut short), or
# null when it declares none (or the browser has no WebMCP). The outline asks it alongside.
LIST = script("webmcp_list.js").replace("MAX_TOOLS", str(MAX_TOOLS))


@dataclass(frozen=True, slots=True)
class PageTool:
    name: str
    description: str
    schema: str
    read_only: bool  # as the page says


def parse(value: object) -> list[PageTool]:
    """The tools in what ``LIST`` answered (JSON text, or null for none); none when the answer
    is not that (a page that broke it)."""
    try:
        listed = json.loads(value) if isinstance(value, str) else []
        return [
            PageTool(str(t["name"]), str(t["description"]), str(t["schema"]), t["readOnly"] is True)
            for t in listed
            if isinstance(t, dict) and t.get("name")
        ]
    except (ValueError, KeyError, TypeError):
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
