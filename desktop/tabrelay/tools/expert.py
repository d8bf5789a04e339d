"""browser_cdp: one raw Chrome DevTools Protocol command, for experts who turned it on.

Off unless the person enables it in the settings; always asks (never "always allow"); the CDP
denylist (``protocol/cdp.py``) still applies, in the app and again in the extension.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.budget import fit_text
from tabrelay.tools.context import TabParams, ToolContext, ToolResult


class CdpParams(TabParams):
    method: str = Field(description="A CDP method such as DOM.getDocument or Page.reload.")
    params: dict[str, Any] = Field(default_factory=dict, description="Its parameters.")


async def cdp(ctx: ToolContext, params: CdpParams) -> ToolResult:
    if not ctx.settings.enable_cdp_tool:
        raise ToolError(
            "browser_cdp is turned off; the person can enable it in Tabrelay's settings"
        )
    result = await ctx.cdp(params.method, params.params)
    fitted = fit_text(
        json.dumps(result, ensure_ascii=False, indent=1),
        ctx.budget_bytes,
        continuation=lambda _: "ask for less (for example a smaller depth)",
    )
    return ToolResult(fitted.text, data={"truncated": fitted.truncated})
