"""A running core on free ports with a temporary TABRELAY_HOME, and a scripted approver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from support.fake_extension import EXTENSION_ID, FakeExtension
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import PairedExtension, Settings
from tabrelay.core import Core, CoreOptions
from tabrelay.system.logs import Redactor


class ScriptedApprover:
    """Answers pairing requests as the test decides; records every request."""

    def __init__(self, *, answer: bool | None = True) -> None:
        self.answer = answer
        self.requests: list[str] = []
        self.asked = asyncio.Event()
        self._decisions: asyncio.Queue[bool] = asyncio.Queue()

    async def approve_pairing(self, extension_id: str) -> bool:
        self.requests.append(extension_id)
        self.asked.set()
        if self.answer is not None:
            return self.answer
        return await self._decisions.get()

    def decide(self, allowed: bool) -> None:
        self._decisions.put_nowait(allowed)


@dataclass
class RelayHarness:
    core: Core
    paths: Paths
    tokens: TokenStore
    approver: ScriptedApprover
    extensions: list[FakeExtension] = field(default_factory=list)

    @property
    def port(self) -> int:
        assert self.core.relay is not None
        return self.core.relay.port

    @property
    def token(self) -> str:
        return self.core.relay_token()

    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def extension(self, **kwargs: Any) -> FakeExtension:
        """A connected, authenticated fake extension (closed when the harness stops)."""
        kwargs.setdefault("token", self.token)
        extension = FakeExtension(self.port, **kwargs)
        self.extensions.append(extension)
        await extension.connect()
        return extension

    async def browser_count(self, count: int, timeout: float = 5.0) -> None:
        """Wait until the registry holds ``count`` browsers."""
        async with asyncio.timeout(timeout):
            while len(self.core.registry) != count:
                await asyncio.sleep(0.005)


def pair(paths: Paths, *extension_ids: str) -> None:
    from tabrelay.config.settings import SettingsStore

    def add(settings: Settings) -> None:
        for extension_id in extension_ids:
            if not settings.is_paired(extension_id):
                settings.paired_extensions.append(PairedExtension(id=extension_id))

    SettingsStore(paths.settings_file).update(add)


@asynccontextmanager
async def running_core(
    paths: Paths,
    *,
    paired: tuple[str, ...] = (EXTENSION_ID,),
    approver: ScriptedApprover | None = None,
    redactor: Redactor | None = None,
    **options: Any,
) -> AsyncIterator[RelayHarness]:
    if paired:
        pair(paths, *paired)
    tokens = TokenStore.open(paths)
    approver = approver or ScriptedApprover()
    options.setdefault("relay_port", 0)
    options.setdefault("mcp_port", 0)
    options.setdefault("write_instance_file", False)
    core = Core(
        paths,
        tokens,
        redactor=redactor or Redactor(),
        options=CoreOptions(**options),
        pairing_approver=approver,
    )
    await core.start()
    harness = RelayHarness(core, paths, tokens, approver)
    try:
        yield harness
    finally:
        for extension in harness.extensions:
            await extension.close()
        await core.stop()
