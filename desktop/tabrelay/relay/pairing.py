"""Pairing (DESIGN §4.5): which browsers may connect, each with a credential of its own.

A credential is handed out only inside a pairing window, once: either the person allowed this
very request in the tray (the ``PairingApprover``'s dialog) or allowed the extension ahead of
time with ``tabrelay pair allow`` (a ``PairingGrant`` in the settings, the headless way). An
Origin header alone proves nothing — any local program can send a paired extension's id — so a
request outside a window only raises the question, and the window the person opens belongs to
the request they saw: it carries the code the extension's popup shows, the dialog shows it too,
and only a request with that code collects. One question at a time, and after a "no" the same
extension is not asked again for a while; what became of a request (``status``) is there for
the extension to read, so it neither gives up while the person decides nor asks again after a
"no". Each pairing is a ``PairedBrowser`` in the settings with its own credential in the secret
store, so one leak is one revoke. A rotation retires the credentials it replaces rather than
deleting them at once (``RetiredPairing``): the relay uses a retired one only to prove itself to
a browser that was away and tell it to pair again, never to let it in, and only for
``RETIRED_DAYS``; after that it is refused and forgotten (``prune_retired``, which the app runs
at start and on its upkeep cadence). Lookups read the settings snapshot in force, never the
file. Blocking methods (settings file, keychain) are for the CLI and for threads; the app calls
``claim``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import RETIRED_DAYS as RETIRED_DAYS  # the relay's tests age by it
from tabrelay.config.settings import (
    PairedBrowser,
    PairingGrant,
    RetiredPairing,
    Settings,
    SettingsStore,
    drop_pairings,
)
from tabrelay.listeners import Listeners
from tabrelay.protocol.constants import PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH

logger = logging.getLogger(__name__)

PAIRING_CODE = re.compile(f"[{PAIRING_CODE_ALPHABET}]{{{PAIRING_CODE_LENGTH}}}")
WINDOW = 120.0  # seconds an approved pairing stays open for the extension to collect it
REFUSED_PAUSE = 60.0  # after a "no", the same extension is not asked again for this long
GRANT_MINUTES = 10.0  # `tabrelay pair allow`: how long the extension has to come and pair


Window = tuple[str, str | None]  # (extension id, the code its request showed, if any)
# What became of a request: the person sees it now, allowed it, said no, or is not asked.
RequestStatus = Literal["asking", "allowed", "declined", "waiting"]


class PairingApprover(Protocol):
    async def approve_pairing(self, extension_id: str, code: str | None) -> bool:
        """Ask the person whether ``chrome-extension://<extension_id>`` may pair; ``code`` is
        what the extension shows (``None``: an older extension, which shows none)."""
        ...


class Pairing:
    def __init__(
        self,
        store: SettingsStore,
        tokens: TokenStore,
        *,
        approver: PairingApprover | None = None,
        on_request: Callable[[str], None] | None = None,
        on_paired: Callable[[PairedBrowser, str], None] | None = None,
        catch_up: Callable[[], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``catch_up`` (the app's) takes in what another process just wrote: a request that
        no window and no grant in force lets pair waits for it once, so an allowance the CLI
        gave a moment ago pairs at once."""
        self._store = store
        self._catch_up = catch_up
        self._tokens = tokens
        self.approver = approver
        self._on_request = on_request
        self._on_paired = on_paired
        self._clock = clock
        self.pending: set[str] = set()  # extensions whose question is being asked
        self._asking: dict[str, str | None] = {}  # extension id → the code its question shows
        self._windows: dict[Window, float] = {}  # an approved request → when its window closes
        self._refused: dict[str, float] = {}  # extension id → when it may be asked again
        self._announced: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: Listeners[[]] = Listeners("pairing")

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` when a question to the person starts or ends (``pending``);
        returns the way to stop."""
        return self._listeners.add(listener)

    def _changed(self) -> None:
        self._listeners.tell()

    def settings(self) -> Settings:
        return self._store.current

    def is_paired(self, extension_id: str) -> bool:
        return self.settings().is_paired(extension_id)

    # --- the config endpoint ----------------------------------------------------------------

    async def claim(self, extension_id: str, code: str | None = None) -> str | None:
        """A new credential for this request if a pairing window is open for it (closing it),
        else ``None`` — after asking the person, unless a question is already out.

        Raises:
            SecretStoreError: the secrets cannot be written now (a locked keychain): nobody
                is asked a question whose answer could not be kept.
        """
        if self._tokens.problem is not None:
            raise self._tokens.problem
        if self._take_window((extension_id, code)) or await self._claim_grant(extension_id, code):
            paired, token = await self.pair_now(extension_id)
            logger.info("browser pairing %s issued to extension %s", paired.id, extension_id)
            return token
        self.request(extension_id, code)
        return None

    async def pair_now(self, extension_id: str) -> tuple[PairedBrowser, str]:
        """Pair one browser of ``extension_id`` now (the person asked), usable at once."""
        paired, token = await asyncio.to_thread(self.add, extension_id)
        if self._on_paired is not None:
            self._on_paired(paired, token)
        return paired, token

    def open_window(self, extension_id: str, code: str | None = None) -> None:
        """The person allowed this request to pair now: its next config request pairs it."""
        self._windows[(extension_id, code)] = self._clock() + WINDOW
        self._refused.pop(extension_id, None)

    def status(self, extension_id: str, code: str | None) -> tuple[RequestStatus, float]:
        """What became of this extension's request showing ``code``, and the seconds until
        it may be asked again after a "no". Never a credential and never a new question: the
        extension reads it to keep waiting while the person decides and to stop after a "no".
        """
        now = self._clock()
        if extension_id in self.pending and self._asking.get(extension_id) == code:
            return "asking", 0.0
        if self._windows.get((extension_id, code), 0.0) > now:
            return "allowed", 0.0
        left = self._refused.get(extension_id, 0.0) - now
        if left > 0:
            return "declined", left
        return "waiting", 0.0

    def _take_window(self, window: Window) -> bool:
        deadline = self._windows.pop(window, None)
        return deadline is not None and self._clock() < deadline

    async def _claim_grant(self, extension_id: str, code: str | None) -> bool:
        if not self._granted(extension_id, code):
            if self._catch_up is None:
                return False
            await self._catch_up()  # `tabrelay pair allow` may have written it a moment ago
            if not self._granted(extension_id, code):
                return False
        return await asyncio.to_thread(self._take_grant, extension_id, code)

    def _granted(self, extension_id: str, code: str | None) -> bool:
        now = time.time()
        return any(_matches(g, extension_id, code, now) for g in self.settings().pairing_grants)

    def _take_grant(self, extension_id: str, code: str | None) -> bool:
        """Consume an unexpired grant this request matches (blocking: the settings file)."""
        now = time.time()

        def matches(grant: PairingGrant) -> bool:
            return _matches(grant, extension_id, code, now)

        taken = False

        def take(settings: Settings) -> None:
            nonlocal taken
            kept = []
            for grant in settings.pairing_grants:
                if grant.expires_at <= now:
                    continue  # expired: drop it on the way
                if not taken and matches(grant):
                    taken = True
                    continue
                kept.append(grant)
            settings.pairing_grants = kept

        self._store.update(take)
        return taken

    def request(self, extension_id: str, code: str | None = None) -> None:
        """A request for a credential outside a window: ask the person, one question at a
        time (a program asking in many extensions' names cannot pile up dialogs)."""
        if self.pending:
            return
        if self._clock() < self._refused.get(extension_id, 0.0):
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
        self._asking[extension_id] = code
        self._changed()
        if self._on_request is not None:
            self._on_request(extension_id)
        task = asyncio.get_running_loop().create_task(self._ask(self.approver, extension_id, code))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ask(self, approver: PairingApprover, extension_id: str, code: str | None) -> None:
        try:
            allowed = await approver.approve_pairing(extension_id, code)
        # The approver is UI code; whatever it raises means "not allowed", never a crash.
        except Exception:
            logger.exception(
                "the pairing approver failed; extension %s stays unpaired", extension_id
            )
            allowed = False
        finally:
            self.pending.discard(extension_id)
            self._asking.pop(extension_id, None)
            self._changed()
        if allowed:
            self.open_window(extension_id, code)
            logger.info("pairing of extension %s allowed; waiting for it to collect", extension_id)
        else:
            self._refused[extension_id] = self._clock() + REFUSED_PAUSE
            logger.info("pairing of extension %s denied", extension_id)

    # --- the person's commands (blocking) ---------------------------------------------------

    def add(self, extension_id: str, *, label: str = "") -> tuple[PairedBrowser, str]:
        """Pair one browser of ``extension_id`` now: its pairing and its new credential."""
        paired = PairedBrowser(id=f"b-{secrets.token_hex(4)}", extension_id=extension_id)
        paired.label = label
        token = self._tokens.create_browser_credential(paired.id)

        def append(settings: Settings) -> None:
            settings.pairings.append(paired)
            settings.secrets_revision += 1

        try:
            self._store.update(append)
        except BaseException:
            self._tokens.delete_browser_credential(paired.id)
            raise
        return paired, token

    def grant(
        self, extension_id: str, *, minutes: float = GRANT_MINUTES, code: str | None = None
    ) -> PairingGrant:
        """Allow one pairing by ``extension_id`` within ``minutes`` (``tabrelay pair allow``),
        only by the request showing ``code`` when given."""
        grant = PairingGrant(
            extension_id=extension_id, expires_at=time.time() + minutes * 60, code=code
        )

        def add(settings: Settings) -> None:
            settings.pairing_grants = [
                g for g in settings.pairing_grants if g.extension_id != extension_id
            ]
            settings.pairing_grants.append(grant)

        self._store.update(add)
        return grant

    def revoke(self, key: str) -> list[PairedBrowser]:
        """Unpair the pairing with this id, or every pairing of this extension id; what went.

        Its credentials stop working at once; a running app closes their connections.
        """
        return self._remove(lambda p: key in (p.id, p.extension_id))

    def revoke_all(self) -> list[PairedBrowser]:
        """Replace every browser's credential (``tabrelay token rotate``): each pairs again.

        The replaced credentials are retired, not deleted: a browser that was away when it
        happened still meets an app that proves itself and tells it to pair again (4410).
        """
        return self._remove(lambda p: True, rotation=True)

    def _remove(
        self,
        chosen: Callable[[PairedBrowser | RetiredPairing], bool],
        *,
        rotation: bool = False,
    ) -> list[PairedBrowser]:
        removed: list[PairedBrowser] = []
        dropped: list[RetiredPairing] = []

        def drop(settings: Settings) -> None:
            gone = drop_pairings(
                settings, chosen, rotation=rotation, retire=rotation, now=time.time()
            )
            removed[:], dropped[:] = gone

        self._store.update(drop)
        for paired in removed:
            if not paired.legacy and not rotation:
                self._tokens.delete_browser_credential(paired.id)
        for retired in dropped:
            self._tokens.delete_browser_credential(retired.id)
        return removed

    # --- retired credentials ----------------------------------------------------------------

    def has_retired(self, extension_id: str) -> bool:
        """Whether a rotation retired a credential of this extension that has not expired (its
        browser may knock)."""
        return bool(self.settings().live_retired(extension_id, time.time()))

    def retired_expired(self) -> bool:
        """Whether a retired credential has expired and waits to be forgotten (no I/O)."""
        now = time.time()
        return any(r.expired(now) for r in self.settings().retired_pairings)

    def prune_retired(self) -> list[RetiredPairing]:
        """Forget the retired credentials that expired, in the settings and the secret store;
        what went (blocking; nothing is written when nothing expired)."""
        if not self.retired_expired():
            return []
        dropped: list[RetiredPairing] = []

        def drop(settings: Settings) -> None:
            dropped[:] = drop_pairings(
                settings, lambda _: False, rotation=False, retire=False, now=time.time()
            )[1]

        self._store.update(drop)
        for retired in dropped:
            self._tokens.delete_browser_credential(retired.id)
        if dropped:
            logger.info("forgot %d retired browser credential(s) that expired", len(dropped))
        return dropped

    def retired_credentials(self, extension_id: str) -> list[tuple[str, str]]:
        """The retired credentials of this extension's former pairings, ``(id, credential)``
        (blocking: the secret store). Only to prove the app; they let nobody in.

        Raises:
            SecretStoreError: the secrets cannot be read now (a locked keychain).
        """
        found = []
        for retired in self.settings().live_retired(extension_id, time.time()):
            token = self._tokens.browser_credential(retired.id)
            if token:
                found.append((retired.id, token))
        return found

    def forget_retired(self, retired_id: str) -> None:
        """The browser that held this retired credential was told to pair again: it is done
        (blocking)."""

        def drop(settings: Settings) -> None:
            settings.retired_pairings = [r for r in settings.retired_pairings if r.id != retired_id]

        self._store.update(drop)
        self._tokens.delete_browser_credential(retired_id)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _matches(grant: PairingGrant, extension_id: str, code: str | None, now: float) -> bool:
    """Whether an unexpired grant lets this request (extension id, code shown) pair."""
    return (
        grant.extension_id == extension_id and grant.expires_at > now and grant.code in (None, code)
    )
