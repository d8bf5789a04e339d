"""The MCP sessions each client holds, capped per client over both transports (THREATS M6), and
told when they end (what an agent session recorded ends with it).

The SDK caps only all clients together, so one client could take every slot; here each client
has its own cap, and a client at its cap is refused with a message it can relay while every
other client goes on. ``SessionCap`` wraps the SDK's Streamable HTTP app; the /sse endpoint
reserves its slots from the same ``ClientSessions``. No I/O of its own.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tabrelay.endpoint.auth import client_of
from tabrelay.listeners import Listeners

logger = logging.getLogger(__name__)

SESSIONS_PER_CLIENT = 16  # Streamable HTTP and /sse together; 2026-07-28 clients hold none
SESSION_IDLE_TIMEOUT = 5 * 60.0
SESSION_SWEEP_INTERVAL = 30.0  # how late an idle session's end may be noticed, at most
SESSIONS_CAPPED = "mcp_sessions_capped"  # the alert kind passed to ``on_limit``
PROTOCOL_VERSION_HEADER = "mcp-protocol-version"
# The SDK's /sse stream names its session first: "event: endpoint" with the path to post to.
_SSE_SESSION = re.compile(rb"[?&]session_id=([0-9a-f]{32})\b")


def session_key(session_id: str) -> str:
    """What Tabrelay keeps of an MCP session's id (its recordings' key): a digest, since the id
    itself is a credential of sorts."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:12]


@dataclass
class _Session:
    """A Streamable HTTP session as seen from outside the SDK: whose, and whether in use."""

    id: str
    client: str
    in_flight: int = 1  # the request that opened it
    idle_since: float = 0.0


class ClientSessions:
    """The sessions each client holds over both transports, capped per client; no I/O.

    The SDK tracks Streamable HTTP sessions privately, so this follows what it documents
    (``StreamableHTTPSessionManager``): a session opens when a request without a session id is
    answered below 400 with an ``Mcp-Session-Id``; it ends when a DELETE succeeds, when its id
    answers 404, or once no request of it (an open GET stream included) has been in flight for
    ``idle_timeout``, the value the SDK is given. An /sse session lasts as long as its stream.
    ``ended`` tells ``(client, session_key(id))`` once for each session that ends (an idle one
    when ``expire`` or a count finds it idle).
    """

    def __init__(
        self,
        *,
        per_client: int,
        idle_timeout: float,
        on_limit: Callable[[str, str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_client = per_client
        self.idle_timeout = idle_timeout
        self._on_limit = on_limit
        self.ended: Listeners[[str, str]] = Listeners("MCP sessions ended")
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._reserved: Counter[str] = Counter()  # openings not yet answered, and /sse streams
        self._capped: set[str] = set()  # clients refused since they last opened one

    def counts(self) -> dict[str, int]:
        """How many sessions each client holds now (those opening included)."""
        self.expire()
        held = Counter(session.client for session in self._sessions.values())
        held.update(self._reserved)
        return {client: count for client, count in held.items() if count > 0}

    def reserve(self, client: str) -> str | None:
        """Take a slot for a session ``client`` opens; else the refusal to send, and no slot."""
        held = self.counts().get(client, 0)
        if held >= self.per_client:
            sessions = "session" if held == 1 else "sessions"
            if client not in self._capped:
                self._capped.add(client)
                message = (
                    f"MCP client {client} holds {held} {sessions}, the most one client may "
                    "have; its new sessions are refused until it closes some or they stay "
                    f"unused for {_duration(self.idle_timeout)}. Other clients are not affected."
                )
                logger.warning("%s", message)
                if self._on_limit is not None:
                    self._on_limit(SESSIONS_CAPPED, message)
            return (
                f"Too many open sessions: MCP client {client!r} holds {held} MCP {sessions}, "
                "the most one client may have; close some (quit the agent's other conversations "
                "or windows) and try again. Unused sessions end after "
                f"{_duration(self.idle_timeout)}."
            )
        self._capped.discard(client)
        self._reserved[client] += 1
        return None

    def release(self, client: str) -> None:
        """Give back a slot ``reserve`` took (an opening refused, an /sse stream closed)."""
        self._reserved[client] -= 1
        if self._reserved[client] <= 0:
            del self._reserved[client]

    def opened(self, client: str, session_id: str) -> _Session:
        """The reserved slot became session ``session_id``, whose opening request runs."""
        self.release(client)
        session = self._sessions[session_id] = _Session(session_id, client)
        return session

    def find(self, client: str, session_id: str) -> _Session | None:
        """``client``'s live session ``session_id``; another client's is not found here."""
        session = self._sessions.get(session_id)
        if session is None or session.client != client:
            return None
        if self._expired(session):
            self.forget(session)
            return None
        return session

    def begin(self, session: _Session) -> None:
        session.in_flight += 1

    def end(self, session: _Session) -> None:
        session.in_flight -= 1
        if not session.in_flight:
            session.idle_since = self._clock()

    def forget(self, session: _Session) -> None:
        if self._sessions.get(session.id) is session:
            del self._sessions[session.id]
            self.end_of(session.client, session.id)

    def end_of(self, client: str, session_id: str) -> None:
        """Session ``session_id`` of ``client`` ended (forgotten, expired, its stream closed)."""
        self.ended.tell(client, session_key(session_id))

    def expire(self) -> None:
        """End the sessions idle for ``idle_timeout`` (the SDK has ended them by now)."""
        for session in [s for s in self._sessions.values() if self._expired(s)]:
            self.forget(session)

    def _expired(self, session: _Session) -> bool:
        return not session.in_flight and self._clock() - session.idle_since >= self.idle_timeout


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} s"


def _too_many_sessions(message: str) -> Response:
    """A JSON-RPC error, so the SDK client raises it with this message (not a bare status)."""
    body = JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message)
    )
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=429,
        media_type="application/json",
    )


