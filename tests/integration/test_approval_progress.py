"""A call held by an approval tells its client so, as MCP progress, with the real SDK client.

Clients give up on a call after their own timeout (60 s in the MCP TypeScript SDK and in Codex
by default, the same as the approval wait); those that restart it on progress keep waiting while
the person decides. Every progress notification the client receives is recorded through the
session's message handler, so notifications sent after a call ended would show up too.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp import types

from support.harness import RelayHarness, ScriptedToolApprover, running_core
from support.mcp import mcp_client
from tabrelay.approval.gate import Choice
from tabrelay.config.paths import Paths

TRANSPORTS = ["http", "sse"]
INTERVAL = 0.05  # the gate's progress interval in these tests (5 s in the app)
# To see that nothing more arrives, the client listens for this many intervals: a gate that
# kept reporting would have sent about ten notifications by then.
QUIET = 10 * INTERVAL
WAITING = "waiting for the person"


@dataclass
class Heard:
    """Every progress notification a client received, in order, with markers in between."""

    # ("progress", token, progress, total, message) or (marker, None, 0, None, "")
    events: list[tuple[str, Any, float, float | None, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, message: Any) -> None:
        if isinstance(message, types.ProgressNotification):
            p = message.params
            self.events.append(("progress", p.progress_token, p.progress, p.total, p.message or ""))
            self.changed.set()

    def mark(self, name: str) -> None:
        self.events.append((name, None, 0.0, None, ""))

    def progress(self, token: Any = None) -> list[tuple[float, float | None, str]]:
        return [
            (done, total, text)
            for kind, of, done, total, text in self.events
            if kind == "progress" and token in (None, of)
        ]

    def tokens(self) -> list[Any]:
        return list(dict.fromkeys(e[1] for e in self.events if e[0] == "progress"))

    def after(self, name: str) -> list[tuple[str, Any, float, float | None, str]]:
        index = next(i for i, event in enumerate(self.events) if event[0] == name)
        return self.events[index + 1 :]

    async def until(self, condition: Callable[[], bool], timeout: float = 10) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


@asynccontextmanager
async def asking_app(home: Paths) -> AsyncIterator[tuple[RelayHarness, ScriptedToolApprover]]:
    approver = ScriptedToolApprover(answer=None)  # waits until the test answers
    async with running_core(home, tool_approver=approver) as app:
        await app.extension()
        await app.browser_count(1)
        app.core.gate.progress_interval = INTERVAL
        yield app, approver


async def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def strictly_increasing(values: list[float]) -> bool:
    return all(a < b for a, b in itertools.pairwise(values))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_waiting_for_the_person_reports_progress_until_they_answer(
    home: Paths, transport: str
) -> None:
    heard = Heard()
    callback: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        callback.append((done, total, message))

    async with asking_app(home) as (app, approver):
        token = await app.add_client()
        async with mcp_client(
            app.base_mcp(), token, transport=transport, message_handler=heard.handle
        ) as client:
            call = asyncio.create_task(
                client.call_tool(
                    "browser_navigate",
                    {"url": "https://example.org/"},
                    progress_callback=on_progress,
                )
            )
            await heard.until(lambda: len(heard.progress()) >= 4)
            assert not call.done()  # still held by the question
            approver.choose(Choice.ALLOW_ONCE)
            result = await asyncio.wait_for(call, 10)
            heard.mark("answered")
            await asyncio.sleep(QUIET)  # an observation window: nothing more may arrive
    assert not result.is_error
    waiting = [p for p in heard.progress() if WAITING in p[2]]
    assert len(waiting) >= 4
    timeout = app.core.settings.approval_timeout
    assert all(total == timeout for _, total, _ in waiting)
    assert "browser_navigate" in waiting[0][2] and f"({timeout:.0f} s left)" in waiting[0][2]
    assert waiting[0][0] == 0
    # MCP: each notification's progress is larger than the one before, the tool's own steps
    # after the wait included.
    assert strictly_increasing([done for done, _, _ in heard.progress()])
    tool_steps = heard.progress()[len(waiting) :]
    assert tool_steps and all(WAITING not in text for _, _, text in tool_steps)
    assert not [e for e in heard.after("answered") if e[0] == "progress"]
    assert len(heard.tokens()) == 1
    # The SDK's own progress callback got the same notifications.
    assert [(d, t, m) for d, t, m in callback] == heard.progress()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cancelling_a_call_that_waits_for_the_person_stops_its_progress(
    home: Paths, transport: str
) -> None:
    heard = Heard()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        pass

    async with asking_app(home) as (app, approver):
        token = await app.add_client()
        async with mcp_client(
            app.base_mcp(), token, transport=transport, message_handler=heard.handle
        ) as client:
            call = asyncio.create_task(
                client.call_tool(
                    "browser_evaluate", {"expression": "1"}, progress_callback=on_progress
                )
            )
            await heard.until(lambda: len(heard.progress()) >= 3)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await until(lambda: not app.core.gate.pending and bool(approver.withdrawn))
            heard.mark("cancelled")
            await asyncio.sleep(QUIET)  # an observation window: nothing more may arrive
            heard.mark("second call")
            # The session still hears the progress of a new call: the quiet above was real.
            again = asyncio.create_task(
                client.call_tool(
                    "browser_evaluate", {"expression": "2"}, progress_callback=on_progress
                )
            )
            await heard.until(lambda: len(heard.tokens()) == 2)
            approver.choose(Choice.DENY)
            denied = await asyncio.wait_for(again, 10)
    assert denied.is_error
    assert [r.tool for r in approver.withdrawn] == ["browser_evaluate"]
    first, second = heard.tokens()
    assert heard.after("cancelled")[0][0] == "second call"  # nothing at all in the window
    assert not [e for e in heard.after("cancelled") if e[1] == first]
    assert heard.progress(second)[0][0] == 0 and WAITING in heard.progress(second)[0][2]


async def test_a_client_that_asked_for_no_progress_gets_none(home: Paths) -> None:
    heard = Heard()
    async with asking_app(home) as (app, approver):
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token, message_handler=heard.handle) as client:
            call = asyncio.create_task(client.call_tool("browser_evaluate", {"expression": "1"}))
            await until(lambda: bool(approver.requests))
            await asyncio.sleep(QUIET)  # ten intervals in which progress would have been sent
            approver.choose(Choice.ALLOW_ONCE)
            result = await asyncio.wait_for(call, 10)
    assert not result.is_error
    assert heard.progress() == []
