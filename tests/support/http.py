"""A raw HTTP/1.1 client over a socket, so tests control every header (Host, Origin, Upgrade)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass
from typing import Any


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def raw_request(
    port: int,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    method: str = "GET",
    upgrade: bool = False,
    host: str | None = None,
) -> RawResponse:
    """Send one request with exactly these headers; return the response head and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}"]
    if upgrade:
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
            "Sec-WebSocket-Version: 13",
        ]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    try:
        async with asyncio.timeout(5):
            head = await reader.readuntil(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            parsed = {}
            for line in header_lines:
                if ":" in line:
                    key, value = line.split(":", 1)
                    parsed[key.strip().lower()] = value.strip()
            length = int(parsed.get("content-length", "0"))
            body = await reader.readexactly(length) if length else b""
    finally:
        writer.close()
    return RawResponse(int(status_line.split()[1]), parsed, body)
