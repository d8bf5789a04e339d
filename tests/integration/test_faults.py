"""Faults: what a person would see when things break mid-flight, and that nothing is lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from support.harness import allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore
from tabrelay.errors import StartupError


async def test_the_extension_dropping_mid_call_fails_the_call_at_once_with_a_clear_error(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        evaluating = asyncio.Event()

        async def never_answers(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            evaluating.set()
            await asyncio.Event().wait()
            return {}

        extension.cdp_handlers["Runtime.evaluate"] = never_answers
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            call = asyncio.create_task(client.call_tool("browser_evaluate", {"expression": "1"}))
            await asyncio.wait_for(evaluating.wait(), 5)
            started = time.perf_counter()
            assert extension.connection is not None
            extension.connection.transport.abort()
            result = await asyncio.wait_for(call, 5)
            elapsed = time.perf_counter() - started
        assert result.is_error
        assert "disconnected" in text_of(result) and "before answering" in text_of(result)
        assert elapsed < 1.0
        assert app.core.command_log is not None
        [row] = app.core.command_log.recent(1)
        assert row.status == "error" and "disconnected" in (row.error or "")
        assert app.core.runner is not None and sum(app.core.runner._running.values()) == 0


async def test_an_unexpected_error_inside_a_tool_is_a_clear_tool_error_and_a_log_row(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)

        async def history_without_index(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            return {"entries": []}  # a browser answering in a shape the tool did not expect

        extension.cdp_handlers["Page.getNavigationHistory"] = history_without_index
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_navigate", {"action": "back"})
            after = await client.call_tool("browser_list_tabs", {})
        text = text_of(result)
        assert result.is_error
        assert "browser_navigate failed because of an internal error in Tabrelay (KeyError)" in text
        assert "browser_snapshot" in text  # what to try next
        assert "currentIndex" not in text, "never the bare exception text"
        assert not after.is_error, "the app keeps answering"
        assert app.core.command_log is not None
        row = next(r for r in app.core.command_log.recent(5) if r.tool == "browser_navigate")
        assert row.status == "error" and row.error == text


async def test_a_browser_that_never_answers_ends_the_call_as_timed_out(home: Paths) -> None:
    allow_everything(home)
    SettingsStore(home.settings_file).update(lambda s: setattr(s, "command_timeout", 0.5))
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)

        async def never_answers(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            await asyncio.Event().wait()
            return {}

        extension.cdp_handlers["Page.reload"] = never_answers
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_navigate", {"action": "reload"})
        assert result.is_error and "did not answer" in text_of(result)
        assert app.core.command_log is not None
        row = next(r for r in app.core.command_log.recent(5) if r.tool == "browser_navigate")
        assert row.status == "timeout"


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tabrelay.store.commandlog import CommandEntry, CommandLog
    log = CommandLog(Path(sys.argv[1]))
    n = 0
    while True:
        n += 1
        stored = log.record(CommandEntry(time=time.time(), client="load", tool="browser_click",
                                         arguments='{"n": %d}' % n, decision="allowed",
                                         status="ok", duration_ms=1.0))
        print(stored.id, flush=True)  # the row is committed when record() returns
    """
)


def test_a_killed_app_loses_no_committed_command_log_row(tmp_path: Path) -> None:
    database = tmp_path / "commands.sqlite3"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    committed: list[int] = []
    for line in writer.stdout:
        committed.append(int(line))
        if len(committed) >= 400:
            break
    assert len(committed) == 400, "the writer did not start"
    writer.send_signal(signal.SIGKILL)
    writer.wait(10)
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        ids = {row[0] for row in db.execute("SELECT id FROM commands")}
    assert set(committed) <= ids
    from tabrelay.store.commandlog import CommandLog

    reopened = CommandLog(database)  # the app starts again on the same file
    assert reopened.count() >= len(committed)
    reopened.close()


async def test_a_taken_mcp_port_stops_startup_with_nothing_left_running(home: Paths) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with pytest.raises(StartupError, match=f"cannot listen on 127.0.0.1:{port} for MCP"):
            async with running_core(home, mcp_port=port, write_instance_file=True):
                pass
    assert not home.instance_file.exists()
    import psutil

    listening = [c for c in psutil.Process().net_connections() if c.status == "LISTEN"]
    assert listening == []  # the relay that had started was stopped again


async def test_a_tab_closed_during_a_command_gives_a_clear_error(home: Paths) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        extension.emit_load_events = False

        async with mcp_client(app.base_mcp(), token) as client:
            call = asyncio.create_task(
                client.call_tool("browser_navigate", {"url": "https://slow.test/", "tab_id": 2})
            )
            async with asyncio.timeout(5):
                while not [c for c in extension.cdp_calls if c[1] == "Page.navigate"]:
                    await asyncio.sleep(0.01)
            started = time.perf_counter()
            await extension._tabs_close({"tabId": 2})  # the person closes the tab
            result = await asyncio.wait_for(call, 5)
        assert result.is_error
        assert text_of(result) == "tab 2 was closed while waiting"
        assert time.perf_counter() - started < 1.0


async def test_the_app_restarting_leaves_no_stale_state_for_a_reconnecting_browser(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home, write_instance_file=True) as app:
        port, mcp_port = app.port, app.mcp_port
        token = await app.add_client("agent")
    async with running_core(
        home, relay_port=port, mcp_port=mcp_port, write_instance_file=True
    ) as again:
        extension = await again.extension()
        await again.browser_count(1)
        async with mcp_client(again.base_mcp(), token) as client:
            result = await client.call_tool("browser_list_tabs", {})
        assert not result.is_error, text_of(result)
        assert json.loads(home.instance_file.read_text())["relay_port"] == port
        assert extension.commands[-1]["method"] == "tabs.list"


def test_sigterm_during_calls_stops_the_app_cleanly(home: Paths) -> None:
    SettingsStore(home.settings_file).update(
        lambda s: (setattr(s, "relay_port", 0), setattr(s, "mcp_port", 0))
    )
    env = {**os.environ, "TABRELAY_HOME": str(home.config_dir.parent)}
    serve = subprocess.Popen(
        [sys.executable, "-m", "tabrelay", "serve"], env=env, stderr=subprocess.PIPE, text=True
    )
    assert serve.stderr is not None
    line = serve.stderr.readline()
    while "serving relay" not in line and line:
        line = serve.stderr.readline()
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(10) == 0
    assert not home.instance_file.exists()


async def test_a_page_that_closes_its_own_tab_during_a_call_still_gives_the_result(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)

        async def close_itself(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
            await extension._tabs_close({"tabId": tab_id})  # window.close() in the page
            return {"result": {"type": "string", "value": "bye"}}

        extension.cdp_handlers["Runtime.evaluate"] = close_itself
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool(
                "browser_evaluate", {"expression": "window.close(), 'bye'", "tab_id": 1}
            )
        assert not result.is_error, text_of(result)
        assert text_of(result) == '"bye"'
