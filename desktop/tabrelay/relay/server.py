"""The relay server: owns the listening socket and starts and stops what serves it.

``admission.py`` answers every HTTP request (Host and Origin checks, pairing endpoints, the
health check) and decides which WebSocket upgrades go on; each admitted connection then runs
as an ``ExtensionSession`` (``session.py``: handshake, frames, heartbeat, close). The live
browsers are the ``BrowserRegistry``'s, and nothing here keeps a second list of them. Knows
nothing of MCP or Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.protocol import State

from tabrelay.errors import StartupError
from tabrelay.protocol.constants import MAX_FRAME_BEFORE_AUTH, RELAY_PATH, CloseCode
from tabrelay.protocol.messages import RelayPort
from tabrelay.relay.admission import Admission, Credentials, Rejection
from tabrelay.relay.browser import DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_PENDING
from tabrelay.relay.events import EventHub
from tabrelay.relay.pairing import Pairing
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.relay.session import ExtensionSession, SessionTiming

logger = logging.getLogger(__name__)

ANNOUNCE_TIMEOUT = 1.0  # seconds a stopping relay gives its browsers to hear its next port


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
        self.port = port
        self.pairing = pairing
        self.registry = registry
        self.hub = hub
        self.admission = Admission(
            credentials=credentials,
            pairing=pairing,
            registry=registry,
            hub=hub,
            limits=limits or FailureLimits(),
        )
        self.timing = SessionTiming(
            auth_timeout=auth_timeout,
            ping_interval=ping_interval,
            pong_timeout=pong_timeout,
            command_timeout=command_timeout,
            max_pending=max_pending,
        )
        self._requested_port = port
        self._settings_port = 0  # the settings' relay port when this relay started
        self._server: Server | None = None
        self._accepted: set[ServerConnection] = set()  # every TCP connection, from its accept
        self._seed_ids = itertools.count(1)

    @property
    def rejections(self) -> dict[str, Rejection]:
        """Extension id → why the relay last turned a browser of it away."""
        return self.admission.rejections

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
                process_request=self.admission.process_request,
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
        self.admission.listen_on(self.host, self.port)
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
        frame = RelayPort(next_port)
        browsers = [browser for browser in self.registry.all() if not browser.seed]
        with contextlib.suppress(TimeoutError):  # a browser that does not read: quit anyway
            async with asyncio.timeout(ANNOUNCE_TIMEOUT):
                await asyncio.gather(
                    *(browser.send_frame(frame) for browser in browsers), return_exceptions=True
                )

    async def close_pairings(self, pairing_ids: set[str], code: CloseCode, reason: str) -> None:
        """Close the connections authenticated by these pairings (they were revoked)."""
        browsers = [b for b in self.registry.all() if b.pairing_id in pairing_ids]
        await asyncio.gather(*(b.close(code, reason) for b in browsers), return_exceptions=True)

    async def _handle(self, connection: ServerConnection) -> None:
        admitted = self.admission.take(connection)
        if admitted is None:  # cannot happen: process_request admitted it
            await connection.close(CloseCode.AUTH_FAILED, "not admitted")
            return
        session = ExtensionSession(
            connection,
            admitted,
            port=self.port,
            admission=self.admission,
            registry=self.registry,
            hub=self.hub,
            timing=self.timing,
            seed_ids=self._seed_ids,
        )
        await session.run()
