"""Stopping the MCP endpoint ends what it serves at once, and a new one in the same process works.

Stopping ends every open stream (a 2025 client's SSE stream, a 2026 client's listen stream)
without waiting out uvicorn's graceful timeout and without flipping process-wide state, so an
endpoint started again in the same process (the tray app after "replace the headless app", the
test suite) serves both transports as the first did.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from support.harness import RelayHarness, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths

STOP_WITHIN = 1.5  # uvicorn's graceful timeout is 3 s: a stop that waits it out fails


@contextlib.asynccontextmanager
async def held_streams(app: RelayHarness, token: str) -> AsyncIterator[list[asyncio.Task[None]]]:
    """A 2025 client on SSE and a 2026 client listening, both open until the server ends them."""
    opened = [asyncio.Event(), asyncio.Event()]

    async def legacy_sse() -> None:
        async with mcp_client(app.base_mcp(), token, transport="sse", mode="legacy") as client:
            await client.list_tools()
            opened[0].set()
            await asyncio.Event().wait()

    async def listening() -> None:
        async with (
            mcp_client(app.base_mcp(), token) as client,
            client.listen(resources_list_changed=True) as events,
        ):
            opened[1].set()
            async for _ in events:
                pass

    tasks = [asyncio.create_task(legacy_sse()), asyncio.create_task(listening())]
    try:
        async with asyncio.timeout(10):
            for event in opened:
                await event.wait()
        yield tasks
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


async def test_stopping_ends_open_streams_at_once(home: Paths) -> None:
    async with running_core(home) as app:
        token = await app.add_client("agent")
        endpoint = app.core.endpoint
        assert endpoint is not None
        async with held_streams(app, token):
            started = time.perf_counter()
            await endpoint.stop()
            took = time.perf_counter() - started
    assert took < STOP_WITHIN


async def test_a_restarted_endpoint_in_the_same_process_serves_both_transports(
    home: Paths,
) -> None:
    async with running_core(home) as first:
        token = await first.add_client("agent")
        async with held_streams(first, token):
            pass  # the first app stops with both kinds of stream open
    async with running_core(home) as again:
        await again.extension()
        await again.browser_count(1)
        for transport in ("http", "sse"):
            async with mcp_client(again.base_mcp(), token, transport=transport) as client:
                result = await client.call_tool("browser_list_tabs", {})
                assert not result.is_error, text_of(result)
                assert "example.com" in text_of(result)
        async with held_streams(again, token) as tasks:
            assert not any(task.done() for task in tasks)  # streams stay open, not ended at once
