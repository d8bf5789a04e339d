"""The peers: Playwright MCP and chrome-devtools-mcp from npm, over stdio, on Debian's Chromium.

Command lines are ENVIRONMENT.md's, with the versions pinned. Each peer launches its own
Chromium (the same binary); the bench runs one browser at a time. A ``PeerSession`` hides the
peers' different tool names and arguments behind the four operations the bench times, using
the tools as an agent would (default arguments); the arguments are checked against the peer's
own tools/list, so a renamed tool fails loudly instead of measuring an error.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, Implementation, StdioServerParameters
from mcp.client.stdio import stdio_client

CHROMIUM = "/usr/bin/chromium"


@dataclass(frozen=True)
class Peer:
    key: str
    label: str
    package: str
    version: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    def argv(self) -> list[str]:
        return ["-y", f"{self.package}@{self.version}", *self.args]


PLAYWRIGHT = Peer(
    key="playwright",
    label="Playwright MCP",
    package="@playwright/mcp",
    version="0.0.83",
    args=("--executable-path", CHROMIUM, "--headless", "--no-sandbox", "--isolated"),
    env=(("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"),),
)
DEVTOOLS = Peer(
    key="devtools",
    label="chrome-devtools-mcp",
    package="chrome-devtools-mcp",
    version="1.11.0",
    args=(
        "--executablePath", CHROMIUM, "--headless", "--isolated",
        "--chromeArg=--no-sandbox", "--chromeArg=--disable-gpu",
        "--usageStatistics=false", "--performanceCrux=false", "--pageIdRouting=false",
    ),
)  # fmt: skip
PEERS = (PLAYWRIGHT, DEVTOOLS)

# What each peer calls the five operations, and the arguments it takes for them.
TOOLS = {
    "playwright": {
        "navigate": "browser_navigate",
        "evaluate": "browser_evaluate",
        "snapshot": "browser_snapshot",
        "click": "browser_click",
        "type": "browser_type",
    },
    "devtools": {
        "navigate": "navigate_page",
        "evaluate": "evaluate_script",
        "snapshot": "take_snapshot",
        "click": "click",
        "type": "fill",
    },
}


class PeerError(Exception):
    pass


class PeerSession:
    def __init__(self, peer: Peer, client: Client, started: float) -> None:
        self.peer = peer
        self.client = client
        self.ready_seconds = started
        self.tools: dict[str, dict[str, Any]] = {}

    async def discover(self) -> None:
        listing = await self.client.list_tools()
        self.tools = {tool.name: tool.input_schema for tool in listing.tools}
        for op, name in TOOLS[self.peer.key].items():
            if name not in self.tools:
                raise PeerError(f"{self.peer.label} has no {name} tool (for {op})")

    def _check(self, name: str, arguments: dict[str, Any]) -> None:
        known = set(self.tools[name].get("properties", {}))
        unknown = set(arguments) - known
        if unknown:
            raise PeerError(f"{self.peer.label} {name} takes no {sorted(unknown)}: {known}")

    async def call(self, op: str, arguments: dict[str, Any]) -> str:
        name = TOOLS[self.peer.key][op]
        self._check(name, arguments)
        result = await self.client.call_tool(name, arguments)
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error:
            raise PeerError(f"{self.peer.label} {name} failed: {text[:300]}")
        return text

    async def navigate(self, url: str) -> str:
        if self.peer.key == "devtools":
            return await self.call("navigate", {"type": "url", "url": url})
        return await self.call("navigate", {"url": url})

    async def evaluate(self, function: str = "() => 1+1") -> str:
        return await self.call("evaluate", {"function": function})

    async def snapshot(self) -> str:
        return await self.call("snapshot", {})

    async def click(self, target: str, element: str) -> str:
        if self.peer.key == "devtools":
            return await self.call("click", {"uid": target})
        return await self.call("click", {"target": target, "element": element})

    async def type(self, target: str, element: str, text: str) -> str:
        """``text`` into a field, in place of what it holds (as our ``browser_type`` does)."""
        if self.peer.key == "devtools":
            return await self.call("type", {"uid": target, "value": text})
        return await self.call("type", {"target": target, "element": element, "text": text})

    async def click_target(self, selector: str, role: str, name: str) -> str:
        """What to pass to ``click`` for an element. Playwright MCP renumbers its refs after
        each action's snapshot, so it gets the selector (its tool takes "a unique element
        selector" too); chrome-devtools-mcp's uids stay valid until the next snapshot."""
        if self.peer.key == "playwright":
            return selector
        snapshot = await self.snapshot()
        match = re.search(rf"uid=(\S+) {re.escape(role)} {re.escape(json.dumps(name))}", snapshot)
        if match is None:
            raise PeerError(f"no {role} {name!r} in {self.peer.label}'s snapshot:\n{snapshot}")
        return match.group(1)


@asynccontextmanager
async def peer_session(peer: Peer, *, log_dir: Path) -> AsyncIterator[PeerSession]:
    """Start the peer (npx fetches it on first use) in a scratch working directory: Playwright
    MCP writes snapshots and console logs under ./.playwright-mcp."""
    log_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"tabrelay-bench-{peer.key}-", dir=log_dir))
    params = StdioServerParameters(
        command="npx",
        args=peer.argv(),
        env={**dict(peer.env), "PATH": os.environ.get("PATH", "")},
        cwd=str(work),
    )
    info = Implementation(name="tabrelay-bench", version="1")
    with (log_dir / f"{peer.key}.log").open("a") as errlog:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog), client_info=info) as client:
            session = PeerSession(peer, client, time.perf_counter() - started)
            await session.discover()
            yield session
