"""The Qt-free core both front ends run: settings, secrets, relay, approvals, log, MCP endpoint.

``cli.py`` (``tabrelay serve``) and ``app.py`` (the tray app) build a ``Core``, start it on
their loop and stop it on the way out. The core watches the settings file, so commands run
from another process (``tabrelay pair revoke``, ``client add``, ``token rotate``…) take effect
at once: the file watcher hands what they wrote to the settings owner (``SettingsStore``), and
one task applies every snapshot the owner publishes, whoever made it, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from tabrelay import __version__
from tabrelay.approval.gate import ApprovalGate, Approver
from tabrelay.config.files import atomic_write
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore
from tabrelay.config.settings import PairedBrowser, Settings, SettingsStore
from tabrelay.config.watch import FileWatch
from tabrelay.endpoint.auth import ClientActivity
from tabrelay.endpoint.calls import ToolRunner
from tabrelay.endpoint.server import McpEndpoint
from tabrelay.errors import BrowserError, ConfigError, SecretStoreError
from tabrelay.protocol.constants import CloseCode
from tabrelay.recipes.recorder import Recorder
from tabrelay.recipes.store import RecipeStore
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.relay.pairing import Pairing, PairingApprover
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.relay.registry import BrowserRegistry, Change
from tabrelay.relay.server import RelayServer
from tabrelay.store.commandlog import CommandLog
from tabrelay.system.logs import Redactor
from tabrelay.tools.recorders.demonstration import Demonstrations
from tabrelay.tools.state.downloads import Downloads
from tabrelay.tools.state.guard import NavigationGuard
from tabrelay.tools.state.handoffs import Handoffs
from tabrelay.tools.state.interception import NavigationInterceptor
from tabrelay.tools.state.observer import TabObserver
from tabrelay.tools.state.sessions import TabSessions
from tabrelay.tools.state.tab_state import TabStates

logger = logging.getLogger(__name__)

KEYCHAIN_ATTENTION = {
    "locked": "Your keychain is locked (its unlock prompt was cancelled), so Tabrelay cannot "
    "check its browsers and agents; they wait. Unlock it, or keep Tabrelay's secrets in a file "
    "only you can read instead.",
    "no_answer": "Your keychain has not answered: its password prompt may be open, perhaps "
    "behind another window. Answer it and press Unlock, or keep Tabrelay's secrets in a file "
    "only you can read instead.",
}
WATCH_INTERVAL = 0.25  # how often the settings file is looked at where inotify is missing
UNLOCK_LOOK_INTERVAL = 2.0  # the cadence of upkeep: a locked keychain, expired retired credentials
SETTLE_TIMEOUT = 10.0  # how long a caller waits for a change to be applied
LEARN_TABS_TIMEOUT = 10.0
NOTICE_TIMEOUT = 10.0  # a notice to MCP clients that one of them does not read is given up
NOTIFY_DELAY = 0.2  # coalesce bursts of tab changes into one list-changed notification
PRUNE_INTERVAL = 3600.0
APPLY_ATTEMPTS = 3  # a settings change that fails to apply is tried this often at once…
APPLY_RETRY_DELAY = 0.1  # …this many seconds apart (growing), then at every upkeep tick

Closing = tuple[CloseCode, str]


@dataclass(frozen=True, slots=True)
class CoreOptions:
    """Per-run overrides of the settings (command line, tests)."""

    relay_port: int | None = None
    mcp_port: int | None = None
    auth_timeout: float = 5.0
    ping_interval: float = 15.0
    pong_timeout: float = 20.0
    limits: FailureLimits | None = None  # the relay's failed-authentication limits
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
        approver: Approver | None = None,
    ) -> None:
        self.paths = paths
        self.tokens = tokens
        self.redactor = redactor
        self.options = options or CoreOptions()
        self.settings_store = SettingsStore(paths.settings_file)
        tokens.use_settings(self.settings_store)  # its writes go through the one owner too
        self.registry = BrowserRegistry()
        self.hub = EventHub()
        self.pairing = Pairing(
            self.settings_store,
            tokens,
            approver=pairing_approver,
            on_paired=self._paired_now,
            catch_up=self._catch_up,
        )
        self.gate = ApprovalGate(self.settings_store, approver=approver)
        self.clients = ClientTokens(self.settings_store, tokens)
        self.tabs = TabStates(self.registry)  # everything kept per tab, dropped with it
        self.sessions = TabSessions(
            self.registry,
            self.tabs,
            idle_minutes=lambda: self.settings_store.current.idle_detach_minutes,
        )
        self.observer = TabObserver(self.hub, self.tabs)
        self.interceptor = NavigationInterceptor(
            self.hub,
            self.registry,
            self.sessions,
            self.tabs,
            guard=self.guard,
            may_go=lambda reach, site: self.gate.may_go(
                client=reach.client, session=reach.session, tool=reach.tool, site=site
            ),
        )
        # Recipes: the saved ones, the recordings being made, the person's demonstrations;
        # and the tabs handed to the person.
        self.recipes = RecipeStore(paths.recipes_dir)
        self.recorder = Recorder(paths.recordings_dir)
        self.tabs.dropped.add(self.recorder.finish_tab)  # an agent's recording ends with its tab
        self.handoffs = Handoffs()
        self.downloads = Downloads(paths.downloads_dir)
        self.demonstrations = Demonstrations(
            registry=self.registry,
            hub=self.hub,
            tabs=self.tabs,
            sessions=self.sessions,
            recorder=self.recorder,
        )
        self.command_log: CommandLog | None = None
        self.relay: RelayServer | None = None
        self.endpoint: McpEndpoint | None = None
        self._told: Settings | None = None  # the settings MCP clients last heard of
        # Every snapshot the owner publishes wakes the one task that applies them (_applier);
        # callers that must see a change applied wait for its generation (settled).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._published = asyncio.Event()
        self._applied = 0  # the owner's generation the applier has applied
        self._apply_failed = False  # the newest snapshot failed to apply: upkeep retries it
        self._settled = asyncio.Condition()
        self._unsubscribe_settings = self.settings_store.subscribe(self._settings_published)
        self.runner: ToolRunner | None = None
        self._credentials: dict[str, str] = {}  # pairing id → that browser's credential
        self._client_tokens: dict[str, str] = {}
        self._secrets_revision = 0
        self._paired: frozenset[str] = frozenset()  # pairing ids whose connections may live
        self._rotations = 0
        self._guard: NavigationGuard | None = None
        # The snapshot the guard was made for, held: compared by identity, never by id(),
        # since a freed snapshot's address is handed to a later one (a stale block list).
        self._guard_for: tuple[Settings | None, list[int]] = (None, [])
        self._tasks: list[asyncio.Task[None]] = []
        self._notifications: set[asyncio.Task[None]] = set()
        self._notify: asyncio.TimerHandle | None = None
        self._unsubscribe = self.registry.add_listener(self._browsers_changed)

    @property
    def settings(self) -> Settings:
        return self.settings_store.current

    def credentials_for(self, extension_id: str) -> list[tuple[str, str]]:
        """The (pairing id, credential) of every browser paired with this extension id.

        Raises:
            KeychainUnavailable: none is known because the keychain is locked (the relay
                tells the browser to retry rather than to pair again).
        """
        found = [
            (p.id, self._credentials[p.id])
            for p in self.settings.pairings
            if p.extension_id == extension_id and p.id in self._credentials
        ]
        if not found and self.tokens.problem is not None:
            raise self.tokens.problem
        return found

    def client_tokens(self) -> dict[str, str]:
        return self._client_tokens

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Load state and start serving.

        Raises:
            StartupError: a port is taken or the host is not loopback; nothing keeps running.
            ConfigError: the secret store cannot be used.
        """
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        await asyncio.to_thread(self.settings_store.load)
        await asyncio.to_thread(self._migrate_legacy_pairings)
        await asyncio.to_thread(self.pairing.prune_retired)
        generation = self.settings_store.generation
        settings = self.settings
        await self._load_secrets()
        self._secrets_revision = settings.secrets_revision
        self._paired = frozenset(p.id for p in settings.pairings)
        self._rotations = settings.rotations
        self._told = settings
        self._applied = generation  # what start read is in force; later snapshots wake _applier
        self.command_log = await asyncio.to_thread(CommandLog, self.paths.command_log_file)
        opts = self.options
        self.relay = RelayServer(
            host=settings.host,
            port=settings.relay_port if opts.relay_port is None else opts.relay_port,
            credentials=self.credentials_for,
            pairing=self.pairing,
            registry=self.registry,
            hub=self.hub,
            limits=opts.limits,
            auth_timeout=opts.auth_timeout,
            ping_interval=opts.ping_interval,
            pong_timeout=opts.pong_timeout,
            command_timeout=settings.command_timeout,
        )
        self.runner = ToolRunner(
            registry=self.registry,
            gate=self.gate,
            hub=self.hub,
            settings=self.settings_store,
            log=self.command_log,
            guard=self.guard,
            status=self.status,
            sessions=self.sessions,
            tabs=self.tabs,
            handoffs=self.handoffs,
            recorder=self.recorder,
            recipes=self.recipes,
            downloads=self.downloads,
        )
        self.endpoint = McpEndpoint(
            self.runner,
            tokens=self.client_tokens,
            catch_up=self._catch_up,
            host=settings.host,
            port=settings.mcp_port if opts.mcp_port is None else opts.mcp_port,
            on_limit=self._limit_hit,
        )
        try:
            await self.relay.start()
            await self.endpoint.start()
        except BaseException:
            await self.relay.stop()
            await asyncio.to_thread(self.command_log.close)  # it waits for the writer
            raise
        if opts.write_instance_file:
            self._write_instance_file()
        self._tasks = [
            asyncio.create_task(self._applier()),
            asyncio.create_task(self._watch()),
            asyncio.create_task(self._tend()),
            asyncio.create_task(self._prune()),
            asyncio.create_task(self.sessions.run_idle_detach()),
            asyncio.create_task(self.observer.run()),
            asyncio.create_task(self.interceptor.run()),
        ]

    async def stop(self) -> None:
        # First: browsers disconnecting below must not schedule a notification that would
        # outlive the core (a task left pending when the loop closes).
        self._unsubscribe()
        self._unsubscribe_settings()
        if self._notify is not None:
            self._notify.cancel()
            self._notify = None
        tasks, self._tasks = [*self._tasks, *self._notifications], []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.pairing.close()
        if self.endpoint is not None:
            await self.endpoint.stop()
        if self.runner is not None:
            await self.runner.close()
        await self.demonstrations.close()  # their page code and holds, before the tabs go
        if self.relay is not None:
            # Before closing: tabs left attached would keep Chrome's bar and the cue on them.
            await self.registry.release_tabs()
            await self.relay.stop()
        self.hub.close()
        if self.command_log is not None:
            await asyncio.to_thread(self.command_log.close)  # it waits for the writer
        if self.options.write_instance_file:
            self._remove_instance_file()

    def own_ports(self) -> list[int]:
        ports = [self.relay.port if self.relay else 0, self.endpoint.port if self.endpoint else 0]
        return [p for p in ports if p]

    def guard(self) -> NavigationGuard:
        """The navigation guard as the settings are now (one for every decision); made again
        only when the settings or the ports changed, since it reads the site lists once."""
        settings, ports = self.settings, self.own_ports()
        made_for, made_ports = self._guard_for
        if self._guard is None or made_for is not settings or made_ports != ports:
            self._guard = NavigationGuard(settings.navigation, own_ports=ports)
            self._guard_for = (settings, ports)
        return self._guard

    def status(self) -> dict[str, Any]:
        """What browser_status starts from: the connected browsers (the tool asks each for its
        tabs, as browser_list_tabs does), the approvals waiting, and whether agents are paused."""
        return {
            "browsers": self.registry.all(),
            "pending_approvals": len(self.gate.pending),
            "paused": self.gate.paused,
            "version": __version__,
        }

    def attention(self) -> list[str]:
        """What needs the person now, one sentence each (the dashboard, the tray, the Tabs
        page): a keychain that cannot be read, a browser asking to pair, a browser refused."""
        notes = []
        problem = self.tokens.problem
        if problem is not None:
            notes.append(KEYCHAIN_ATTENTION[problem.trouble])
        if self.pairing.pending:
            notes.append(
                "A browser extension asks to pair: answer the dialog, after checking that its "
                "code is the one the extension's popup shows."
            )
        for rejection in self.relay.rejections.values() if self.relay is not None else ():
            if problem is not None and rejection.locked:
                continue  # said above
            when = time.strftime("%H:%M", time.localtime(rejection.time))
            notes.append(
                f"A browser (chrome-extension://{rejection.extension_id}) was refused at "
                f"{when}: {rejection.reason}."
            )
        return notes

    async def attach_tab(self, browser_id: str, tab_id: int) -> None:
        """Attach a tab for the person (dashboard), with the domains the dashboard shows.

        Raises:
            BrowserError: no such browser or tab, or the tab cannot be attached.
        """
        await self.sessions.attach(self.registry.resolve(browser_id), tab_id)

    async def detach_tab(self, browser_id: str, tab_id: int) -> None:
        await self.sessions.detach(self.registry.resolve(browser_id), tab_id)

    def client_activity(self) -> dict[str, ClientActivity]:
        """Each MCP client's last request and open requests, for the dashboard."""
        return self.endpoint.activity() if self.endpoint is not None else {}

    # --- secrets ----------------------------------------------------------------------------

    async def rotate_relay_token(self) -> None:
        """Every browser's credential stops working at once; each must pair again.

        The same rotation as `tabrelay token rotate` (``Pairing.revoke_all``); returns once
        the running app has closed the browsers' connections.
        """
        # Shielded: once asked for, the rotation is made whole even if the caller goes away.
        await asyncio.shield(asyncio.to_thread(self.pairing.revoke_all))
        await self.settled()

    def _limit_hit(self, kind: str, message: str) -> None:
        """A client hit a limit of the MCP endpoint: the person sees it with the alerts."""
        self.hub.publish(HubEvent("alert", "", kind, params={"message": message}))

    def _paired_now(self, paired: PairedBrowser, token: str) -> None:
        """A pairing made in this process: usable at once, before the watcher sees the file."""
        self._credentials[paired.id] = token
        self.redactor.add_secret(token)
        self._paired = self._paired | {paired.id}

    def _migrate_legacy_pairings(self) -> None:
        """Give browsers paired before per-browser credentials their own copy of the shared
        relay token they use, then forget the shared one (blocking; at start)."""
        legacy = [p for p in self.settings.pairings if p.legacy]
        if not legacy:
            return
        token = self.tokens.legacy_relay_token()
        if not token:  # the keychain that holds it may be locked now: try again next start
            logger.warning("the relay token of %d earlier pairing(s) cannot be read", len(legacy))
            return
        for paired in legacy:
            self.tokens.create_browser_credential(paired.id, value=token)
        ids = {p.id for p in legacy}

        def settle(settings: Settings) -> None:
            for paired in settings.pairings:
                paired.legacy = paired.legacy and paired.id not in ids
            settings.secrets_revision += 1

        self.settings_store.update(settle)
        self.tokens.delete_legacy_relay_token()
        logger.info("gave %d browser(s) paired earlier their own credential", len(legacy))

    async def _load_secrets(self) -> None:
        """Read every credential and client token into memory (the relay and the endpoint
        check them on the loop). A locked or silent keychain leaves the tables empty and says
        so (``secrets_problem``) until the person unlocks it."""

        def read() -> tuple[dict[str, str], dict[str, str]]:
            credentials = {}
            for paired in self.settings.pairings:
                token = self.tokens.browser_credential(paired.id)
                if token:
                    credentials[paired.id] = token
            return credentials, self.clients.table()

        try:
            self._credentials, self._client_tokens = await asyncio.to_thread(read)
        except KeychainUnavailable as exc:
            logger.warning("secrets cannot be read: %s", exc.message)
            return
        for secret in (*self._credentials.values(), *self._client_tokens.values()):
            self.redactor.add_secret(secret)

    @property
    def secrets_problem(self) -> KeychainUnavailable | None:
        """Why the secrets cannot be read now (a locked keychain), or ``None``."""
        return self.tokens.problem

    async def unlock_secrets(self) -> None:
        """Ask the keychain again (a prompt may appear), then load what it holds.

        Raises:
            SecretStoreError: it is still locked or silent, or failed.
        """
        await asyncio.to_thread(self.tokens.retry)
        await self._load_secrets()
        self._secrets_revision = self.settings.secrets_revision

    async def use_secrets_file(self, *, forget_unreadable: bool = False) -> list[str]:
        """Keep secrets in the 0600 file from now on, moving them out of the keychain; with
        ``forget_unreadable`` a locked keychain's secrets are given up (what was forgotten)."""
        forgotten = await asyncio.to_thread(
            self.tokens.move_to, "file", forget_unreadable=forget_unreadable
        )
        await self.settled()
        return forgotten

    # --- watching ---------------------------------------------------------------------------

    def _settings_published(self, _settings: Settings) -> None:
        """The owner published a snapshot (from the loop, or from a worker thread that wrote
        the file): wake the applier. Never blocks; nothing is applied here."""
        loop = self._loop
        if loop is None:
            return  # not started: start() takes what is in force
        if threading.get_ident() == self._loop_thread:
            self._published.set()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing is applied any more
            loop.call_soon_threadsafe(self._published.set)

    async def _applier(self) -> None:
        """The one task that applies settings, whoever changed them (this process or
        another), newest first and in order. A caller's cancellation never cuts it short.

        A snapshot that fails to apply is tried again a few times at once, then at every
        upkeep tick (``_tend``) until it applies; meanwhile it is not counted as applied, so
        ``settled`` waiters time out rather than believe it."""
        while True:
            await self._published.wait()
            self._published.clear()
            generation = self.settings_store.generation  # before current: never ahead of it
            if not await self._apply_with_retries(generation):
                self._apply_failed = True
                continue
            self._apply_failed = False
            async with self._settled:
                self._applied = generation
                self._settled.notify_all()

    async def _apply_with_retries(self, generation: int) -> bool:
        """Apply the snapshot in force, up to ``APPLY_ATTEMPTS`` times: whether it applied."""
        for attempt in range(1, APPLY_ATTEMPTS + 1):
            try:
                await self._apply(self.settings_store.current)
                return True
            # The applier must outlive a transient failure (a broken secret file, a locked
            # keychain): log it and try again; what failed was not recorded as done.
            except Exception:
                logger.exception(
                    "applying settings change %d failed (attempt %d of %d)",
                    generation,
                    attempt,
                    APPLY_ATTEMPTS,
                )
            if attempt < APPLY_ATTEMPTS:
                await asyncio.sleep(APPLY_RETRY_DELAY * attempt)
        logger.error(
            "settings change %d is not applied; trying again every %.0f s",
            generation,
            UNLOCK_LOOK_INTERVAL,
        )
        return False

    async def settled(self, *, timeout: float = SETTLE_TIMEOUT) -> None:
        """Wait until every snapshot published so far is applied (connections of unpaired
        browsers closed, new tokens usable). Cancelling the wait cancels nothing else.

        Raises:
            TimeoutError: it took longer than ``timeout``.
        """
        target = self.settings_store.generation
        async with asyncio.timeout(timeout), self._settled:
            await self._settled.wait_for(lambda: self._applied >= target)

    async def _catch_up(self) -> None:
        """Take in what another process just wrote and wait until it is applied: a request
        with a token or a pairing grant not known yet (one the CLI made a moment ago works
        at once). Off the hot path: only a request that would fail otherwise comes here."""
        await asyncio.shield(asyncio.to_thread(self.settings_store.refresh))
        await self.settled()

    async def _watch(self) -> None:
        """Hand what other processes write to the settings file to the owner."""
        watch = FileWatch(self.settings_store.path, poll_interval=WATCH_INTERVAL)
        async for _ in watch.changes():
            try:
                if self.settings_store.changed_on_disk():
                    await asyncio.to_thread(self.settings_store.refresh)
            # The watcher must outlive a transient failure (a file being replaced, a full
            # disk when a bad file is written back): log it and look again at the next change.
            except Exception:
                logger.exception("reading a settings change failed")

    async def _tend(self) -> None:
        """Upkeep on a slow cadence, off the hot path: notice when the person unlocks the
        keychain elsewhere; forget retired credentials once they expire."""
        while True:
            await asyncio.sleep(UNLOCK_LOOK_INTERVAL)
            if self._apply_failed:
                self._published.set()  # the applier tries the snapshot in force again
            try:
                if self.tokens.problem is not None:
                    unlocked = await asyncio.to_thread(self.tokens.unlocked_meanwhile)
                    if unlocked:
                        logger.info("the keychain was unlocked: reading Tabrelay's secrets")
                        await self.unlock_secrets()
                if self.pairing.retired_expired():
                    await asyncio.to_thread(self.pairing.prune_retired)
            # Upkeep must outlive a transient failure (a locked keychain): log it and try
            # again at the next tick.
            except Exception:
                logger.exception("settings upkeep failed")

    async def _apply(self, settings: Settings) -> None:
        """Apply one snapshot. What was applied (the pairings whose connections may live, the
        rotations and secrets seen) is recorded only once their connections are closed: a
        failure part way leaves it to be done again, never half-done and marked done."""
        if self.endpoint is not None and settings is not self._told:
            # browser_cdp turned on or off: clients hear of it, in the background: a client
            # that stops reading must not hold back the closing of unpaired browsers below
            self._told = settings
            self._spawn(self._tell_clients(self.endpoint, settings))
        rotated = settings.rotations != self._rotations  # they may pair again at once
        closing = (
            (CloseCode.TOKEN_ROTATED, "every browser credential was replaced")
            if rotated
            else (CloseCode.NOT_PAIRED, "this browser was unpaired")
        )
        paired = frozenset(p.id for p in settings.pairings)
        # Unpaired browsers go first: closing them needs no secret, so a secret store that
        # fails below cannot keep them connected.
        await self._close_pairings(self._paired - paired, closing)
        self._paired = paired
        moved = self.tokens.follow(settings)  # `tabrelay secrets use` in another process
        if moved or settings.secrets_revision != self._secrets_revision:
            if self.tokens.problem is not None and not moved:
                # Another process just used the secrets: the keychain may be open again.
                with contextlib.suppress(SecretStoreError):
                    await asyncio.to_thread(self.tokens.retry)
            previous = dict(self._credentials)
            known = set(self._client_tokens)
            await self._load_secrets()
            for name in known - set(self._client_tokens):
                self.gate.forget_client(name)
            replaced = {
                pairing_id
                for pairing_id, token in previous.items()
                if not hmac.compare_digest(token, self._credentials.get(pairing_id, ""))
            }
            await self._close_pairings(replaced, closing)
            self._secrets_revision = settings.secrets_revision
        self._rotations = settings.rotations

    async def _close_pairings(self, gone: set[str] | frozenset[str], closing: Closing) -> None:
        if gone and self.relay is not None:
            await self.relay.close_pairings(set(gone), *closing)
            logger.info("unpaired %s; their connections are closed", ", ".join(sorted(gone)))

    async def _prune(self) -> None:
        while True:
            settings = self.settings_store.current
            if self.command_log is not None:
                try:
                    removed = await asyncio.to_thread(
                        self.command_log.prune,
                        max_rows=settings.log_retention_rows,
                        max_age_days=settings.log_retention_days,
                    )
                    if removed:
                        logger.info("command log: pruned %d old rows", removed)
                except Exception:
                    logger.exception("pruning the command log failed")
            await asyncio.sleep(PRUNE_INTERVAL)

    def _browsers_changed(self, change: Change, browser: Browser) -> None:
        """Name a pairing after its browser and learn its tabs; coalesce changes into one
        list-changed notice."""
        if change == "connected":
            self._label(browser)
            self._spawn(self._learn_tabs(browser))
        if self.endpoint is None or self._notify is not None:
            return
        loop = asyncio.get_running_loop()
        self._notify = loop.call_later(NOTIFY_DELAY, self._send_list_changed)

    async def _tell_clients(self, endpoint: McpEndpoint, settings: Settings) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(NOTICE_TIMEOUT):
                await endpoint.settings_changed(settings)

    async def _learn_tabs(self, browser: Browser) -> None:
        """Fill the app's copy of a new browser's tabs (the tray and the Tabs page count it);
        tab events keep it current from there."""
        with contextlib.suppress(BrowserError):  # gone already, or it did not answer in time
            await browser.list_tabs(timeout=LEARN_TABS_TIMEOUT)

    def _label(self, browser: Browser) -> None:
        """Remember how a paired browser names itself, for the person's list of pairings."""
        if browser.hello is None or not browser.hello.browser:
            return
        label = browser.hello.browser[:80]
        pairing_id = browser.pairing_id
        if not any(p.id == pairing_id and p.label != label for p in self.settings.pairings):
            return

        def rename(settings: Settings) -> None:
            for paired in settings.pairings:
                if paired.id == pairing_id:
                    paired.label = label

        self._spawn(asyncio.to_thread(self.settings_store.update, rename))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Background work the core waits for (or cancels) when it stops."""
        task = asyncio.get_running_loop().create_task(work)
        self._notifications.add(task)
        task.add_done_callback(self._notifications.discard)

    def _send_list_changed(self) -> None:
        self._notify = None
        if self.endpoint is not None:
            self._spawn(self.endpoint.resources_changed())

    # --- the instance file ------------------------------------------------------------------

    def _write_instance_file(self) -> None:
        info = {
            "pid": os.getpid(),
            "version": __version__,
            "relay_port": self.relay.port if self.relay else 0,
            "mcp_port": self.endpoint.port if self.endpoint else 0,
            "started_at": time.time(),
        }
        try:
            atomic_write(self.paths.instance_file, json.dumps(info).encode("utf-8"))
        except ConfigError as exc:
            logger.warning("could not write %s: %s", self.paths.instance_file, exc)

    def _remove_instance_file(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.paths.instance_file.unlink()


def freeze_startup_objects() -> None:
    """Keep the objects that live as long as the app out of the garbage collector's full scans.

    The MCP SDK, pydantic and (in the tray app) Qt leave a few hundred thousand long-lived
    objects. A full collection over them stalls the loop for about 100 ms: a hitch in the
    Events page under a heavy CDP stream, and time lost by every call that builds many objects
    (a large snapshot). ``gc.freeze`` moves them to a permanent generation, so later full
    collections scan only what was created since. Both front ends call it once they are up.
    """
    gc.collect()
    gc.freeze()
