"""The relay server: the extension's WebSocket, the pairing config endpoint and the health check.

Every request passes the Host check (421). The config endpoint hands a new credential out only
inside a pairing window (``pairing.py``). The WebSocket upgrade needs the Origin of a paired
extension (403 before the upgrade); then either the seed protocol's ``?token=`` (checked
before the upgrade) or the challenge–response of ``protocol/handshake.py``, against the
credentials of that extension's pairings; the one that matches names the connection's
pairing. A credential a rotation retired gets the app's proof and a 4410 (pair again), never a
session: a browser that was away learns of the rotation from an app that proved itself. The
pairing status endpoint tells an extension what became of its request (asked, declined), never
a credential. Failed authentication is rate-limited per extension id, and only failures are: a
valid credential always gets in. After authentication a connection becomes a ``Browser`` in the
registry; its frames are parsed strictly, bad ones answered with an error frame and the
connection closed after too many. Close codes are ``CloseCode``. Knows nothing of MCP or Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import http
import ipaddress
import itertools
import logging
import os
import re
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from tabrelay import __version__
from tabrelay.errors import ProtocolViolation, SecretStoreError, StartupError
from tabrelay.protocol.constants import (
    CONFIG_PATH,
    HEALTH_PATH,
    MAX_FRAME_AFTER_AUTH,
    MAX_FRAME_BEFORE_AUTH,
    PAIRING_STATUS_PATH,
    PROTOCOL_VERSION,
    RELAY_PATH,
    CloseCode,
    MessageType,
)
from tabrelay.protocol.handshake import app_proof, extension_proof, new_nonce, proofs_match
from tabrelay.protocol.messages import (
    AuthResponse,
    CdpEvent,
    CommandError,
    CommandResult,
    ExtensionMessage,
    Hello,
    JsonObject,
    Ping,
    Pong,
    Status,
    TabEvent,
    encode,
    parse_extension_message,
)
from tabrelay.relay.browser import DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_PENDING, Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.pairing import PAIRING_CODE, Pairing
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.relay.registry import BrowserRegistry

logger = logging.getLogger(__name__)

EXTENSION_ORIGIN = re.compile(r"^chrome-extension://([a-p]{32})$")
SECRETS_LOCKED = "Tabrelay cannot read its credentials now (its keychain is locked)"
Credentials = Callable[[str], list[tuple[str, str]]]  # extension id → [(pairing id, credential)]
MIN_NONCE_LENGTH = 22  # 16 random bytes in base64url
ANNOUNCE_TIMEOUT = 1.0  # seconds a stopping relay gives its browsers to hear its next port
MAX_VIOLATIONS_PER_MINUTE = 20


def require_loopback(host: str) -> None:
    """Refuse any bind address that is not a loopback literal (DESIGN §4.1).

    Raises:
        StartupError: ``host`` is a name, a wildcard, or a non-loopback address.
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise StartupError(
            f"refusing to listen on {host!r}: Tabrelay listens only on a loopback address "
            "such as 127.0.0.1"
        ) from None
    if not address.is_loopback:
        raise StartupError(
            f"refusing to listen on {host}: Tabrelay listens only on loopback (127.0.0.1), "
            "never on an address other machines can reach"
        )


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The exact Host header values a request may carry (DESIGN §4.2)."""
    literal = f"[{host}]" if ":" in host else host
    return frozenset({f"{literal}:{port}", f"localhost:{port}"})


@dataclass(slots=True)
class _Admission:
    """What process_request decided about a WebSocket upgrade (a seed knows its pairing)."""

    extension_id: str
    seed_pairing: str | None


@dataclass(slots=True)
class _Link:
    connection: ServerConnection
    browser: Browser
    pong: asyncio.Event = field(default_factory=asyncio.Event)
    violations: deque[float] = field(default_factory=deque)
    violation_codes: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why the relay last turned a browser of one extension away (the person's status)."""

    extension_id: str
    reason: str
    time: float
    locked: bool = False  # the secrets could not be read: the browser waits, nothing is wrong


