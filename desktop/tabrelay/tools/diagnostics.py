"""Diagnostics: run JavaScript in the page (browser_evaluate).

Console messages and network requests join this group with the page-understanding issue.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.budget import fit_text
from tabrelay.tools.context import TabParams, ToolContext, ToolResult


class EvaluateParams(TabParams):
    expression: str = Field(
        description="A JavaScript expression evaluated in the page, e.g. "
        "`document.title` or `(async () => { ... })()`. Its value must be JSON-serializable."
    )
    await_promise: bool = Field(default=True, description="Wait for a returned promise.")
    timeout: float = Field(default=10.0, gt=0, le=60, description="Seconds before giving up.")


async def evaluate(ctx: ToolContext, params: EvaluateParams) -> ToolResult:
    result = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": params.expression,
            "returnByValue": True,
            "awaitPromise": params.await_promise,
            "userGesture": True,
            "timeout": int(params.timeout * 1000),
        },
        timeout=params.timeout + 5,
    )
    details = result.get("exceptionDetails")
    if details:
        raise ToolError(f"the script threw: {_exception_text(details)}")
    value = result.get("result", {})
    text = _render(value)
    fitted = fit_text(
        text,
        ctx.budget_bytes,
        continuation=lambda _: "return a smaller value (slice or summarize it in the script)",
    )
    return ToolResult(fitted.text, data={"type": value.get("type"), "truncated": fitted.truncated})


def _render(remote: dict[str, Any]) -> str:
    kind = remote.get("type")
    if kind == "undefined":
        return "undefined"
    if "value" in remote:
        return json.dumps(remote["value"], ensure_ascii=False)
    if "unserializableValue" in remote:  # NaN, Infinity, -0, bigint
        return str(remote["unserializableValue"])
    return str(remote.get("description", kind))


def _exception_text(details: dict[str, Any]) -> str:
    exception = details.get("exception", {})
    text = exception.get("description") or details.get("text") or "an exception"
    return str(text).splitlines()[0][:500]
