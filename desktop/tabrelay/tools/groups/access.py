"""browser_request_access: one approval for a whole task (DESIGN §6, issue 25).

The agent says what the task is for, the sites it will use, the kinds of action it needs and for
how long; the person sees one dialog, may change the sites and the duration, and approves or
not (``ToolContext.access``, the approval gate's plan question). Routine actions on those sites
then run without more questions until the plan ends; consequential ones still ask, and so does
any other site. Reading never needs a plan.
"""

from __future__ import annotations

import time

from pydantic import Field, field_validator

from tabrelay.errors import ToolError
from tabrelay.tools.context import Action, Params, ToolContext, ToolResult
from tabrelay.tools.state.guard import origin_of

MAX_PURPOSE = 500


class RequestAccessParams(Params):
    purpose: str = Field(description="The task, for the person.")
    sites: list[str] = Field(min_length=1, max_length=20, description="e.g. https://shop.example")
    actions: list[Action] | None = Field(default=None, description="Default: all.")
    minutes: int = Field(default=60, ge=1, le=480)

    @field_validator("purpose")
    @classmethod
    def _plain_sentence(cls, purpose: str) -> str:
        purpose = " ".join(purpose.split())
        if not purpose:
            raise ValueError("say what the task is for: the person decides by it")
        if len(purpose) > MAX_PURPOSE:
            raise ValueError(f"the purpose is {len(purpose)} characters; at most {MAX_PURPOSE}")
        return purpose


async def request_access(ctx: ToolContext, params: RequestAccessParams) -> ToolResult:
    if ctx.access is None:
        raise ToolError("plans cannot be asked for here (no approval gate)")
    sites = []
    for site in params.sites:
        origin = origin_of(site if "://" in site else f"https://{site}")
        if origin is None:
            raise ToolError(f"{site!r} is not a site (e.g. https://shop.example)")
        ctx.guard.check(origin)  # a site agents may not use is never part of a plan
        sites.append(origin)
    granted = await ctx.access(
        purpose=params.purpose,
        sites=sites,
        actions=params.actions or [],
        minutes=params.minutes,
    )
    until = time.strftime("%H:%M", time.localtime(float(granted["expires_at"])))
    return ToolResult(
        f"The person approved the plan until {until}: {', '.join(granted['actions'])} on "
        f"{', '.join(granted['sites'])} run without asking. Paying, sending, deleting and "
        "other consequential actions still ask; so does any other site."
    )
