"""A running core on free ports with a temporary TABRELAY_HOME, and a scripted approver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from keyring.backend import KeyringBackend

from support.fake_extension import EXTENSION_ID, FakeExtension
from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.approval.plans import PlanDraft
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.core import Core, CoreOptions
from tabrelay.relay.pairing import Pairing
from tabrelay.system.logs import Redactor


class ScriptedApprover:
    """Answers pairing requests as the test decides; records every request."""

    def __init__(self, *, answer: bool | None = True) -> None:
        self.answer = answer
        self.requests: list[str] = []
        self.codes: list[str | None] = []  # the code each request showed
        self.asked = asyncio.Event()
        self._decisions: asyncio.Queue[bool] = asyncio.Queue()

    async def approve_pairing(self, extension_id: str, code: str | None) -> bool:
        self.requests.append(extension_id)
        self.codes.append(code)
        self.asked.set()
        if self.answer is not None:
            return self.answer
        return await self._decisions.get()

    def decide(self, allowed: bool) -> None:
        self._decisions.put_nowait(allowed)


class ScriptedToolApprover:
    """Answers approval requests as the test decides; ``answer=None`` waits for ``decide``."""

    def __init__(self, answer: Choice | None = Choice.ALLOW_ONCE) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []
        self.withdrawn: list[ApprovalRequest] = []
        self.while_deciding: Any = None  # an async callable run before answering
        self.plan_answer: Callable[[PlanDraft], PlanDraft | None] | None = None
        self._decisions: asyncio.Queue[Choice] = asyncio.Queue()

    async def decide(self, request: ApprovalRequest) -> Choice:
        self.requests.append(request)
        try:
            if self.while_deciding is not None:
                await self.while_deciding(request)
            if self.answer is not None:
                return self.answer
            return await self._decisions.get()
        except asyncio.CancelledError:
            self.withdrawn.append(request)
            raise

    def choose(self, choice: Choice) -> None:
        self._decisions.put_nowait(choice)

    async def decide_plan(self, request: ApprovalRequest) -> PlanDraft | None:
        """A plan: ``plan_answer`` says what the person makes of it (default: approved as
        asked; Deny as ``answer`` denies it)."""
        choice = await self.decide(request)
        if choice is Choice.DENY or request.plan is None:
            return None
        return self.plan_answer(request.plan) if self.plan_answer else request.plan


@dataclass
class RelayHarness:
    core: Core
    paths: Paths
    tokens: TokenStore
    approver: ScriptedApprover
    tool_approver: ScriptedToolApprover
    extensions: list[FakeExtension] = field(default_factory=list)

    @property
    def port(self) -> int:
        assert self.core.relay is not None
        return self.core.relay.port

    @property
    def token(self) -> str:
        """The credential of the newest pairing (the test extension's, when it is paired)."""
        return self.credential()

    def credential(self, extension_id: str | None = None) -> str:
        """The newest credential paired for ``extension_id`` (any extension if ``None``)."""
        found = [
            token
            for p in self.core.settings.pairings
            if extension_id in (None, p.extension_id)
            for pairing_id, token in self.core.credentials_for(p.extension_id)
            if pairing_id == p.id
        ]
        assert found, f"no browser of {extension_id or 'any extension'} is paired"
        return found[-1]

    async def pair(self, extension_id: str = EXTENSION_ID) -> str:
        """Pair one more browser of ``extension_id`` as `tabrelay pair add` would: its credential.

        Returns once the running core accepts it.
        """
        pairing = Pairing(SettingsStore(self.paths.settings_file), self.tokens)
        paired, token = await asyncio.to_thread(pairing.add, extension_id)
        async with asyncio.timeout(5):
            while (paired.id, token) not in self.core.credentials_for(extension_id):
                await asyncio.sleep(0.01)
        return token

    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_port(self) -> int:
        assert self.core.endpoint is not None
        return self.core.endpoint.port

    def base_mcp(self) -> str:
        """The MCP endpoint's base URL (``/mcp`` and ``/sse`` hang off it)."""
        return f"http://127.0.0.1:{self.mcp_port}"

    async def add_client(self, name: str = "test-agent") -> str:
        """Create an MCP client as `tabrelay client add` would; its token once the app has it."""
        new = await asyncio.to_thread(self.core.clients.add, name)
        async with asyncio.timeout(5):
            while self.core.client_tokens().get(name) != new.token:
                await asyncio.sleep(0.01)
        return new.token

    async def extension(self, **kwargs: Any) -> FakeExtension:
        """A connected, authenticated fake extension (closed when the harness stops)."""
        if "token" not in kwargs:
            kwargs["token"] = self.credential(kwargs.get("extension_id", EXTENSION_ID))
        extension = FakeExtension(self.port, **kwargs)
        self.extensions.append(extension)
        await extension.connect()
        # The app's first question to a new browser is its tabs (the tray counts them). Tests
        # count the commands they cause, so that one is taken off the list once it came.
        async with asyncio.timeout(5):
            while not any(c["method"] == "tabs.list" for c in extension.commands):
                await asyncio.sleep(0.005)
        extension.commands.remove(next(c for c in extension.commands if c["method"] == "tabs.list"))
        return extension

    async def browser_count(self, count: int, timeout: float = 5.0) -> None:
        """Wait until the registry holds ``count`` browsers."""
        async with asyncio.timeout(timeout):
            while len(self.core.registry) != count:
                await asyncio.sleep(0.005)


def pair(
    paths: Paths, *extension_ids: str, keyring_backend: KeyringBackend | None = None
) -> dict[str, str]:
    """Pair a browser of each extension id unless one is paired: the new credentials."""
    store = SettingsStore(paths.settings_file)
    pairing = Pairing(store, TokenStore.open(paths, keyring_backend=keyring_backend))
    paired = store.load()
    return {
        extension_id: pairing.add(extension_id)[1]
        for extension_id in extension_ids
        if not paired.is_paired(extension_id)
    }


def allow_everything(paths: Paths) -> None:
    """A person's rule ahead of time: every tool allowed everywhere, so no call waits for them."""
    SettingsStore(paths.settings_file).update(
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow"))
    )


def allow_pairing(paths: Paths, *extension_ids: str) -> None:
    """Let each extension pair once within minutes, as `tabrelay pair allow` would."""
    pairing = Pairing(SettingsStore(paths.settings_file), TokenStore.open(paths))
    for extension_id in extension_ids:
        pairing.grant(extension_id)


@asynccontextmanager
async def running_core(
    paths: Paths,
    *,
    paired: tuple[str, ...] = (EXTENSION_ID,),
    allowed: tuple[str, ...] = (),
    approver: ScriptedApprover | None = None,
    tool_approver: ScriptedToolApprover | None = None,
    redactor: Redactor | None = None,
    keyring_backend: KeyringBackend | None = None,
    **options: Any,
) -> AsyncIterator[RelayHarness]:
    if paired:
        pair(paths, *paired, keyring_backend=keyring_backend)
    if allowed:
        allow_pairing(paths, *allowed)
    tokens = TokenStore.open(paths, keyring_backend=keyring_backend)
    approver = approver or ScriptedApprover()
    tool_approver = tool_approver or ScriptedToolApprover()
    options.setdefault("relay_port", 0)
    options.setdefault("mcp_port", 0)
    options.setdefault("write_instance_file", False)
    core = Core(
        paths,
        tokens,
        redactor=redactor or Redactor(),
        options=CoreOptions(**options),
        pairing_approver=approver,
        approver=tool_approver,
    )
    await core.start()
    harness = RelayHarness(core, paths, tokens, approver, tool_approver)
    try:
        yield harness
    finally:
        for extension in harness.extensions:
            await extension.close()
        await core.stop()