class RelayServer:
    """Serves the relay on ``host:port`` (port 0 picks a free one; see ``port``)."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        credentials: Credentials,
        pairing: Pairing,
        registry: BrowserRegistry,
        hub: EventHub,
        limits: FailureLimits | None = None,
        auth_timeout: float = 5.0,
        ping_interval: float = 15.0,
        pong_timeout: float = 20.0,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        require_loopback(host)
        self.host = host
        self._requested_port = port
        self.port = port
        self._settings_port = 0  # the settings' relay port when this relay started
        self._credentials = credentials
        self.pairing = pairing
        self.registry = registry
        self.hub = hub
        self.limits = limits or FailureLimits()
        self.auth_timeout = auth_timeout
        self.ping_interval = ping_interval
        self.pong_timeout = pong_timeout
        self.command_timeout = command_timeout
        self.max_pending = max_pending
        self._server: Server | None = None
        self._hosts: frozenset[str] = frozenset()
        self._admissions: dict[uuid.UUID, _Admission] = {}
        self._links: dict[str, _Link] = {}
        self._live: set[ServerConnection] = set()
        self._accepted: set[ServerConnection] = set()  # every TCP connection, from its accept
        self._seed_ids = itertools.count(1)
        self.rejections: dict[str, Rejection] = {}  # extension id → its latest refusal

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start listening.

        Raises:
            StartupError: the port is taken or cannot be bound; nothing is left running.
        """
        accepted = self._accepted

        class _Connection(ServerConnection):
            """Registers itself from the TCP accept on, so ``stop`` can drop idle sockets."""

            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)
                accepted.add(self)

            def connection_lost(self, exc: Exception | None) -> None:
                accepted.discard(self)
                super().connection_lost(exc)

        try:
            self._server = await serve(
                self._handle,
                self.host,
                self._requested_port,
                process_request=self._process_request,
                compression=None,  # no permessage-deflate: no compression bombs (THREATS R9)
                max_size=MAX_FRAME_BEFORE_AUTH,
                max_queue=64,
                ping_interval=None,  # the relay protocol has its own ping/pong
                server_header=None,
                create_connection=_Connection,
            )
        except OSError as exc:
            raise StartupError(
                f"cannot listen on {self.host}:{self._requested_port} for the browser relay: "
                f"{os.strerror(exc.errno) if exc.errno else exc}. Is another Tabrelay "
                "(or another program) using the "
                "port? Quit it or choose another relay port."
            ) from None
        self.port = self._server.sockets[0].getsockname()[1]
        self._settings_port = self.pairing.settings().relay_port
        self._hosts = allowed_hosts(self.host, self.port)
        logger.info("relay listening on ws://%s:%d%s", self.host, self.port, RELAY_PATH)

    async def stop(self) -> None:
        if self._server is None:
            return
        await self._announce_next_port()
        self._server.close(close_connections=True)
        # A socket that never sent its request would hold wait_closed() for websockets'
        # open_timeout (10 s); browsers open such sockets in advance (Chrome preconnects to
        # pages it visited), so quitting or restarting must not wait for them.
        for connection in list(self._accepted):
            if connection.protocol.state is State.CONNECTING:
                connection.transport.abort()
        await self._server.wait_closed()
        self._server = None

    async def _announce_next_port(self) -> None:
        """Tell each Tabrelay browser the port in the settings when the person changed it while
        this relay ran (it takes effect at the next start), so it finds the app there. A port
        the settings had at the start was not the one served only because the command line
        named another (``serve --relay-port N``), and the same command serves N again."""
        next_port = self.pairing.settings().relay_port
        if next_port in (0, self.port, self._settings_port):
            return
        frame = encode({"type": MessageType.RELAY_PORT, "port": next_port})
        links = [link for link in self._links.values() if link.browser.hello is not None]
        with contextlib.suppress(TimeoutError):  # a browser that does not read: quit anyway
            async with asyncio.timeout(ANNOUNCE_TIMEOUT):
                await asyncio.gather(
                    *(link.connection.send(frame) for link in links), return_exceptions=True
                )

    async def close_all(self, code: CloseCode, reason: str) -> None:
        """Close every extension connection, authenticated or not (token rotation)."""
        await asyncio.gather(
            *(c.close(code, reason) for c in list(self._live)), return_exceptions=True
        )

    async def close_pairings(self, pairing_ids: set[str], code: CloseCode, reason: str) -> None:
        """Close the connections authenticated by these pairings (they were revoked)."""
        links = [link for link in self._links.values() if link.browser.pairing_id in pairing_ids]
        await asyncio.gather(
            *(link.connection.close(code, reason) for link in links), return_exceptions=True
        )

    # --- HTTP: before any upgrade ----------------------------------------------------------

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        hosts = request.headers.get_all("Host")
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            return _json_response(http.HTTPStatus.MISDIRECTED_REQUEST, {"error": "bad_host"})
        url = urlsplit(request.path)
        if url.path == HEALTH_PATH:
            return _json_response(
                http.HTTPStatus.OK,
                {"status": "ok", "version": __version__, "browsers": len(self.registry)},
            )
        if url.path == CONFIG_PATH:
            return await self._config(request, parse_qs(url.query))
        if url.path == PAIRING_STATUS_PATH:
            return self._pairing_status(request, parse_qs(url.query))
        if url.path != RELAY_PATH:
            return _json_response(http.HTTPStatus.NOT_FOUND, {"error": "not_found"})
        return self._admit(connection, request, parse_qs(url.query))

    async def _config(self, request: Request, query: dict[str, list[str]]) -> Response:
        extension_id = self._extension_origin(request)
        if extension_id is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        code = _pairing_code(query)
        try:
            token = await self.pairing.claim(extension_id, code)
        except SecretStoreError:
            self._rejected(extension_id, SECRETS_LOCKED, locked=True)
            return _json_response(
                http.HTTPStatus.SERVICE_UNAVAILABLE, {"error": "secrets_unavailable"}
            )
        if token is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "pairing_required"})
        return _json_response(
            http.HTTPStatus.OK,
            {"port": self.port, "token": token, "protocol": PROTOCOL_VERSION},
            {"Access-Control-Allow-Origin": f"chrome-extension://{extension_id}", "Vary": "Origin"},
        )

    def _pairing_status(self, request: Request, query: dict[str, list[str]]) -> Response:
        """What became of the extension's pairing request: readable by that extension (CORS),
        so it keeps waiting while the person decides and stops after a "no"."""
        extension_id = self._extension_origin(request)
        code = _pairing_code(query)
        if extension_id is None or code is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        status, wait = self.pairing.status(extension_id, code)
        body: JsonObject = {"pairing": status}
        if status == "declined":
            body["retry_after"] = int(wait) + 1
        return _json_response(
            http.HTTPStatus.OK,
            body,
            {"Access-Control-Allow-Origin": f"chrome-extension://{extension_id}", "Vary": "Origin"},
        )

    def _admit(
        self, connection: ServerConnection, request: Request, query: dict[str, list[str]]
    ) -> Response | None:
        extension_id = self._extension_origin(request)
        if extension_id is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        if not self.pairing.is_paired(extension_id) and not (
            _no_query_token(query) and self.pairing.has_retired(extension_id)
        ):
            self._rejected(extension_id, "it is not paired (it asks to pair by itself)")
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        tokens = query.get("token")
        seed_pairing = None
        if tokens is not None:  # the seed protocol: token in the query string
            if not self.pairing.settings().allow_query_token:
                return _json_response(
                    http.HTTPStatus.UNAUTHORIZED, {"error": "query_token_disabled"}
                )
            presented = tokens[0] if len(tokens) == 1 else ""
            try:
                credentials = self._credentials(extension_id)
            except SecretStoreError:
                self._rejected(extension_id, SECRETS_LOCKED, locked=True)
                return _json_response(
                    http.HTTPStatus.SERVICE_UNAVAILABLE, {"error": "secrets_unavailable"}
                )
            seed_pairing = next(
                (p for p, token in credentials if proofs_match(token, presented)), None
            )
            if seed_pairing is None:
                if self.limits.blocked(extension_id):
                    retry = str(int(self.limits.retry_after(extension_id)) + 1)
                    return _json_response(
                        http.HTTPStatus.TOO_MANY_REQUESTS,
                        {"error": "rate_limited"},
                        {"Retry-After": retry},
                    )
                self._auth_failed(extension_id, "wrong relay token in the query string")
                return _json_response(http.HTTPStatus.UNAUTHORIZED, {"error": "unauthorized"})
        self._admissions[connection.id] = _Admission(extension_id, seed_pairing)
        return None

    def _extension_origin(self, request: Request) -> str | None:
        """The extension id of a request that may see secrets, else ``None``.

        Navigations never qualify (a tab pointed at the URL has no Origin, THREATS C3); nor
        do requests with no Origin, several, or a web Origin.
        """
        headers = request.headers
        if headers.get("Sec-Fetch-Mode", "").lower() == "navigate":
            return None
        if headers.get("Sec-Fetch-Dest", "").lower() in {"document", "iframe", "frame"}:
            return None
        origins = headers.get_all("Origin")
        if len(origins) != 1:
            return None
        match = EXTENSION_ORIGIN.match(origins[0])
        return match.group(1) if match else None

    def _rejected(self, extension_id: str, reason: str, *, locked: bool = False) -> None:
        """Remember why a browser was turned away, for the person's status (once a reason)."""
        previous = self.rejections.get(extension_id)
        if previous is None or previous.reason != reason:
            logger.warning("refused a browser of extension %s: %s", extension_id, reason)
            message = f"A browser (chrome-extension://{extension_id}) was refused: {reason}."
            self.hub.publish(HubEvent("alert", "", "browser_rejected", params={"message": message}))
        self.rejections[extension_id] = Rejection(extension_id, reason, time.time(), locked)

    def _auth_failed(self, extension_id: str, why: str) -> None:
        self._rejected(
            extension_id,
            "its credential is not valid (it was unpaired, or Tabrelay's data was reset): press "
            "Pair in the extension's popup to pair it again",
        )
        logger.warning("relay authentication failed for extension %s: %s", extension_id, why)
        if self.limits.record_failure(extension_id):
            message = (
                f"{self.limits.max_failures} failed connection attempts as extension "
                f"{extension_id} in {self.limits.window:g} s; the relay refuses its failing ones "
                f"for {self.limits.cooldown:g} s (the paired browser still connects). A program "
                "on this computer may be guessing a browser's credential."
            )
            logger.warning("possible attack: %s", message)
            self.hub.publish(
                HubEvent("alert", "", "auth_rate_limited", params={"message": message})
            )

    # --- WebSocket --------------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        admission = self._admissions.pop(connection.id, None)
        if admission is None:  # cannot happen: process_request admitted it
            await connection.close(CloseCode.AUTH_FAILED, "not admitted")
            return
        self._live.add(connection)
        try:
            hello: Hello | None = None
            pairing_id = admission.seed_pairing
            if pairing_id is None:
                authenticated = await self._authenticate(connection, admission.extension_id)
                if authenticated is None:
                    return
                hello, pairing_id = authenticated
            connection.protocol.max_message_size = MAX_FRAME_AFTER_AUTH
            self.rejections.pop(admission.extension_id, None)
            browser = Browser(
                connection,
                browser_id=self._browser_id(admission.extension_id, hello),
                extension_id=admission.extension_id,
                pairing_id=pairing_id,
                hello=hello,
                command_timeout=self.command_timeout,
                max_pending=self.max_pending,
                on_change=self.registry.updated,
            )
            if not await self._take_slot(browser):
                await connection.close(
                    CloseCode.DUPLICATE_BROWSER, "this browser is already connected"
                )
                return
            await self._serve(connection, browser)
        finally:
            self._live.discard(connection)

    async def _authenticate(
        self, connection: ServerConnection, extension_id: str
    ) -> tuple[Hello, str] | None:
        """Run the challenge–response against each credential of the extension's pairings,
        then wait for hello: hello and the matching pairing, or ``None`` if it failed (closed).
        """
        app_nonce = new_nonce()
        try:
            await connection.send(
                encode(
                    {
                        "type": MessageType.AUTH_CHALLENGE,
                        "protocol": PROTOCOL_VERSION,
                        "nonce": app_nonce,
                    }
                )
            )
            answer = await self._receive_first(connection)
            if not isinstance(answer, AuthResponse) or len(answer.nonce) < MIN_NONCE_LENGTH:
                await self._refuse(connection, extension_id, "it did not answer the challenge")
                return None
            nonces = {"app_nonce": app_nonce, "extension_nonce": answer.nonce}
            try:
                credentials = self._credentials(extension_id)
            except SecretStoreError:
                self._rejected(extension_id, SECRETS_LOCKED, locked=True)
                await connection.close(CloseCode.SECRETS_UNAVAILABLE, "credentials locked")
                return None
            matched = next(
                (
                    (pairing_id, token)
                    for pairing_id, token in credentials
                    if proofs_match(extension_proof(token, port=self.port, **nonces), answer.proof)
                ),
                None,
            )
            if matched is None:
                try:
                    if await self._replaced(connection, extension_id, answer.proof, nonces):
                        return None
                except SecretStoreError:  # its retired credentials cannot be read now: it
                    # waits, as for a locked current one, never "pair again" (4401)
                    self._rejected(extension_id, SECRETS_LOCKED, locked=True)
                    await connection.close(CloseCode.SECRETS_UNAVAILABLE, "credentials locked")
                    return None
                await self._refuse(connection, extension_id, "wrong proof in auth.response")
                return None
            pairing_id, token = matched
            await connection.send(
                encode(
                    {
                        "type": MessageType.AUTH_OK,
                        "proof": app_proof(token, port=self.port, **nonces),
                    }
                )
            )
            hello = await self._receive_first(connection)
            if not isinstance(hello, Hello):
                await connection.close(CloseCode.PROTOCOL_ERROR, "expected hello")
                return None
            return hello, pairing_id
        except TimeoutError:
            await connection.close(CloseCode.AUTH_TIMEOUT, "authentication timed out")
        except ConnectionClosed:
            pass
        return None

    async def _replaced(
        self, connection: ServerConnection, extension_id: str, proof: str, nonces: dict[str, str]
    ) -> bool:
        """A browser that was away still proves a credential a rotation replaced: prove the
        app with it (the browser then trusts the close code), wait for its hello, close with
        4410 so it asks to pair again, and forget that credential. Whether it was one.

        Raises:
            ConnectionClosed: the browser went away meanwhile.
            TimeoutError: it sent no hello in time.
            SecretStoreError: the retired credentials cannot be read (a locked keychain).
        """
        if not self.pairing.has_retired(extension_id):
            return False
        retired = await asyncio.to_thread(self.pairing.retired_credentials, extension_id)
        matched = next(
            (
                (retired_id, token)
                for retired_id, token in retired
                if proofs_match(extension_proof(token, port=self.port, **nonces), proof)
            ),
            None,
        )
        if matched is None:
            return False
        retired_id, token = matched
        await connection.send(
            encode(
                {"type": MessageType.AUTH_OK, "proof": app_proof(token, port=self.port, **nonces)}
            )
        )
        # Closing before its hello could reach it before it checked the proof (WebCrypto is
        # asynchronous); then it would not trust the close code.
        try:
            await self._receive_first(connection)
        finally:
            await connection.close(CloseCode.TOKEN_ROTATED, "every browser credential was replaced")
        await asyncio.to_thread(self.pairing.forget_retired, retired_id)
        logger.info(
            "a browser of extension %s missed a rotation: it was asked to pair again", extension_id
        )
        return True

    async def _refuse(self, connection: ServerConnection, extension_id: str, why: str) -> None:
        """Close a failed handshake: 4401, or 4429 while this extension id is cooling down."""
        cooling = self.limits.blocked(extension_id)
        self._auth_failed(extension_id, why)
        if cooling:
            await connection.close(CloseCode.RATE_LIMITED, "too many failed attempts")
        else:
            await connection.close(CloseCode.AUTH_FAILED, "authentication failed")

    async def _receive_first(self, connection: ServerConnection) -> ExtensionMessage | None:
        """One handshake frame, parsed; ``None`` when it is malformed."""
        async with asyncio.timeout(self.auth_timeout):
            frame = await connection.recv()
        if not isinstance(frame, str):
            return None
        try:
            return parse_extension_message(frame)
        except ProtocolViolation:
            return None

    def _browser_id(self, extension_id: str, hello: Hello | None) -> str:
        if hello is not None and hello.instance:
            digest = hashlib.sha256(f"{extension_id}/{hello.instance}".encode()).hexdigest()
            return digest[:8]
        return f"seed-{next(self._seed_ids)}"

    async def _take_slot(self, browser: Browser) -> bool:
        """Refuse a second connection of a browser instance whose first one still answers."""
        existing = self._links.get(browser.id)
        if existing is not None:
            if await self._answers_ping(existing, min(2.0, self.pong_timeout)):
                logger.warning("refused a second connection for browser %s", browser.id)
                self.hub.publish(
                    HubEvent(
                        "alert",
                        browser.id,
                        "duplicate_refused",
                        params={
                            "message": f"a second connection claiming to be {browser.name} "
                            "was refused while the first one is healthy"
                        },
                    )
                )
                return False
            self._drop(existing, "replaced by a new connection")
            await existing.connection.close(
                CloseCode.HEARTBEAT_LOST, "replaced by a new connection"
            )
        return True

    async def _answers_ping(self, link: _Link, timeout: float) -> bool:
        link.pong.clear()
        try:
            await link.connection.send(encode({"type": MessageType.PING}))
            async with asyncio.timeout(timeout):
                await link.pong.wait()
        except (TimeoutError, ConnectionClosed):
            return False
        return True

    async def _serve(self, connection: ServerConnection, browser: Browser) -> None:
        link = _Link(connection, browser)
        self._links[browser.id] = link
        self.registry.add(browser)
        logger.info(
            "browser %s connected: %s (%s, extension %s)",
            browser.id,
            browser.name,
            "seed protocol" if browser.seed else f"protocol {browser.hello.protocol}",  # type: ignore[union-attr]
            browser.extension_id,
        )
        heartbeat = asyncio.create_task(self._heartbeat(link))
        reason = "connection closed"
        try:
            async for frame in connection:
                if not isinstance(frame, str):
                    reason = "sent a binary frame"
                    await connection.close(1003, "binary frames are not supported")
                    break
                try:
                    message = parse_extension_message(frame)
                except ProtocolViolation as violation:
                    await self._violation(link, violation)
                    continue
                await self._dispatch(link, message)
        except ConnectionClosed as closed:
            reason = f"connection closed ({closed.rcvd.code if closed.rcvd else 'abnormally'})"
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            self._drop(link, reason)

    def _drop(self, link: _Link, reason: str) -> None:
        browser = link.browser
        if self._links.get(browser.id) is link:
            del self._links[browser.id]
        if not browser.closed:
            browser.disconnect(reason)
            self.registry.remove(browser)
            logger.info("browser %s disconnected: %s", browser.id, reason)

    async def _dispatch(self, link: _Link, message: ExtensionMessage) -> None:
        browser = link.browser
        match message:
            case CommandResult() | CommandError():
                browser.resolve(message)
            case CdpEvent():
                self.hub.publish(
                    HubEvent("cdp", browser.id, message.method, message.tab_id, message.params)
                )
            case TabEvent():
                browser.apply_tab_event(message)
                self.hub.publish(
                    HubEvent(
                        "tab", browser.id, message.event, message.tab.id, message.tab.to_wire()
                    )
                )
            case Status():
                browser.apply_status(message)
            case Ping():
                with contextlib.suppress(ConnectionClosed):
                    await link.connection.send(encode({"type": MessageType.PONG}))
            case Pong():
                link.pong.set()
            case _:
                await self._violation(
                    link, ProtocolViolation("unexpected", "this message is not expected now")
                )

    async def _violation(self, link: _Link, violation: ProtocolViolation) -> None:
        now = time.monotonic()
        link.violations.append(now)
        while link.violations and link.violations[0] < now - 60:
            link.violations.popleft()
        if violation.code not in link.violation_codes:  # one log line per class, no payload
            link.violation_codes.add(violation.code)
            logger.warning("browser %s sent an invalid frame (%s)", link.browser.id, violation.code)
        with contextlib.suppress(ConnectionClosed):
            if len(link.violations) > MAX_VIOLATIONS_PER_MINUTE:
                await link.connection.close(CloseCode.PROTOCOL_ERROR, "too many invalid messages")
            else:
                await link.connection.send(
                    encode(
                        {
                            "type": MessageType.ERROR,
                            "code": violation.code,
                            "message": violation.message,
                        }
                    )
                )

    async def _heartbeat(self, link: _Link) -> None:
        while True:
            await asyncio.sleep(self.ping_interval)
            if await self._answers_ping(link, self.pong_timeout):
                continue
            if link.browser.closed or link.connection.state is not State.OPEN:
                return  # the read loop reports the close
            logger.warning(
                "browser %s stopped answering pings; closing its connection", link.browser.id
            )
            self.hub.publish(
                HubEvent(
                    "alert",
                    link.browser.id,
                    "heartbeat_lost",
                    params={"message": f"{link.browser.name} stopped answering"},
                )
            )
            with contextlib.suppress(ConnectionClosed):
                await link.connection.close(CloseCode.HEARTBEAT_LOST, "no pong")
            return


def _pairing_code(query: dict[str, list[str]]) -> str | None:
    codes = query.get("code", [])
    return codes[0] if len(codes) == 1 and PAIRING_CODE.fullmatch(codes[0]) else None


def _no_query_token(query: dict[str, list[str]]) -> bool:
    """No seed ``?token=``: only the Tabrelay protocol can prove a retired credential."""
    return "token" not in query


def _json_response(
    status: http.HTTPStatus, body: JsonObject, extra: dict[str, str] | None = None
) -> Response:
    payload = encode(body).encode("utf-8")
    headers: list[tuple[str, str]] = [
        ("Date", email.utils.formatdate(usegmt=True)),
        ("Connection", "close"),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(payload))),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
    ]
    headers.extend((extra or {}).items())
    return Response(status.value, status.phrase, Headers(headers), payload)
