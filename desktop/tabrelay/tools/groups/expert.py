"""browser_cdp: one raw Chrome DevTools Protocol command, for experts who turned it on.

Off unless the person enables it in the settings; always asks (never "always allow"); the CDP
denylist (``protocol/cdp.py``) still applies, in the app and again in the extension. It cannot
take the navigation guard apart: the Fetch domain is the guard's (it holds the tab's loads), the
Target domain holds the frames of other sites Tabrelay guards, and a URL it navigates to passes
the guard first.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.context import Reading, TabParams, ToolContext, ToolResult


class CdpParams(TabParams):
    method: str = Field(description="A CDP method such as DOM.getDocument or Page.reload.")
    params: dict[str, Any] = Field(default_factory=dict, description="Its parameters.")


async def clear_nothing(ctx: ToolContext, params: CdpParams) -> frozenset[str]:
    """Text a raw input event types (``Input.insertText``, a key's ``text``) is never shown:
    nothing here says which field it goes to."""
    return frozenset()


async def cdp(ctx: ToolContext, params: CdpParams) -> ToolResult:
    if not ctx.settings.enable_cdp_tool:
        raise ToolError(
            "browser_cdp is turned off; the person can enable it in Tabrelay's settings"
        )
    if params.method.startswith("Fetch."):
        raise ToolError(
            "the Fetch domain is how Tabrelay's navigation guard holds a tab's loads; "
            "browser_cdp may not use it"
        )
    if params.method.startswith("Target."):
        raise ToolError(
            "the Target domain is how Tabrelay reaches a page's frames of other sites (and "
            "guards their loads); browser_cdp may not use it"
        )
    command = dict(params.params)
    if params.method == "Page.navigate":
        command["url"] = ctx.guard.check(str(command.get("url", "")))
    # Raw: to the tab's own session, the params as given (no frame's object routing).
    result = await ctx.need_browser().cdp(ctx.need_tab().id, params.method, command)
    return ToolResult(
        "",
        reading=Reading(
            json.dumps(result, ensure_ascii=False, indent=1),
            lambda _: "ask for less (for example a smaller depth)",
        ),
    )
