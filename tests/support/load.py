"""The load scenario (issue 8): many MCP clients calling tools on many tabs at once.

Shared by the scaled-down test in ``make test`` and the full-size run in ``make bench``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from support.harness import RelayHarness
from support.mcp import mcp_client, text_of
from tabrelay.config.settings import PolicyRule

# A mix of what agents do: look around, read, act, screenshot.
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("browser_list_tabs", {}),
    ("browser_evaluate", {"expression": "document.title"}),
    ("browser_status", {}),
    ("browser_screenshot", {"format": "png"}),
    ("browser_navigate", {"url": "https://example.com/next"}),
)


@dataclass
class LoadReport:
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    rss_before: int = 0
    rss_after: int = 0

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0


async def prepare(app: RelayHarness, *, tabs: int) -> None:
    """Allow every tool (a person set the rules ahead) and open ``tabs`` tabs."""
    await asyncio.to_thread(
        app.core.settings_store.update,
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow")),
    )
    extension = await app.extension()
    for tab_id in range(3, tabs + 1):
        await extension._tabs_create({"url": f"https://site{tab_id}.example/"})
    await app.browser_count(1)


async def run(app: RelayHarness, *, clients: int, calls: int, tabs: int) -> LoadReport:
    """``clients`` clients at once, ``calls`` calls each, spread over ``tabs`` tabs."""
    tokens = [await app.add_client(f"load-{n}-{time.monotonic_ns()}") for n in range(clients)]
    report = LoadReport(rss_before=psutil.Process().memory_info().rss)

    async def client(index: int, token: str) -> None:
        async with mcp_client(app.base_mcp(), token) as session:
            for n in range(calls):
                tool, arguments = CALLS[(index + n) % len(CALLS)]
                if tool != "browser_status" and tool != "browser_list_tabs":
                    arguments = {**arguments, "tab_id": 1 + (index * calls + n) % tabs}
                started = time.perf_counter()
                result = await session.call_tool(tool, arguments)
                report.latencies_ms.append((time.perf_counter() - started) * 1000)
                report.calls += 1
                if result.is_error:
                    report.errors.append(f"{tool}: {text_of(result)}")

    started = time.perf_counter()
    await asyncio.gather(*(client(i, t) for i, t in enumerate(tokens)))
    report.seconds = time.perf_counter() - started
    report.rss_after = psutil.Process().memory_info().rss
    return report


def leftovers(app: RelayHarness) -> dict[str, int]:
    """What a finished load must not leave behind."""
    runner = app.core.runner
    assert runner is not None
    return {
        "pending commands": sum(b.pending_count for b in app.core.registry.all()),
        "pending approvals": len(app.core.gate.pending),
        "running calls": sum(runner._running.values()),
        "background input": len(runner.background),
    }
