"""A minimal MCP client over Streamable HTTP: one keep-alive socket, no SDK.

It isolates the server's cost from the client's: the SDK client (pydantic models, anyio
streams, httpx) spends milliseconds of its own per call, which every MCP server measured with
it pays alike. This one writes one request and parses the JSON or SSE answer by hand. It speaks
protocol 2025-11-25 (sessions), as today's AI apps do.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from types import TracebackType
from typing import Any

PROTOCOL = "2025-11-25"


class RawMcpError(Exception):
    pass


class RawMcp:
    def __init__(self, port: int, token: str, *, path: str = "/mcp") -> None:
        self.port = port
        self.token = token
        self.path = path
        self.session: str | None = None
        self._ids = itertools.count(1)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> RawMcp:
        self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()

    async def initialize(self) -> dict[str, Any]:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "tabrelay-bench-raw", "version": "1"},
            },
        )
        await self.notify("notifications/initialized")
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def notify(self, method: str) -> None:
        await self._post({"jsonrpc": "2.0", "method": method})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message_id = next(self._ids)
        status, headers, body = await self._post(
            {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        )
        if status != 200:
            raise RawMcpError(f"{method}: HTTP {status}: {body[:200]!r}")
        if "mcp-session-id" in headers:
            self.session = headers["mcp-session-id"]
        for message in _messages(headers.get("content-type", ""), body):
            if message.get("id") == message_id:
                if "error" in message:
                    raise RawMcpError(f"{method}: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]
        raise RawMcpError(f"{method}: no answer in {body[:200]!r}")

    async def _post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        assert self._reader is not None and self._writer is not None, "use `async with`"
        body = json.dumps(message).encode()
        lines = [
            f"POST {self.path} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            f"Authorization: Bearer {self.token}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        if self.session:
            lines += [f"Mcp-Session-Id: {self.session}", f"Mcp-Protocol-Version: {PROTOCOL}"]
        self._writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        return await _read_response(self._reader)


async def http_get(port: int, path: str) -> tuple[int, bytes]:
    """One GET on a fresh connection (the relay's /healthz)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        status, _, body = await _read_response(reader)
        return status, body
    finally:
        writer.close()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in head[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            body += (await reader.readexactly(size + 2))[:-2]
        return status, headers, bytes(body)
    length = int(headers.get("content-length", "0"))
    return status, headers, await reader.readexactly(length) if length else b""


def _messages(content_type: str, body: bytes) -> list[dict[str, Any]]:
    if content_type.startswith("application/json"):
        data = json.loads(body)
        return data if isinstance(data, list) else [data]
    messages = []
    for line in body.decode().splitlines():
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload:
                messages.append(json.loads(payload))
    return messages
