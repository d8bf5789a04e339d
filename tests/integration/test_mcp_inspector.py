"""The MCP Inspector's CLI (from npm), a client we did not write, against the running endpoint."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest

from support.harness import running_core
from tabrelay.config.paths import Paths

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # pinned: older cached versions lack --header

pytestmark = pytest.mark.skipif(not shutil.which("npx"), reason="needs npx (Node.js)")


async def inspect(url: str, token: str, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        "npx",
        "-y",
        INSPECTOR,
        "--cli",
        url,
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {token}",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "npm_config_update_notifier": "false"},
    )
    async with asyncio.timeout(240):  # the first run downloads the package
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_inspector_lists_tools_and_calls_browser_list_tabs(home: Paths) -> None:
    async with running_core(home) as app:
        await app.extension()
        await app.browser_count(1)
        token = await app.add_client("inspector")
        url = f"{app.base_mcp()}/mcp"
        code, out, err = await inspect(url, token, "--method", "tools/list")
        assert code == 0, err
        names = {tool["name"] for tool in json.loads(out)["tools"]}
        assert {"browser_list_tabs", "browser_navigate", "browser_status"} <= names
        code, out, err = await inspect(
            url, token, "--method", "tools/call", "--tool-name", "browser_list_tabs"
        )
        assert code == 0, err
        result = json.loads(out)
        assert result["isError"] is False
        assert "https://example.com/" in result["content"][0]["text"]
        assert app.core.command_log is not None
        assert [r.client for r in app.core.command_log.recent(5)] == ["inspector"]
