"""Every HTTP request the MCP endpoint is serving, so that stopping ends them all at once.

The endpoint's streams (a 2025 client's SSE stream, its Streamable HTTP GET stream, a 2026
client's ``subscriptions/listen``, a call waiting for approval) would otherwise keep uvicorn's
graceful shutdown waiting for its whole timeout; the SDK's SSE responses learn of a shutdown
only through a process-global flag (``sse_starlette``'s ``AppStatus``) that, once set, ends
every later stream in the process too. Here each endpoint owns its requests: ``close`` cancels
them and finishes each response cleanly. It does not authenticate or route (``auth.py``,
``server.py``).
"""

from __future__ import annotations

import anyio
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STOPPING = "Tabrelay is stopping; connect again when it is back."


class RequestDrain:
    """Pure ASGI middleware: tracks each HTTP request in a cancel scope; ``close`` ends them."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._running: set[anyio.CancelScope] = set()
        self._closing = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self._app(scope, receive, send)
            return
        if self._closing:
            await PlainTextResponse(STOPPING, status_code=503)(scope, receive, send)
            return
        started = finished = False

        async def tracked(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        with anyio.CancelScope() as scope_of_request:
            self._running.add(scope_of_request)
            try:
                await self._app(scope, receive, tracked)
            finally:
                self._running.discard(scope_of_request)
        if scope_of_request.cancelled_caught:  # ended by close(): answer what was left open
            if not started:
                await PlainTextResponse(STOPPING, status_code=503)(scope, receive, send)
            elif not finished:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    @property
    def running(self) -> int:
        """How many requests are being served now."""
        return len(self._running)

    def close(self) -> None:
        """Refuse new requests (503) and end every running one."""
        self._closing = True
        for running in list(self._running):
            running.cancel()
