"""An AI agent's side of the e2e tests: a real MCP client calling Tabrelay's tools.

``Agent`` wraps the SDK client with the few things every tool test needs: call a tool and get
its text (failing the test on an error result, or expecting one), open a test page in a new tab,
and pull refs out of a snapshot by role and name.
"""

from __future__ import annotations

import re
from typing import Any

from mcp import Client

from support.mcp import text_of


class Agent:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, **arguments: Any) -> Any:
        return await self.client.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments: Any) -> str:
        result = await self.call(tool, **arguments)
        assert not result.is_error, f"{tool} failed: {text_of(result)}"
        return text_of(result)

    async def fails(self, tool: str, **arguments: Any) -> str:
        result = await self.call(tool, **arguments)
        assert result.is_error, f"{tool} should have failed but said: {text_of(result)}"
        return text_of(result)

    async def open(self, url: str) -> int:
        result = await self.call("browser_new_tab", url=url)
        assert not result.is_error, text_of(result)
        return int(result.structured_content["tab_id"])

    async def snapshot(self, tab_id: int, **arguments: Any) -> str:
        return await self.ok("browser_snapshot", tab_id=tab_id, **arguments)


def ref(snapshot: str, role: str, name: str) -> str:
    """The ref of the element with this role and exact name in a snapshot."""
    pattern = re.compile(rf"^\s*{re.escape(role)} {re.escape(json_quote(name))} \[(e\d+)\]", re.M)
    match = pattern.search(snapshot)
    assert match, f"no {role} {name!r} in the snapshot:\n{snapshot}"
    return match.group(1)


def json_quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)
