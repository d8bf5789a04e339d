"""browser_navigate: open a URL, go back or forward, reload — and wait until the page has
loaded (``loading.py``). What an acting tool's click or key leads to is ``aftermath.py``'s.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from tabrelay.errors import ToolError
from tabrelay.tools.acting.loading import WaitUntil, open_url, until_loaded
from tabrelay.tools.context import TabParams, ToolContext, ToolResult


class NavigateParams(TabParams):
    url: str | None = Field(default=None, description="The http(s) URL to open.")
    action: Literal["back", "forward", "reload"] | None = Field(
        default=None, description="Instead of a URL: go back, forward, or reload."
    )
    wait_until: WaitUntil = Field(
        default="load", description="Return after this event ('none': at once)."
    )
    timeout: float = Field(default=30.0, gt=0, le=120, description="Seconds to wait for it.")

    @model_validator(mode="after")
    def _one_of(self) -> NavigateParams:
        if (self.url is None) == (self.action is None):
            raise ValueError("give either 'url' or 'action' (back, forward, reload)")
        return self


async def navigate(ctx: ToolContext, params: NavigateParams) -> ToolResult:
    if params.url is not None:
        return await open_url(ctx, params.url, wait_until=params.wait_until, timeout=params.timeout)
    assert params.action is not None
    if params.action == "reload":
        return await until_loaded(
            ctx, lambda: ctx.cdp("Page.reload"), params.wait_until, params.timeout
        )
    history = await ctx.cdp("Page.getNavigationHistory")
    index = int(history["currentIndex"]) + (-1 if params.action == "back" else 1)
    entries: list[dict[str, Any]] = history["entries"]
    if not 0 <= index < len(entries):
        where = "previous" if params.action == "back" else "next"
        raise ToolError(f"there is no {where} page in tab {ctx.need_tab().id}'s history")
    ctx.guard.check(entries[index]["url"])
    return await until_loaded(
        ctx,
        lambda: ctx.cdp("Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]}),
        params.wait_until,
        params.timeout,
    )
