"""`tabrelay mcp-stdio`: an MCP client over stdio reaches the running app through the bridge."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys

import psutil
import pytest
from mcp import Client, MCPError, StdioServerParameters

from support.harness import running_core
from support.mcp import text_of
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore


def bridge(home: Paths, client: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tabrelay", "mcp-stdio", "--client", client],
        env={**os.environ, "TABRELAY_HOME": str(home.config_dir.parent)},
    )


def bridge_processes() -> list[psutil.Process]:
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if "mcp-stdio" in process.cmdline():
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


async def test_a_stdio_client_uses_the_running_app_and_its_token_never_shows_in_argv(
    home: Paths,
) -> None:
    async with running_core(home, write_instance_file=True) as app:
        extension = await app.extension()
        await app.browser_count(1)
        token = await app.add_client("claude-desktop")
        async with Client(bridge(home, "claude-desktop")) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            tabs = await client.call_tool("browser_list_tabs", {})
            navigate = await client.call_tool("browser_navigate", {"url": "https://example.org/"})
            [process] = bridge_processes()
            argv = " ".join(process.cmdline())
            environment = process.environ()
        assert "browser_navigate" in names
        assert "[1] Example" in text_of(tabs)
        assert not navigate.is_error and extension.tabs[1]["url"] == "https://example.org/"
        assert token not in argv
        assert token not in json.dumps(environment)
        assert app.core.command_log is not None
        logged = app.core.command_log.recent(10)
        assert {r.client for r in logged} == {"claude-desktop"}


async def test_progress_and_cancellation_pass_through_the_bridge(home: Paths) -> None:
    async with running_core(home, write_instance_file=True) as app:
        extension = await app.extension()
        await app.browser_count(1)
        extension.emit_load_events = False
        await app.add_client("codex")
        progress: list[str | None] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        async with Client(bridge(home, "codex")) as client:
            call = asyncio.create_task(
                client.call_tool(
                    "browser_navigate", {"url": "https://slow.test/"}, progress_callback=on_progress
                )
            )
            async with asyncio.timeout(15):  # the wait for the person first, then the tool's
                while "waiting for load" not in progress:
                    await asyncio.sleep(0.02)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert app.core.command_log is not None
            async with asyncio.timeout(5):
                while not app.core.command_log.recent(1):
                    await asyncio.sleep(0.02)
        assert "waiting for the person to allow browser_navigate" in str(progress[0])
        assert progress[-1] == "waiting for load"
        assert app.core.command_log.recent(1)[0].status == "cancelled"


async def test_an_unknown_client_name_is_explained_to_the_person(home: Paths) -> None:
    async with running_core(home, write_instance_file=True):
        with pytest.raises(Exception) as raised:
            async with Client(bridge(home, "nobody")):
                pass
    messages = _messages(raised.value)
    assert any("No MCP client named 'nobody'" in m for m in messages), messages
    assert any("tabrelay client add nobody" in m for m in messages)


async def test_the_bridge_starts_the_app_headless_when_it_is_not_running(home: Paths) -> None:
    def free_ports(settings: object) -> None:
        settings.relay_port = 0  # type: ignore[attr-defined]
        settings.mcp_port = 0  # type: ignore[attr-defined]

    SettingsStore(home.settings_file).update(free_ports)
    await _run_cli(home, "client", "add", "claude-desktop")
    try:
        async with Client(bridge(home, "claude-desktop")) as client:
            status = await client.call_tool("browser_status", {})
        assert "No browser is connected" in text_of(status)
        assert home.instance_file.exists()
    finally:
        _stop_started_app(home)


def _stop_started_app(home: Paths) -> None:
    try:
        pid = json.loads(home.instance_file.read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return
    os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(10)


async def _run_cli(home: Paths, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tabrelay",
        *args,
        env={**os.environ, "TABRELAY_HOME": str(home.config_dir.parent)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


def _messages(error: BaseException) -> list[str]:
    if isinstance(error, BaseExceptionGroup):
        return [m for e in error.exceptions for m in _messages(e)]
    if isinstance(error, MCPError):
        return [str(error), getattr(error, "message", "")]
    return [str(error)]
