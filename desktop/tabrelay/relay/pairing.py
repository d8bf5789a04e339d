"""Pairing: which extension ids may get the relay token and connect (DESIGN §4.5).

An unknown extension asking for the config raises one pairing request to the ``Approver`` (the
tray dialog; a test approver in tests) and is refused until it is allowed. Requests are
deduplicated while one is open. Headless there is no approver: only ``tabrelay pair allow ID``
pairs, and the log says so once per id. Paired ids persist in the settings file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from tabrelay.config.settings import PairedExtension, Settings, SettingsStore

logger = logging.getLogger(__name__)


class PairingApprover(Protocol):
    async def approve_pairing(self, extension_id: str) -> bool:
        """Ask the person whether ``chrome-extension://<extension_id>`` may pair."""
        ...


class Pairing:
    def __init__(
        self,
        store: SettingsStore,
        *,
        approver: PairingApprover | None = None,
        on_request: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self.approver = approver
        self._on_request = on_request
        self.pending: set[str] = set()
        self._announced: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def settings(self) -> Settings:
        """The current settings, re-read if another process (the CLI) changed the file."""
        return self._store.reload_if_changed() or self._store.current

    def is_paired(self, extension_id: str) -> bool:
        return self.settings().is_paired(extension_id)

    def request(self, extension_id: str) -> None:
        """An unpaired extension asked for the config: ask the approver once."""
        if extension_id in self.pending:
            return
        if self.approver is None:
            if extension_id not in self._announced:
                self._announced.add(extension_id)
                logger.warning(
                    "extension %s asks to pair; allow it with `tabrelay pair allow %s`",
                    extension_id,
                    extension_id,
                )
            return
        self.pending.add(extension_id)
        if self._on_request is not None:
            self._on_request(extension_id)
        task = asyncio.get_running_loop().create_task(self._ask(self.approver, extension_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ask(self, approver: PairingApprover, extension_id: str) -> None:
        try:
            allowed = await approver.approve_pairing(extension_id)
        # The approver is UI code; whatever it raises means "not allowed", never a crash.
        except Exception:
            logger.exception(
                "the pairing approver failed; extension %s stays unpaired", extension_id
            )
            allowed = False
        finally:
            self.pending.discard(extension_id)
        if allowed:
            await asyncio.to_thread(self.allow, extension_id)
            logger.info("extension %s paired", extension_id)
        else:
            logger.info("pairing of extension %s denied", extension_id)

    def allow(self, extension_id: str) -> None:
        """Pair an extension id (blocking: writes the settings file)."""

        def add(settings: Settings) -> None:
            if not settings.is_paired(extension_id):
                settings.paired_extensions.append(PairedExtension(id=extension_id))

        self._store.update(add)

    def revoke(self, extension_id: str) -> bool:
        """Unpair an extension id; ``False`` if it was not paired (blocking)."""
        found = False

        def remove(settings: Settings) -> None:
            nonlocal found
            before = len(settings.paired_extensions)
            settings.paired_extensions = [
                p for p in settings.paired_extensions if p.id != extension_id
            ]
            found = len(settings.paired_extensions) != before

        self._store.update(remove)
        return found

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