class SessionCap:
    """The SDK's Streamable HTTP app behind a per-client session cap, as raw ASGI."""

    def __init__(self, app: ASGIApp, sessions: ClientSessions) -> None:
        self._app = app
        self._sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = client_of(scope) or ""  # always set behind BearerAuth
        # Read the headers as the session manager does (the first of each).
        headers = Headers(scope=scope)
        version = headers.get(PROTOCOL_VERSION_HEADER)
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._app(scope, receive, send)  # the 2026-07-28 protocol has no sessions
        elif session_id is None:
            await self._open(client, scope, receive, send)
        else:
            await self._use(client, session_id, scope, receive, send)

    async def _open(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._sessions.reserve(client)
        if refusal is not None:
            await _too_many_sessions(refusal)(scope, receive, send)
            return
        session: _Session | None = None

        async def watch(message: Message) -> None:
            nonlocal session
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if opened:
                    session = self._sessions.opened(client, opened)
            await send(message)

        completed = False
        try:
            await self._app(scope, receive, watch)
            completed = True
        finally:
            if session is None:
                self._sessions.release(client)
            else:
                self._sessions.end(session)
                if not completed:  # the SDK discards a session whose opening did not finish
                    self._sessions.forget(session)

    async def _use(
        self, client: str, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        session = self._sessions.find(client, session_id)
        if session is None:  # unknown, expired or another client's: the SDK answers 404
            await self._app(scope, receive, send)
            return
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self._sessions.begin(session)
        try:
            await self._app(scope, receive, watch)
        finally:
            self._sessions.end(session)
            deleted = scope["method"] == "DELETE" and status is not None and status < 300
            if deleted or status == 404:
                self._sessions.forget(session)


class SseSessionCap:
    """GET /sse within the client's session cap (the SDK's SSE transport has none); the session
    the stream names ends with the stream."""

    def __init__(self, sse: ASGIApp, sessions: ClientSessions) -> None:
        self._sse = sse
        self._sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = client_of(scope) or ""  # always set behind BearerAuth
        refusal = self._sessions.reserve(client)
        if refusal is not None:
            await PlainTextResponse(refusal, status_code=429)(scope, receive, send)
            return
        named: str | None = None

        async def watch(message: Message) -> None:
            nonlocal named
            if named is None and message["type"] == "http.response.body":
                found = _SSE_SESSION.search(message.get("body", b""))
                if found:
                    named = found.group(1).decode()
            await send(message)

        try:
            await self._sse(scope, receive, watch)
        except ValueError:
            pass  # a bad Host or Origin: the SDK's connect_sse already answered 421 or 403
        finally:
            self._sessions.release(client)
            if named is not None:
                self._sessions.end_of(client, named)
