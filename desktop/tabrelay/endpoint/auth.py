"""Bearer-token authentication for the MCP endpoint, as plain ASGI (DESIGN §4.6, THREATS M1, M4).

Every HTTP request needs ``Authorization: Bearer <client token>``; the token table is read per
request, so a revoked token stops working at once. A success marks the request with the client's
name, both for our tools and for the SDK's session binding, which then refuses a session id
presented with another client's token. Failures get a 401 whose JSON body and
``WWW-Authenticate: Bearer`` error (RFC 6750 §3; no OAuth metadata) say whether no token was
sent, the header was malformed or the token is not valid, never which clients exist or existed.
They are rate-limited per offender: by the browser Origin, else by a digest of the wrong
credential, else by the source address. A valid token is never rate-limited. This module does
not limit what authenticated clients do (sessions, calls): see ``server``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tabrelay.relay.ratelimit import FailureLimits

logger = logging.getLogger(__name__)

CLIENT_KEY = "tabrelay_client"
RATE_LIMITED = "mcp_auth_rate_limited"  # the alert kind passed to ``on_limit``
HINT = "Send Authorization: Bearer <client token>; `tabrelay client add NAME` creates one."
SHOWN_ORIGIN = 100  # characters of an Origin shown in an alert
CATCH_UP_TIMEOUT = 5.0  # seconds an unknown token waits for what another process changed
B64TOKEN = re.compile(rb"[A-Za-z0-9._~+/-]+=*")  # RFC 6750 §2.1


@dataclass(frozen=True)
class Refusal:
    """Why a request got 401: an RFC 6750 §3.1 error code and a description for people.

    The description goes into a quoted-string as is, so it holds no '"' or '\\'.
    """

    error: str
    description: str


# The MCP SDK's own middleware also sends invalid_token when no token was sent.
MISSING = Refusal("invalid_token", "no token was sent")
INVALID = Refusal("invalid_token", "the token is not valid (revoked or mistyped)")
MALFORMED = Refusal("invalid_request", "malformed Authorization header")


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


def _header(scope: Scope, name: bytes) -> bytes | None:
    """The last value of header ``name`` (lower case), or ``None``."""
    found = None
    for key, value in scope.get("headers", []):
        if key == name:
            found = value
    return found


def _authorizations(scope: Scope) -> list[bytes]:
    return [value for key, value in scope.get("headers", []) if key == b"authorization"]


def _refusal(scope: Scope) -> Refusal:
    """Why a request whose token matched no client is refused; the same for every bad token."""
    values = _authorizations(scope)
    if len(values) > 1:
        return MALFORMED
    credential = values[0].strip() if values else b""
    if not credential:
        return MISSING
    scheme, _, token = credential.partition(b" ")
    if scheme.lower() != b"bearer":
        return MALFORMED
    token = token.strip()
    if not token:
        return MISSING
    return INVALID if B64TOKEN.fullmatch(token) else MALFORMED


def _bearer_token(credential: bytes) -> bytes:
    """The token of ``Bearer <token>``; empty for any other scheme or an empty token."""
    scheme, _, token = credential.partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" else b""


def _shown(value: bytes) -> str:
    """An attacker-chosen header value, made safe to show in the dashboard's log."""
    text = "".join(c if c.isprintable() else "?" for c in value.decode("latin-1"))
    return text if len(text) <= SHOWN_ORIGIN else text[: SHOWN_ORIGIN - 1] + "…"


class BearerAuth:
    def __init__(
        self,
        app: ASGIApp,
        tokens: Callable[[], dict[str, str]],
        *,
        catch_up: Callable[[], Awaitable[None]] | None = None,
        limits: FailureLimits | None = None,
        on_limit: Callable[[str, str], None] | None = None,
    ) -> None:
        self.app = app
        self._tokens = tokens
        self._catch_up = catch_up
        self.limits = limits or FailureLimits(max_failures=20, window=10, cooldown=30)
        self._on_limit = on_limit
        self.activity: dict[str, ClientActivity] = {}

    def identify(self, scope: Scope) -> str | None:
        """The name of the client whose token the request presents, else ``None``."""
        values = _authorizations(scope)
        # Two credentials are ambiguous (RFC 9110 §11.6.2 has one): refuse rather than pick one.
        token = _bearer_token(values[0].strip()) if len(values) == 1 else b""
        if not token:
            return None
        # Compare digests: equal length whatever was presented, so length leaks nothing.
        given = hashlib.sha256(token).digest()
        found = None
        for name, known in self._tokens().items():
            if hmac.compare_digest(given, hashlib.sha256(known.encode("utf-8")).digest()):
                found = name
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        name = self.identify(scope)
        if name is None and self._catch_up is not None and self._may_be_new(scope):
            # A token made a moment ago by another process (`tabrelay client add`) works at
            # once: read what changed before refusing (bounded; a look, when nothing did).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CATCH_UP_TIMEOUT):
                    await self._catch_up()
            name = self.identify(scope)
        if name is None:
            await self._refuse(scope, send)
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

    def _may_be_new(self, scope: Scope) -> bool:
        """A bearer token is presented and its sender is not cooling down."""
        credential = (_header(scope, b"authorization") or b"").strip()
        if not _bearer_token(credential):
            return False
        return not self.limits.blocked(self._offender(scope, credential)[0])

    async def _refuse(self, scope: Scope, send: Send) -> None:
        """Answer a request without a valid token: 429 while its key cools down, else 401."""
        credential = (_header(scope, b"authorization") or b"").strip()
        presented = bool(_bearer_token(credential)) or (
            bool(credential) and credential.lower() != b"bearer"
        )
        key, offender = self._offender(scope, credential if presented else b"")
        if self.limits.blocked(key):
            retry = int(self.limits.retry_after(key)) + 1
            await _respond(
                send,
                429,
                b"Too many failed attempts; retry later",
                [(b"retry-after", str(retry).encode())],
            )
            return
        if self.limits.record_failure(key):
            message = (
                f"{self.limits.max_failures} MCP requests {offender} failed authentication in "
                f"{self.limits.window:g} s; its requests are refused for "
                f"{self.limits.cooldown:g} s. Clients with a valid token still work."
            )
            logger.warning("possible attack: %s", message)
            if self._on_limit is not None:
                self._on_limit(RATE_LIMITED, message)
        refusal = _refusal(scope)
        body = {
            "error": refusal.error,
            "error_description": refusal.description,
            "hint": HINT,
        }
        challenge = (
            f'Bearer realm="tabrelay", error="{refusal.error}", '
            f'error_description="{refusal.description}"'
        )
        await _respond(
            send,
            401,
            json.dumps(body).encode(),
            [(b"www-authenticate", challenge.encode())],
            content_type=b"application/json",
        )

    def _offender(self, scope: Scope, credential: bytes) -> tuple[Hashable, str]:
        """What a failure counts against, and how an alert names it.

        Anything with a browser Origin first, all together: MCP clients send none, and a page
        can vary the token it sends or the subdomain it serves from, so one key for web pages
        means one alert per cool-down however many origins they use. Keys hold digests, so
        neither a credential nor a huge header is kept.
        """
        origin = _header(scope, b"origin")
        if origin is not None:
            return ("origin",), f"from web pages (the latest: {_shown(origin)})"
        if credential:
            key = ("credential", hashlib.sha256(credential).digest())
            return key, "with the same wrong client token (a program may be guessing one)"
        client = scope.get("client")
        source = str(client[0]) if client else "an unknown address"
        return ("source", source), f"without a client token from {source}"


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    *,
    content_type: bytes = b"text/plain; charset=utf-8",
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
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
