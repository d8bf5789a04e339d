"""Real MCP SDK clients for tests: Streamable HTTP, HTTP+SSE, or stdio through the bridge."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx2
from mcp import Client, Implementation
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

Transport = Literal["http", "sse"]

# A raw Streamable HTTP ``initialize``, for tests that speak to the endpoint below the SDK.
PROTOCOL = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
JSON_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


@asynccontextmanager
async def mcp_client(
    base: str,
    token: str,
    *,
    transport: Transport = "http",
    mode: str = "auto",
    name: str = "test-agent",
    message_handler: Any = None,
) -> AsyncIterator[Client]:
    """A connected client on ``base`` (``http://127.0.0.1:PORT``) with a bearer token."""
    info = Implementation(name=name, version="1.0")
    headers = {"Authorization": f"Bearer {token}"}
    if transport == "http":
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
            Client(
                streamable_http_client(f"{base}/mcp", http_client=http),
                mode=mode,  # type: ignore[arg-type]
                client_info=info,
                message_handler=message_handler,
            ) as client,
        ):
            yield client
    else:
        async with Client(
            sse_client(f"{base}/sse", headers=headers),
            mode=mode,  # type: ignore[arg-type]
            client_info=info,
            message_handler=message_handler,
        ) as client:
            yield client


# The boundary around the page's words in a result (``tabrelay.tools.results``).
FENCE = re.compile(r"<(/?)page-text ([0-9a-f]{8})>")


def raw_text_of(result: Any) -> str:
    """The result's text as the model reads it, page-text boundaries included."""
    return "".join(getattr(c, "text", "") for c in result.content)


def text_of(result: Any) -> str:
    """The result's text as the page and Tabrelay wrote it: the page-text boundaries checked
    (one ID per result, spans opened and closed in turn) and taken away."""
    raw = raw_text_of(result)
    return unfenced(raw)


def unfenced(raw: str) -> str:
    tags = FENCE.findall(raw)
    assert len({nonce for _, nonce in tags}) <= 1, f"more than one boundary ID:\n{raw}"
    assert [slash for slash, _ in tags] == ["", "/"] * (len(tags) // 2), f"unbalanced:\n{raw}"
    return FENCE.sub("", raw)
