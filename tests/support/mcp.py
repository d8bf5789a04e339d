"""Real MCP SDK clients for tests: Streamable HTTP, HTTP+SSE, or stdio through the bridge."""

from __future__ import annotations

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


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)
