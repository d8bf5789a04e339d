"""Every tool call ends as one command-log row, in the order the calls ended, although the row
is written after the call is answered (store/commandlog.py): none is lost when the app stops
right after, with calls still being answered, nor when it stops with calls still running (they
are cancelled, and say so)."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time

from support.harness import RelayHarness, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.endpoint.calls import Caller
from tabrelay.store.commandlog import CommandLog
from tabrelay.tools.catalog import BY_NAME

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


async def test_calls_still_running_when_the_app_stops_are_in_the_log_as_cancelled(
    home: Paths,
) -> None:
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            done = await client.call_tool("browser_evaluate", {"tab_id": 1, "expression": "done"})
            assert not done.is_error, text_of(done)
            extension.hold_replies = True  # the page never answers the next ones
            running = [
                asyncio.create_task(
                    client.call_tool("browser_evaluate", {"tab_id": 1, "expression": f"r{n}"})
                )
                for n in range(8)
            ]
            await extension.held_count(len(running))  # each call waits on its page
            await app.core.stop()  # as the person quits, the calls still running
            ended = await asyncio.gather(*running, return_exceptions=True)
    assert all(isinstance(e, BaseException) or e.is_error for e in ended), ended
    log = CommandLog(home.command_log_file)
    try:
        rows = log.recent(1000)[::-1]
    finally:
        log.close()
    by_call = {json.loads(r.arguments)["expression"]: r.status for r in rows}
    assert by_call == {"done": "ok", **{f"r{n}": "cancelled" for n in range(8)}}


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def test_a_call_cancelled_as_the_runner_closes_still_has_its_row(
    relay: RelayHarness,
) -> None:
    """The call's cancel and the runner's close come in the same turn of the loop (the app
    stopping): the row is not left to background work that the close cancels."""
    extension = await relay.extension()
    await relay.browser_count(1)
    runner, log = relay.core.runner, relay.core.command_log
    assert runner is not None and log is not None
    extension.hold_replies = True
    call = asyncio.create_task(
        runner.call(
            BY_NAME["browser_evaluate"], {"tab_id": 1, "expression": "x"}, Caller("t"), no_progress
        )
    )
    await extension.held_count(1)
    call.cancel()
    closing = asyncio.create_task(runner.close())
    await asyncio.gather(call, closing, return_exceptions=True)
    assert call.cancelled()
    assert [(r.tool, r.status) for r in log.recent(10)] == [("browser_evaluate", "cancelled")]


async def test_stopping_waits_for_the_last_rows_without_stopping_the_event_loop(
    home: Paths,
) -> None:
    """The log's writer is slow to store the last row (a busy disk) as the app stops: the stop
    waits for it off the event loop, which goes on serving (the UI, other clients)."""
    async with running_core(home) as app:
        await app.extension()
        await app.browser_count(1)
        log, runner = app.core.command_log, app.core.runner
        assert log is not None and runner is not None
        moving = threading.Event()
        log.add_listener(lambda stored: moving.wait(10))
        await runner.call(
            BY_NAME["browser_evaluate"], {"tab_id": 1, "expression": "x"}, Caller("t"), no_progress
        )
        ticks = [time.monotonic()]

        async def tick() -> None:
            while True:
                await asyncio.sleep(0.01)
                ticks.append(time.monotonic())

        ticker = asyncio.create_task(tick())
        asyncio.get_running_loop().call_later(0.5, moving.set)  # the disk catches up
        await app.core.stop()
        ticks.append(time.monotonic())
        ticker.cancel()
    still = max(later - earlier for earlier, later in itertools.pairwise(ticks))
    assert still < 1.5, f"the event loop stood still for {still:.1f} s"
    again = CommandLog(home.command_log_file)
    try:
        assert [r.status for r in again.recent(10)] == ["ok"]
    finally:
        again.close()
