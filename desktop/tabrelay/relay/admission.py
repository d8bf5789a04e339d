"""Admission to the relay: every HTTP request before an upgrade (Host and Origin checks, the
pairing endpoints, the health check, the upgrade's own checks) and the record of who was turned
away and why. It reads no frame (``session.py`` does) and knows nothing of MCP or Qt.
"""

from __future__ import annotations

import email.utils
import http
import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from tabrelay import __version__
from tabrelay.errors import SecretStoreError
from tabrelay.protocol.constants import (
    CONFIG_PATH,
    HEALTH_PATH,
    PAIRING_STATUS_PATH,
    PROTOCOL_VERSION,
    RELAY_PATH,
    CloseCode,
)
from tabrelay.protocol.handshake import proofs_match
from tabrelay.protocol.messages import JsonObject, encode
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.pairing import PAIRING_CODE, Pairing
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.relay.registry import BrowserRegistry

logger = logging.getLogger(__name__)

EXTENSION_ORIGIN = re.compile(r"^chrome-extension://([a-p]{32})$")
SECRETS_LOCKED = "Tabrelay cannot read its credentials now (its keychain is locked)"
Credentials = Callable[[str], list[tuple[str, str]]]  # extension id → [(pairing id, credential)]


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The exact Host header values a request may carry (DESIGN §4.2)."""
    literal = f"[{host}]" if ":" in host else host
    return frozenset({f"{literal}:{port}", f"localhost:{port}"})


@dataclass(frozen=True, slots=True)
class Admitted:
    """An upgrade admission let through: whose extension, and (seed protocol) which pairing
    its ``?token=`` proved; the Tabrelay protocol proves its pairing in the session."""

    extension_id: str
    seed_pairing: str | None


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why the relay last turned a browser of one extension away (the person's status)."""

    extension_id: str
    reason: str
    time: float
    locked: bool = False  # the secrets could not be read: the browser waits, nothing is wrong


