"""Bearer-token authentication for the MCP endpoint, as plain ASGI (DESIGN §4.6, THREATS M1, M4).

Every HTTP request needs ``Authorization: Bearer <client token>``; the token table is read per
request, so a revoked token stops working at once. Failures get a plain 401 with
``WWW-Authenticate: Bearer`` (no OAuth metadata) and are rate-limited. A success marks the
request with the client's name, both for our tools and for the SDK's session binding, which
then refuses a session id presented with another client's token.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tabrelay.relay.ratelimit import FailureLimiter

logger = logging.getLogger(__name__)

CLIENT_KEY = "tabrelay_client"


@dataclass
class ClientActivity:
    """What the dashboard shows of a client's live use."""

    last_seen: float = 0.0
    open_requests: int = 0  # includes long-lived event streams


def client_of(scope: Scope) -> str | None:
    """The authenticated client name our middleware put on the request."""
    state: dict[str, Any] = scope.get("state") or {}
    name = state.get(CLIENT_KEY)
    return name if isinstance(name, str) else None


class BearerAuth:
    def __init__(
        self,
        app: ASGIApp,
        tokens: Callable[[], dict[str, str]],
        *,
        limiter: FailureLimiter | None = None,
    ) -> None:
        self.app = app
        self._tokens = tokens
        self.limiter = limiter or FailureLimiter(max_failures=20, window=10, cooldown=30)
        self.activity: dict[str, ClientActivity] = {}

    def identify(self, scope: Scope) -> str | None:
        header = b""
        for key, value in scope.get("headers", []):
            if key == b"authorization":
                header = value
        scheme, _, presented = header.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            return None
        # Compare digests: equal length whatever was presented, so length leaks nothing.
        given = hashlib.sha256(presented.strip().encode("utf-8", "surrogateescape")).digest()
        found = None
        for name, token in self._tokens().items():
            if hmac.compare_digest(given, hashlib.sha256(token.encode("utf-8")).digest()):
                found = name
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        if self.limiter.blocked():
            await _plain(
                send,
                429,
                b"Too many failed attempts; retry later",
                [(b"retry-after", str(int(self.limiter.retry_after()) + 1).encode())],
            )
            return
        name = self.identify(scope)
        if name is None:
            if self.limiter.record_failure():
                logger.warning("possible attack: many MCP requests with wrong tokens")
            await _plain(
                send,
                401,
                b"Unauthorized: send Authorization: Bearer <client token>",
                [(b"www-authenticate", b'Bearer realm="tabrelay"')],
            )
            return
        # The SDK binds sessions to client_id; the token itself never leaves this middleware.
        user = AccessToken(token="-", client_id=name, scopes=[])  # noqa: S106
        scope["user"] = AuthenticatedUser(user)
        scope.setdefault("state", {})[CLIENT_KEY] = name
        activity = self.activity.setdefault(name, ClientActivity())
        activity.last_seen = time.time()
        activity.open_requests += 1
        try:
            await complete_response(self.app, scope, receive, send)
        finally:
            activity.open_requests -= 1
            activity.last_seen = time.time()


async def _plain(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def complete_response(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` and finish any response it started but left open.

    sse_starlette cancels open event streams at shutdown without the final body message; without
    this uvicorn logs an error and clients see an incomplete chunked read.
    """
    started = finished = False

    async def tracking_send(message: Message) -> None:
        nonlocal started, finished
        if message["type"] == "http.response.start":
            started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            finished = True
        await send(message)

    try:
        await app(scope, receive, tracking_send)
    finally:
        if started and not finished:
            # The connection may already be gone; there is nothing more to tell the client then.
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
