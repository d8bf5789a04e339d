"""The Qt-free core both front ends run: settings, secrets, the relay and what hangs off it.

``cli.py`` (``tabrelay serve``) and ``app.py`` (the tray app) build a ``Core``, start it on
their loop and stop it on the way out. The core also watches the settings file, so commands
run from another process (``tabrelay pair revoke``, ``token rotate``…) take effect at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import time
from dataclasses import dataclass

from tabrelay import __version__
from tabrelay.config.files import atomic_write
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.errors import ConfigError
from tabrelay.protocol.constants import CloseCode
from tabrelay.relay.events import EventHub
from tabrelay.relay.pairing import Pairing, PairingApprover
from tabrelay.relay.ratelimit import FailureLimiter
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.relay.server import RelayServer
from tabrelay.system.logs import Redactor

logger = logging.getLogger(__name__)

WATCH_INTERVAL = 0.25


@dataclass(frozen=True, slots=True)
class CoreOptions:
    """Per-run overrides of the settings (command line, tests)."""

    relay_port: int | None = None
    mcp_port: int | None = None
    auth_timeout: float = 5.0
    ping_interval: float = 15.0
    pong_timeout: float = 20.0
    limiter: FailureLimiter | None = None
    write_instance_file: bool = True


class Core:
    def __init__(
        self,
        paths: Paths,
        tokens: TokenStore,
        *,
        redactor: Redactor,
        options: CoreOptions | None = None,
        pairing_approver: PairingApprover | None = None,
    ) -> None:
        self.paths = paths
        self.tokens = tokens
        self.redactor = redactor
        self.options = options or CoreOptions()
        self.settings_store = SettingsStore(paths.settings_file)
        self.registry = BrowserRegistry()
        self.hub = EventHub()
        self.pairing = Pairing(self.settings_store, approver=pairing_approver)
        self._relay_token = ""
        self._secrets_revision = 0
        self._paired: frozenset[str] = frozenset()
        self._watcher: asyncio.Task[None] | None = None
        self.relay: RelayServer | None = None

    @property
    def settings(self) -> Settings:
        return self.settings_store.current

    def relay_token(self) -> str:
        return self._relay_token

    async def start(self) -> None:
        """Load state and start serving.

        Raises:
            StartupError: a port is taken or the host is not loopback; nothing keeps running.
            ConfigError: the secret store cannot be used.
        """
        settings = await asyncio.to_thread(self.settings_store.load)
        await self._load_relay_token()
        self._secrets_revision = settings.secrets_revision
        self._paired = frozenset(p.id for p in settings.paired_extensions)
        opts = self.options
        self.relay = RelayServer(
            host=settings.host,
            port=settings.relay_port if opts.relay_port is None else opts.relay_port,
            token=self.relay_token,
            pairing=self.pairing,
            registry=self.registry,
            hub=self.hub,
            limiter=opts.limiter,
            auth_timeout=opts.auth_timeout,
            ping_interval=opts.ping_interval,
            pong_timeout=opts.pong_timeout,
            command_timeout=settings.command_timeout,
        )
        await self.relay.start()
        if opts.write_instance_file:
            self._write_instance_file()
        self._watcher = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await self.pairing.close()
        if self.relay is not None:
            await self.relay.stop()
        self.hub.close()
        if self.options.write_instance_file:
            self._remove_instance_file()

    async def rotate_relay_token(self) -> None:
        """New relay token; live sessions close at once and the old token stops working."""
        self._relay_token = await asyncio.to_thread(self.tokens.rotate_relay_token)
        self.redactor.add_secret(self._relay_token)

        def bump(settings: Settings) -> None:
            settings.secrets_revision += 1

        settings = await asyncio.to_thread(self.settings_store.update, bump)
        self._secrets_revision = settings.secrets_revision
        await self._close_for_rotation()

    async def _load_relay_token(self) -> None:
        self._relay_token = await asyncio.to_thread(self.tokens.relay_token)
        self.redactor.add_secret(self._relay_token)

    async def _close_for_rotation(self) -> None:
        if self.relay is not None:
            await self.relay.close_all(CloseCode.TOKEN_ROTATED, "the relay token was rotated")
        logger.info("relay token rotated; connections closed")

    async def _watch(self) -> None:
        """Apply changes other processes make to the settings and secrets."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            try:
                settings = await asyncio.to_thread(self.settings_store.reload_if_changed)
                if settings is not None:
                    await self._apply(settings)
            # The watcher must outlive a transient failure (a locked keychain, a file being
            # replaced): log it and try again on the next tick.
            except Exception:
                logger.exception("applying a settings change failed")

    async def _apply(self, settings: Settings) -> None:
        paired = frozenset(p.id for p in settings.paired_extensions)
        for extension_id in self._paired - paired:
            if self.relay is not None:
                await self.relay.close_extension(
                    extension_id, CloseCode.NOT_PAIRED, "this extension was unpaired"
                )
            logger.info("extension %s unpaired", extension_id)
        self._paired = paired
        if settings.secrets_revision != self._secrets_revision:
            self._secrets_revision = settings.secrets_revision
            previous = self._relay_token
            await self._load_relay_token()
            if not hmac.compare_digest(previous, self._relay_token):
                await self._close_for_rotation()

    def _write_instance_file(self) -> None:
        assert self.relay is not None
        info = {
            "pid": os.getpid(),
            "version": __version__,
            "relay_port": self.relay.port,
            "started_at": time.time(),
        }
        try:
            atomic_write(self.paths.instance_file, json.dumps(info).encode("utf-8"))
        except ConfigError as exc:
            logger.warning("could not write %s: %s", self.paths.instance_file, exc)

    def _remove_instance_file(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.paths.instance_file.unlink()
