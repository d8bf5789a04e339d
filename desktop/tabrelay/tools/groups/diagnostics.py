"""Diagnostics: console messages and network requests of a tab, and running JavaScript.

Messages and requests come from the tab's event stream (``observer.TabObserver`` keeps them in
the tab's ``TabState``), kept since the tab was first used; browser_evaluate runs an
expression in the page.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Literal

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.context import Reading, TabParams, ToolContext, ToolResult
from tabrelay.tools.results import page_text


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
        with_tab=True,  # its one command: the tab after it comes with the answer (the guard's look)
    )
    details = result.get("exceptionDetails")
    if details:
        raise ToolError(f"the script threw: {page_text(_exception_text(details))}")
    value = result.get("result", {})
    return ToolResult(
        "",
        data={"type": value.get("type")},
        reading=Reading(
            _render(value),
            lambda _: "return a smaller value (slice or summarize it in the script)",
        ),
    )


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


class ConsoleParams(TabParams):
    level: Literal["all", "error", "warning", "info", "log", "debug"] = Field(
        default="all", description="Only this level (error includes uncaught exceptions)."
    )
    limit: int = Field(default=100, ge=1, le=500, description="The newest this many.")
    clear: bool = Field(default=False, description="Forget them after reading.")


async def console_messages(ctx: ToolContext, params: ConsoleParams) -> ToolResult:
    log = ctx.state.log
    messages = [m for m in log.console if params.level in ("all", m.level)][-params.limit :]
    lines = [
        f"{_clock(m.time)} [{m.level}] {m.text}" + (f"  ({m.source})" if m.source else "")
        for m in messages
    ]
    if log.console_dropped:
        lines.insert(0, f"({log.console_dropped} older messages were dropped)")
    if params.clear:
        log.console.clear()
    return _listing(
        lines,
        len(messages),
        none="No console messages",
        more="ask for a smaller limit or one level",
    )


class NetworkParams(TabParams):
    url_contains: str | None = Field(default=None, description="Only URLs containing this.")
    failed_only: bool = Field(default=False, description="Only failed requests and 4xx/5xx.")
    resource_type: str | None = Field(
        default=None, description="Only this type: Document, XHR, Fetch, Script, Image…"
    )
    limit: int = Field(default=100, ge=1, le=500, description="The newest this many.")


async def network_requests(ctx: ToolContext, params: NetworkParams) -> ToolResult:
    requests = list(ctx.state.log.requests.values())
    if params.url_contains:
        requests = [r for r in requests if params.url_contains in r.url]
    if params.resource_type:
        requests = [r for r in requests if r.resource_type.lower() == params.resource_type.lower()]
    if params.failed_only:
        requests = [r for r in requests if r.failed or (r.status or 0) >= 400]
    requests = requests[-params.limit :]
    lines = []
    for r in requests:
        outcome = r.failed or (str(r.status) if r.status is not None else "pending")
        size = f" {r.size / 1024:.1f} KB" if r.size else ""
        lines.append(
            f"{_clock(r.time)} {r.method} {outcome} {r.resource_type or '?'}{size} {r.url}"
        )
    return _listing(
        lines,
        len(requests),
        none="No matching requests",
        more="filter with url_contains or limit",
    )


def _listing(lines: list[str], count: int, *, none: str, more: str) -> ToolResult:
    """One line per buffered item (the page's words, which the response fits to the budget),
    or why there is none."""
    if not lines:
        return ToolResult(f"{none} (since Tabrelay began watching this tab).", data={"count": 0})
    return ToolResult("", data={"count": count}, reading=Reading("\n".join(lines), lambda _: more))


def _clock(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%H:%M:%S")
