"""``tabrelay mcp-stdio``: MCP over stdio for clients that only start programs (Claude Desktop).

A raw JSON-RPC pump between stdin/stdout and the running app's Streamable HTTP endpoint, so
notifications, progress, cancellation and server requests pass unchanged. It adds the HTTP
headers a client session would add (the protocol version, and on 2026-07-28 the method and
name headers). The client token comes from the secret store, never from argv. When the app is
unreachable or refuses the token, every request is answered with an error that says why, so
the person sees it in their client instead of a silent hang. Logs go to stderr only.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import (
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

logger = logging.getLogger(__name__)

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]
BRIDGE_ERROR = -32000


class HeaderStamper:
    """The per-message HTTP headers a client session would have added."""

    def __init__(self) -> None:
        self.negotiated: str | None = None
        self._initialize_ids: set[Any] = set()

    def headers_for(self, message: Any) -> dict[str, str] | None:
        if isinstance(message, JSONRPCRequest | JSONRPCNotification):
            params = message.params or {}
            meta = params.get("_meta") or {}
            modern = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
            if isinstance(modern, str):  # 2026-07-28: routing headers mirror the body
                headers = {MCP_PROTOCOL_VERSION_HEADER: modern, MCP_METHOD_HEADER: message.method}
                key = NAME_BEARING_METHODS.get(message.method)
                name = params.get(key) if key else None
                if isinstance(name, str):
                    headers[MCP_NAME_HEADER] = encode_header_value(name)
                return headers
            if isinstance(message, JSONRPCRequest) and message.method == "initialize":
                self._initialize_ids.add(message.id)
                return None
        return {MCP_PROTOCOL_VERSION_HEADER: self.negotiated} if self.negotiated else None

    def observe(self, message: Any) -> None:
        if isinstance(message, JSONRPCResponse) and message.id in self._initialize_ids:
            self._initialize_ids.discard(message.id)
            result = message.result or {}
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            self.negotiated = version if isinstance(version, str) else None


async def problem_with(http: httpx2.AsyncClient, url: str) -> str | None:
    """``None`` if the app answers and accepts the token, else what is wrong, for the person."""
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "server/discover",
        "params": {
            "_meta": {
                PROTOCOL_VERSION_META_KEY: "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        MCP_PROTOCOL_VERSION_HEADER: "2026-07-28",
        MCP_METHOD_HEADER: "server/discover",
    }
    try:
        reply = await http.post(url, json=body, headers=headers, timeout=5)
    except httpx2.TransportError as exc:
        return f"Tabrelay is not running (cannot reach {url}: {type(exc).__name__}). Start it."
    if reply.status_code == 401:
        return (
            "Tabrelay rejected this client's token. Create it again with "
            "`tabrelay client add NAME` (or in the tray: Connect an MCP client)."
        )
    if reply.status_code >= 400:
        return f"Tabrelay answered HTTP {reply.status_code}."
    return None


async def refuse_all(
    read: ReadStream, write: WriteStream, message: str, pending: set[Any] | None = None
) -> None:
    """Answer every (pending and future) request with ``message`` until stdin closes."""
    error = ErrorData(code=BRIDGE_ERROR, message=message)
    for request_id in pending or ():
        await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
    async for item in read:
        if not isinstance(item, Exception) and isinstance(item.message, JSONRPCRequest):
            reply = JSONRPCError(jsonrpc="2.0", id=item.message.id, error=error)
            await write.send(SessionMessage(reply))


async def pump(url: str, token: str | None, *, missing_token: str = "") -> None:
    """Serve MCP on stdio by forwarding to ``url`` until the client closes stdin."""
    stamper = HeaderStamper()
    pending: set[Any] = set()
    timeout = httpx2.Timeout(30, read=600)
    async with (
        stdio_server() as (stdin, stdout),
        stdout,  # closing it ends stdio_server's writer; else the process hangs at exit
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
    ):
        problem = missing_token if token is None else await problem_with(http, url)
        if problem:
            logger.error("%s", problem)
            await refuse_all(stdin, stdout, problem)
            return
        try:
            async with (
                streamable_http_client(url, http_client=http) as (app_in, app_out),
                anyio.create_task_group() as group,
            ):

                async def upstream() -> None:
                    async for item in stdin:
                        if isinstance(item, Exception):
                            logger.warning("ignored a malformed line from the client: %s", item)
                            continue
                        message = item.message
                        if isinstance(message, JSONRPCRequest):
                            pending.add(message.id)
                        headers = stamper.headers_for(message)
                        metadata = ClientMessageMetadata(headers=headers) if headers else None
                        await app_out.send(SessionMessage(message, metadata=metadata))
                    group.cancel_scope.cancel()

                async def downstream() -> None:
                    async for item in app_in:
                        if isinstance(item, Exception):
                            logger.warning("transport error from Tabrelay: %s", item)
                            continue
                        message = item.message
                        if isinstance(message, JSONRPCResponse | JSONRPCError):
                            pending.discard(message.id)
                        stamper.observe(message)
                        await stdout.send(SessionMessage(message))
                    group.cancel_scope.cancel()

                group.start_soon(upstream)
                group.start_soon(downstream)
        # The app went away mid-session; the transport raises out of its task group.
        except Exception as exc:  # noqa: BLE001
            problem = f"Lost the connection to Tabrelay ({type(exc).__name__}); start it again."
            logger.error("%s", problem)
            await refuse_all(stdin, stdout, problem, pending)
