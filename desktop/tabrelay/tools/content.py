"""Reading a page's content as text (browser_get_content).

This first version returns the visible text of the page or of a selector; markdown, HTML and
boilerplate stripping build on it.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.budget import fit_text
from tabrelay.tools.context import TabParams, ToolContext, ToolResult


class ContentParams(TabParams):
    format: Literal["text"] = Field(default="text", description="What to return.")
    selector: str | None = Field(
        default=None, description="CSS selector of the part to read; default: the whole page."
    )
    offset: int = Field(default=0, ge=0, description="Skip this many bytes (to continue).")


async def get_content(ctx: ToolContext, params: ContentParams) -> ToolResult:
    target = (
        f"document.querySelector({json.dumps(params.selector)})"
        if params.selector
        else "document.body"
    )
    result = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"(() => {{ const el = {target}; return el ? el.innerText : null; }})()",
            "returnByValue": True,
        },
    )
    text = result.get("result", {}).get("value")
    if text is None:
        raise ToolError(
            f"nothing matches the selector {params.selector!r}"
            if params.selector
            else "the page has no body yet; wait for it to load"
        )
    tab = ctx.need_tab()
    header = f"# {tab.title or '(no title)'}\n{tab.url}\n\n"
    body = text.encode("utf-8")[params.offset :].decode("utf-8", errors="ignore")
    fitted = fit_text(
        body,
        ctx.budget_bytes - len(header.encode("utf-8")),
        continuation=lambda kept: (
            f"call again with offset={params.offset + kept}, or pass a selector to read one part"
        ),
    )
    return ToolResult(
        header + fitted.text,
        data={"url": tab.url, "title": tab.title, "truncated": fitted.truncated},
    )
