"""One extension connection, from its admitted upgrade to its close: the handshake, the
``Browser`` it becomes in the registry, the dispatch of its frames, its heartbeat and its close
codes (``CloseCode``). It answers no HTTP (``admission.py`` does) and knows nothing of MCP or Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from tabrelay.errors import ProtocolViolation, SecretStoreError
from tabrelay.protocol.constants import MAX_FRAME_AFTER_AUTH, PROTOCOL_VERSION, CloseCode
from tabrelay.protocol.handshake import app_proof, extension_proof, new_nonce, proofs_match
from tabrelay.protocol.messages import (
    AuthChallenge,
    AuthOk,
    AuthResponse,
    CdpEvent,
    CommandError,
    CommandResult,
    ErrorNotice,
    ExtensionMessage,
    HeldDownload,
    Hello,
    Ping,
    Pong,
    Status,
    TabEvent,
    encode,
    parse_extension_message,
    uncollected,
)
from tabrelay.relay.admission import SECRETS_LOCKED, Admission, Admitted
from tabrelay.relay.browser import DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_PENDING, Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.registry import BrowserRegistry

logger = logging.getLogger(__name__)

MIN_NONCE_LENGTH = 22  # 16 random bytes in base64url
MAX_VIOLATIONS_PER_MINUTE = 20
PONG_FRAME = encode(Pong().to_wire())


@dataclass(frozen=True, slots=True)
class SessionTiming:
    """How long a session waits for each thing, and how much it lets pile up."""

    auth_timeout: float = 5.0
    ping_interval: float = 15.0
    pong_timeout: float = 20.0
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    max_pending: int = DEFAULT_MAX_PENDING


class ExtensionSession:
    """Runs one admitted connection: ``run`` returns when it is closed and its browser gone.

    The seed protocol's ``?token=`` was checked at admission; the Tabrelay protocol runs the
    challenge–response of ``protocol/handshake.py`` against the credentials of the extension's
    pairings, and the one that matches names the connection's pairing. A credential a rotation
    retired gets the app's proof and a 4410 (pair again), never a session: a browser that was
    away learns of the rotation from an app that proved itself. One browser instance has one
    connection: a second is refused while the first still answers pings. Frames are parsed
    strictly; a bad one is answered with an error frame, and too many close the connection.
    """

    def __init__(
        self,
        connection: ServerConnection,
        admitted: Admitted,
        *,
        port: int,
        admission: Admission,
        registry: BrowserRegistry,
        hub: EventHub,
        timing: SessionTiming,
        seed_ids: Iterator[int],
    ) -> None:
        self._connection = connection
        self._admitted = admitted
        self._port = port
        self._admission = admission
        self._registry = registry
        self._hub = hub
        self._timing = timing
        self._seed_ids = seed_ids
        self._violations: deque[float] = deque()
        self._violation_codes: set[str] = set()

    async def run(self) -> None:
        connection, extension_id = self._connection, self._admitted.extension_id
        hello: Hello | None = None
        pairing_id, credential = self._admitted.seed_pairing, None
        if pairing_id is None:
            authenticated = await self._authenticate()
            if authenticated is None:
                return
            hello, pairing_id, credential = authenticated
        connection.protocol.max_message_size = MAX_FRAME_AFTER_AUTH
        self._admission.accepted(extension_id)
        browser = Browser(
            connection,
            browser_id=self._browser_id(hello),
            extension_id=extension_id,
            pairing_id=pairing_id,
            hello=hello,
            command_timeout=self._timing.command_timeout,
            max_pending=self._timing.max_pending,
            on_change=self._registry.updated,
        )
        if not await self._take_slot(browser):
            await connection.close(CloseCode.DUPLICATE_BROWSER, "this browser is already connected")
            return
        # Nothing awaits between this check and registry.add (in _serve): a revoke or a
        # rotation that landed while the handshake or _take_slot waited is seen here, and one
        # that lands later finds the browser in the registry and closes it there.
        try:
            paired = self._still_paired(pairing_id, credential)
        except SecretStoreError:  # the keychain locked meanwhile: it waits, never admitted
            await self._locked()
            return
        if not paired:
            await connection.close(CloseCode.NOT_PAIRED, "this browser was unpaired")
            return
        await self._serve(browser)

    # --- handshake --------------------------------------------------------------------------

    async def _authenticate(self) -> tuple[Hello, str, str] | None:
        """Run the challenge–response against each credential of the extension's pairings,
        then wait for hello: hello, the matching pairing and its credential, or ``None`` if it
        failed (closed).
        """
        connection, extension_id = self._connection, self._admitted.extension_id
        app_nonce = new_nonce()
        try:
            await connection.send(encode(AuthChallenge(PROTOCOL_VERSION, app_nonce).to_wire()))
            answer = await self._receive_first()
            if not isinstance(answer, AuthResponse) or len(answer.nonce) < MIN_NONCE_LENGTH:
                await self._refuse("it did not answer the challenge")
                return None
            nonces = {"app_nonce": app_nonce, "extension_nonce": answer.nonce}
            try:
                credentials = self._admission.credentials(extension_id)
            except SecretStoreError:
                await self._locked()
                return None
            matched = self._matching(credentials, answer.proof, nonces)
            if matched is None:
                try:
                    if await self._replaced(answer.proof, nonces):
                        return None
                except SecretStoreError:  # its retired credentials cannot be read now: it
                    # waits, as for a locked current one, never "pair again" (4401)
                    await self._locked()
                    return None
                await self._refuse("wrong proof in auth.response")
                return None
            pairing_id, token = matched
            await self._prove(token, nonces)
            hello = await self._receive_first()
            if not isinstance(hello, Hello):
                await connection.close(CloseCode.PROTOCOL_ERROR, "expected hello")
                return None
            return hello, pairing_id, token
        except TimeoutError:
            await connection.close(CloseCode.AUTH_TIMEOUT, "authentication timed out")
        except ConnectionClosed:
            pass
        return None

    def _matching(
        self, credentials: list[tuple[str, str]], proof: str, nonces: dict[str, str]
    ) -> tuple[str, str] | None:
        """The (pairing id, credential) whose proof the extension sent, if any."""
        return next(
            (
                (pairing_id, token)
                for pairing_id, token in credentials
                if proofs_match(extension_proof(token, port=self._port, **nonces), proof)
            ),
            None,
        )

    async def _prove(self, token: str, nonces: dict[str, str]) -> None:
        proof = app_proof(token, port=self._port, **nonces)
        await self._connection.send(encode(AuthOk(proof).to_wire()))

    async def _replaced(self, proof: str, nonces: dict[str, str]) -> bool:
        """A browser that was away still proves a credential a rotation replaced: prove the
        app with it (the browser then trusts the close code), wait for its hello, close with
        4410 so it asks to pair again, and forget that credential. Whether it was one.

        Raises:
            ConnectionClosed: the browser went away meanwhile.
            TimeoutError: it sent no hello in time.
            SecretStoreError: the retired credentials cannot be read (a locked keychain).
        """
        pairing, extension_id = self._admission.pairing, self._admitted.extension_id
        if not pairing.has_retired(extension_id):
            return False
        retired = await asyncio.to_thread(pairing.retired_credentials, extension_id)
        matched = self._matching(retired, proof, nonces)
        if matched is None:
            return False
        retired_id, token = matched
        await self._prove(token, nonces)
        # Closing before its hello could reach it before it checked the proof (WebCrypto is
        # asynchronous); then it would not trust the close code.
        try:
            await self._receive_first()
        finally:
            await self._connection.close(
                CloseCode.TOKEN_ROTATED, "every browser credential was replaced"
            )
        await asyncio.to_thread(pairing.forget_retired, retired_id)
        logger.info(
            "a browser of extension %s missed a rotation: it was asked to pair again", extension_id
        )
        return True

    async def _refuse(self, why: str) -> None:
        """Close a failed handshake: 4401, or 4429 while this extension id is cooling down."""
        code = self._admission.refusal(self._admitted.extension_id, why)
        reason = (
            "too many failed attempts"
            if code == CloseCode.RATE_LIMITED
            else "authentication failed"
        )
        await self._connection.close(code, reason)

    async def _locked(self) -> None:
        """The credentials cannot be read now (a locked keychain): the browser waits (4503)."""
        self._admission.rejected(self._admitted.extension_id, SECRETS_LOCKED, locked=True)
        await self._connection.close(CloseCode.SECRETS_UNAVAILABLE, "credentials locked")

    async def _receive_first(self) -> ExtensionMessage | None:
        """One handshake frame, parsed; ``None`` when it is malformed."""
        async with asyncio.timeout(self._timing.auth_timeout):
            frame = await self._connection.recv()
        if not isinstance(frame, str):
            return None
        try:
            return parse_frame(frame)
        except ProtocolViolation:
            return None

    def _browser_id(self, hello: Hello | None) -> str:
        if hello is not None and hello.instance:
            instance = f"{self._admitted.extension_id}/{hello.instance}"
            return hashlib.sha256(instance.encode()).hexdigest()[:8]
        return f"seed-{next(self._seed_ids)}"

    def _still_paired(self, pairing_id: str, credential: str | None) -> bool:
        """Whether the pairing this connection proved is still in force, with the credential
        it proved (``None``: the seed protocol's, checked at admission by pairing id).

        Raises:
            SecretStoreError: the credentials cannot be read now (a locked keychain).
        """
        credentials = self._admission.credentials(self._admitted.extension_id)
        return any(
            known_id == pairing_id and (credential is None or proofs_match(token, credential))
            for known_id, token in credentials
        )

    async def _take_slot(self, browser: Browser) -> bool:
        """Refuse a second connection of a browser instance whose first one still answers.

        The slot is looked at again after every wait: another connection replacing the same
        dead one may have taken it meanwhile, and then that one is asked in turn.
        """
        while (existing := self._registry.get(browser.id)) is not None:
            if await existing.answers_ping(timeout=min(2.0, self._timing.pong_timeout)):
                logger.warning("refused a second connection for browser %s", browser.id)
                self._hub.publish(
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
            with contextlib.suppress(ConnectionClosed):
                await existing.close(CloseCode.HEARTBEAT_LOST, "replaced by a new connection")
        return True

    # --- after authentication ---------------------------------------------------------------

    async def _serve(self, browser: Browser) -> None:
        connection = self._connection
        self._registry.add(browser)
        logger.info(
            "browser %s connected: %s (%s, extension %s)",
            browser.id,
            browser.name,
            "seed protocol" if browser.hello is None else f"protocol {browser.hello.protocol}",
            browser.extension_id,
        )
        heartbeat = asyncio.create_task(self._heartbeat(browser))
        if browser.supports("downloads.hold"):
            browser.held.start()
        reason = "connection closed"
        try:
            async for frame in connection:
                if not isinstance(frame, str):
                    reason = "sent a binary frame"
                    await connection.close(1003, "binary frames are not supported")
                    break
                try:
                    message = parse_frame(frame)
                except ProtocolViolation as violation:
                    await self._violation(browser, violation)
                    continue
                await self._dispatch(browser, message)
        except ConnectionClosed as closed:
            reason = f"connection closed ({closed.rcvd.code if closed.rcvd else 'abnormally'})"
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            self._drop(browser, reason)

    def _drop(self, browser: Browser, reason: str) -> None:
        """Fail what waits on ``browser`` and take it out of the registry (once)."""
        browser.disconnect(reason)
        if self._registry.get(browser.id) is browser:
            self._registry.remove(browser)
            logger.info("browser %s disconnected: %s", browser.id, reason)

    async def _dispatch(self, browser: Browser, message: ExtensionMessage) -> None:
        match message:
            case CommandResult() | CommandError():
                browser.resolve(message)
            case CdpEvent():
                self._hub.publish(
                    HubEvent(
                        "cdp",
                        browser.id,
                        message.method,
                        message.tab_id,
                        message.params,
                        session_id=message.session_id,
                    )
                )
            case TabEvent():
                browser.apply_tab_event(message)
                self._hub.publish(
                    HubEvent(
                        "tab", browser.id, message.event, message.tab.id, message.tab.to_wire()
                    )
                )
            case Status():
                browser.apply_status(message)
            case HeldDownload():
                if not browser.held.arrived(message):
                    await self._violation(
                        browser, ProtocolViolation("unexpected", "downloads are not held here")
                    )
            case Ping():
                with contextlib.suppress(ConnectionClosed):
                    await self._connection.send(PONG_FRAME)
            case Pong():
                browser.pong_received()
            case _:
                await self._violation(
                    browser, ProtocolViolation("unexpected", "this message is not expected now")
                )

    async def _violation(self, browser: Browser, violation: ProtocolViolation) -> None:
        now = time.monotonic()
        self._violations.append(now)
        while self._violations and self._violations[0] < now - 60:
            self._violations.popleft()
        if violation.code not in self._violation_codes:  # one log line per class, no payload
            self._violation_codes.add(violation.code)
            logger.warning("browser %s sent an invalid frame (%s)", browser.id, violation.code)
        with contextlib.suppress(ConnectionClosed):
            if len(self._violations) > MAX_VIOLATIONS_PER_MINUTE:
                await self._connection.close(CloseCode.PROTOCOL_ERROR, "too many invalid messages")
            else:
                notice = ErrorNotice(violation.code, violation.message)
                await self._connection.send(encode(notice.to_wire()))

    async def _heartbeat(self, browser: Browser) -> None:
        while True:
            await asyncio.sleep(self._timing.ping_interval)
            if await browser.answers_ping(timeout=self._timing.pong_timeout):
                continue
            if browser.closed or self._connection.state is not State.OPEN:
                return  # the read loop reports the close
            logger.warning("browser %s stopped answering pings; closing its connection", browser.id)
            self._hub.publish(
                HubEvent(
                    "alert",
                    browser.id,
                    "heartbeat_lost",
                    params={"message": f"{browser.name} stopped answering"},
                )
            )
            with contextlib.suppress(ConnectionClosed):
                await self._connection.close(CloseCode.HEARTBEAT_LOST, "no pong")
            return


# From this size a frame is parsed with the cycle collector paused (``parse_frame``).
LARGE_FRAME = 256 * 1024


def parse_frame(frame: str) -> ExtensionMessage:
    """``parse_extension_message``, with the cycle collector paused for a large frame.

    Decoding a large answer (a getFullAXTree of a big page: megabytes, hundreds of thousands of
    dicts and lists) makes no reference cycles, but the containers it makes trip the
    collector's thresholds again and again, and each collection walks the heap that grows
    meanwhile: such an answer decoded 4-6 times slower with them (measured on a 2,000-control
    page's 6.5 MB answer in a process holding 300,000 objects). Frames are parsed on the event
    loop's thread only.

    Raises:
        ProtocolViolation: as ``parse_extension_message``.
    """
    if len(frame) < LARGE_FRAME:
        return parse_extension_message(frame)
    with uncollected():
        return parse_extension_message(frame)
