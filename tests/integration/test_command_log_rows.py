"""Every tool call ends as one command-log row, in the order the calls ended, although the row
is written after the call is answered (store/commandlog.py): none is lost when the app stops
right after, with calls still being answered."""

from __future__ import annotations

import asyncio
import json

from support.harness import running_core
from support.mcp import mcp_client
from tabrelay.config.paths import Paths
from tabrelay.store.commandlog import CommandLog

CALLS = 60


async def test_the_log_has_every_call_in_order_when_the_app_stops_right_after(
    home: Paths,
) -> None:
    async with running_core(home) as app:
        await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            for n in range(CALLS):
                answer = await client.call_tool(
                    "browser_evaluate", {"tab_id": 1, "expression": f"{n}"}
                )
                assert not answer.is_error
            # And a burst whose answers are still arriving when the app stops.
            burst = [
                asyncio.create_task(
                    client.call_tool("browser_evaluate", {"tab_id": 1, "expression": f"b{n}"})
                )
                for n in range(10)
            ]
            answered = await asyncio.gather(*burst)
    assert not any(a.is_error for a in answered)
    log = CommandLog(home.command_log_file)
    try:
        rows = log.recent(1000)[::-1]
    finally:
        log.close()
    evaluated = [json.loads(r.arguments)["expression"] for r in rows]
    assert evaluated[:CALLS] == [f"{n}" for n in range(CALLS)]
    assert sorted(evaluated[CALLS:]) == sorted(f"b{n}" for n in range(10))
    assert all(r.status == "ok" and r.tool == "browser_evaluate" for r in rows)