class Admission:
    """Answers the relay port's HTTP requests and decides which upgrades go on to a session.

    Every request passes the Host check (421); the health check answers anyone who passes it.
    The config endpoint hands a new credential out only inside a pairing window
    (``pairing.py``); the pairing status endpoint tells an extension what became of its
    request, never a credential. The upgrade needs the Origin of a paired extension (403) and,
    for the seed protocol, its ``?token=`` (401). Failed authentication is rate-limited per
    extension id, and only failures are: a valid credential always gets in.
    """

    def __init__(
        self,
        *,
        credentials: Credentials,
        pairing: Pairing,
        registry: BrowserRegistry,
        hub: EventHub,
        limits: FailureLimits,
    ) -> None:
        self.credentials = credentials
        self.pairing = pairing
        self.limits = limits
        self.rejections: dict[str, Rejection] = {}  # extension id → its latest refusal
        self._registry = registry
        self._hub = hub
        self._port = 0
        self._hosts: frozenset[str] = frozenset()
        self._admitted: dict[uuid.UUID, Admitted] = {}

    def listen_on(self, host: str, port: int) -> None:
        """The address the relay serves (known once bound): the Host check and the config."""
        self._port = port
        self._hosts = allowed_hosts(host, port)

    def take(self, connection: ServerConnection) -> Admitted | None:
        """What ``process_request`` decided for this upgrade (once), ``None`` if it did not."""
        return self._admitted.pop(connection.id, None)

    # --- HTTP ---------------------------------------------------------------------------------

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """websockets' ``process_request``: a response refuses or answers, ``None`` upgrades."""
        hosts = request.headers.get_all("Host")
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            return _json_response(http.HTTPStatus.MISDIRECTED_REQUEST, {"error": "bad_host"})
        url = urlsplit(request.path)
        if url.path == HEALTH_PATH:
            return _json_response(
                http.HTTPStatus.OK,
                {"status": "ok", "version": __version__, "browsers": len(self._registry)},
            )
        if url.path == CONFIG_PATH:
            return await self._config(request, parse_qs(url.query))
        if url.path == PAIRING_STATUS_PATH:
            return self._pairing_status(request, parse_qs(url.query))
        if url.path != RELAY_PATH:
            return _json_response(http.HTTPStatus.NOT_FOUND, {"error": "not_found"})
        return self._admit(connection, request, parse_qs(url.query))

    async def _config(self, request: Request, query: dict[str, list[str]]) -> Response:
        extension_id = _extension_origin(request)
        if extension_id is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        code = _pairing_code(query)
        try:
            token = await self.pairing.claim(extension_id, code)
        except SecretStoreError:
            self.rejected(extension_id, SECRETS_LOCKED, locked=True)
            return _json_response(
                http.HTTPStatus.SERVICE_UNAVAILABLE, {"error": "secrets_unavailable"}
            )
        if token is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "pairing_required"})
        return _json_response(
            http.HTTPStatus.OK,
            {"port": self._port, "token": token, "protocol": PROTOCOL_VERSION},
            _readable_by(extension_id),
        )

    def _pairing_status(self, request: Request, query: dict[str, list[str]]) -> Response:
        """What became of the extension's pairing request: readable by that extension (CORS),
        so it keeps waiting while the person decides and stops after a "no"."""
        extension_id = _extension_origin(request)
        code = _pairing_code(query)
        if extension_id is None or code is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        status, wait = self.pairing.status(extension_id, code)
        body: JsonObject = {"pairing": status}
        if status == "declined":
            body["retry_after"] = int(wait) + 1
        return _json_response(http.HTTPStatus.OK, body, _readable_by(extension_id))

    def _admit(
        self, connection: ServerConnection, request: Request, query: dict[str, list[str]]
    ) -> Response | None:
        extension_id = _extension_origin(request)
        if extension_id is None:
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        tokens = query.get("token")
        # No seed ``?token=``: only the Tabrelay protocol can prove a retired credential.
        if not self.pairing.is_paired(extension_id) and not (
            tokens is None and self.pairing.has_retired(extension_id)
        ):
            self.rejected(extension_id, "it is not paired (it asks to pair by itself)")
            return _json_response(http.HTTPStatus.FORBIDDEN, {"error": "forbidden"})
        seed_pairing = None
        if tokens is not None:  # the seed protocol: token in the query string
            if not self.pairing.settings().allow_query_token:
                return _json_response(
                    http.HTTPStatus.UNAUTHORIZED, {"error": "query_token_disabled"}
                )
            presented = tokens[0] if len(tokens) == 1 else ""
            try:
                credentials = self.credentials(extension_id)
            except SecretStoreError:
                self.rejected(extension_id, SECRETS_LOCKED, locked=True)
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
                self.auth_failed(extension_id, "wrong relay token in the query string")
                return _json_response(http.HTTPStatus.UNAUTHORIZED, {"error": "unauthorized"})
        self._admitted[connection.id] = Admitted(extension_id, seed_pairing)
        return None

    # --- the record of refusals -------------------------------------------------------------

    def rejected(self, extension_id: str, reason: str, *, locked: bool = False) -> None:
        """Remember why a browser was turned away, for the person's status (once a reason)."""
        previous = self.rejections.get(extension_id)
        if previous is None or previous.reason != reason:
            logger.warning("refused a browser of extension %s: %s", extension_id, reason)
            message = f"A browser (chrome-extension://{extension_id}) was refused: {reason}."
            self._hub.publish(
                HubEvent("alert", "", "browser_rejected", params={"message": message})
            )
        self.rejections[extension_id] = Rejection(extension_id, reason, time.time(), locked)

    def accepted(self, extension_id: str) -> None:
        """A browser of this extension authenticated: an earlier refusal is past."""
        self.rejections.pop(extension_id, None)

    def refusal(self, extension_id: str, why: str) -> CloseCode:
        """Record a failed handshake; the close code: 4401, or 4429 while this extension id
        was already cooling down."""
        cooling = self.limits.blocked(extension_id)
        self.auth_failed(extension_id, why)
        return CloseCode.RATE_LIMITED if cooling else CloseCode.AUTH_FAILED

    def auth_failed(self, extension_id: str, why: str) -> None:
        self.rejected(
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
            self._hub.publish(
                HubEvent("alert", "", "auth_rate_limited", params={"message": message})
            )


def _extension_origin(request: Request) -> str | None:
    """The extension id of a request that may see secrets, else ``None``.

    Navigations never qualify (a tab pointed at the URL has no Origin, THREATS C3); nor do
    requests with no Origin, several, or a web Origin.
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


def _pairing_code(query: dict[str, list[str]]) -> str | None:
    codes = query.get("code", [])
    return codes[0] if len(codes) == 1 and PAIRING_CODE.fullmatch(codes[0]) else None


def _readable_by(extension_id: str) -> dict[str, str]:
    """CORS headers that let this extension, and no web page, read the answer."""
    return {"Access-Control-Allow-Origin": f"chrome-extension://{extension_id}", "Vary": "Origin"}


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
