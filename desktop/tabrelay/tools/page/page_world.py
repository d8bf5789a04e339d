"""Tabrelay's own code in a tab, out of the page's reach: an isolated world and a binding.

``PageWorld.install`` has Chrome run ``source`` in an isolated world of its own (a separate
JavaScript global, sharing only the DOM with the page) in the tab's top frame, on the current
document and on every document the tab loads from then on, and gives that world, and only it, a
way to send JSON objects back to the app: ``TABRELAY_SEND(obj)``, a wrapper over a CDP binding
(``Runtime.addBinding`` scoped to the world's name) whose calls come back as
``Runtime.bindingCalled`` events through the event hub; ``TABRELAY_ON_REMOVE(fn)`` has ``fn`` run
in the current document when the world is removed (or its install cancelled). The page's own
scripts can neither call the binding nor see the world's globals; the world's and the binding's
names carry a random suffix per install. It does not decide what the code does (the handoff
banner, the demonstration recorder do), and it keeps no state in ``TabStates``: its owner keeps
the object and calls ``remove``.

Iframes: the world's script runs in the top frame only (it returns at once in any other frame),
so a frame's page, whatever its origin, never hosts Tabrelay's code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

from tabrelay.errors import BrowserError, EventsClosed, TabrelayError, ToolError
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent, Subscription
from tabrelay.tools.context import exception_text
from tabrelay.tools.scripts import fill, script
from tabrelay.tools.state.sessions import TOOL_DOMAINS

logger = logging.getLogger(__name__)

BINDING_CALLED = "Runtime.bindingCalled"
MAX_MESSAGE_BYTES = 64 * 1024  # one message, as JSON text
MESSAGE_RATE = 100.0  # messages a second a world may send, on average…
MESSAGE_BURST = 200  # …and at once; past that they are dropped (and logged) until it slows down
MESSAGE_QUEUE = 2000  # messages waiting for on_message; the oldest go when it falls behind
CLEANUP_TIMEOUT = 3.0  # each step of taking a world away; a page held by a dialog may not answer
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
REMOVED = "globalThis.TABRELAY_REMOVED && globalThis.TABRELAY_REMOVED()"

# The world's prologue: TABRELAY_SEND over the binding, then the owner's source, top frame only.
# It runs in the isolated world, so nothing the page defines (a global TABRELAY_SEND, a patched
# JSON.stringify) is seen here, and nothing defined here is seen by the page.
_PROLOGUE = script("page_world.js")


class PageWorld:
    """One install of Tabrelay's code in one tab; see the module docstring."""

    # Clean-ups still running after their caller was cancelled (an MCP cancel cancels every
    # await of the call that follows): held here so they are not collected before they finish.
    _settling: ClassVar[set[asyncio.Task[None]]] = set()

    def __init__(
        self,
        browser: Browser,
        tab_id: int,
        *,
        world: str,
        binding: str,
        subscription: Subscription,
        on_message: Callable[[dict[str, Any]], None],
    ) -> None:
        self.browser = browser
        self.tab_id = tab_id
        self.world = world  # the isolated world's name
        self.binding = binding  # the binding's name (callable only from that world)
        self.script: str | None = None  # Page.addScriptToEvaluateOnNewDocument's identifier
        self.received = 0
        self.dropped = 0
        self._subscription = subscription
        self._on_message = on_message
        self._tokens = float(MESSAGE_BURST)
        self._refilled = time.monotonic()
        self._flooding = False
        self._reader: asyncio.Task[None] | None = None
        self._removal: asyncio.Task[None] | None = None
        self._cleanup: str | None = None

    @classmethod
    async def install(
        cls,
        browser: Browser,
        tab_id: int,
        *,
        hub: EventHub,
        name: str,
        source: str,
        on_message: Callable[[dict[str, Any]], None],
    ) -> PageWorld:
        """Run ``source`` in a new isolated world of the tab (now and on every document it loads)
        and deliver what it sends with ``TABRELAY_SEND(obj)`` to ``on_message``.

        ``name`` (lower case letters, digits, ``_``) names the world in logs and in its random
        name. ``on_message`` runs in the event loop, never inside the hub's publish.

        Raises:
            ToolError: the tab is gone, or cannot host the world (closed meanwhile, a page
                Tabrelay may not use, the browser disconnected).
        """
        if not _NAME.fullmatch(name):
            raise ValueError(f"a page world's name is lower case letters, digits, _: {name!r}")
        suffix = secrets.token_hex(8)
        binding, world = f"__tabrelay_{name}_{suffix}", f"tabrelay-{name}-{suffix}"
        subscription = hub.subscribe(
            maxlen=MESSAGE_QUEUE,
            hears_muted=True,  # its own messages, even while the tab is muted for a handoff
            accept=lambda e: (
                e.kind == "cdp"
                and e.method == BINDING_CALLED
                and e.browser_id == browser.id
                and e.tab_id == tab_id
                and e.params.get("name") == binding
            ),
        )
        page = cls(
            browser,
            tab_id,
            world=world,
            binding=binding,
            subscription=subscription,
            on_message=on_message,
        )
        page._reader = asyncio.get_running_loop().create_task(page._read())
        # The steps run as their own task, so a cancel of the caller cannot leave a script in
        # the tab whose identifier nobody knows: the task finishes, and the removal follows it.
        setup = asyncio.ensure_future(page._set_up(source))
        try:
            await asyncio.shield(setup)
        except asyncio.CancelledError:
            page._settle(page._remove_after(setup))
            raise
        except BaseException:
            await page._settle(page._remove_after(setup))
            raise
        return page

    async def _set_up(self, source: str) -> None:
        try:
            # Chrome runs new-document scripts only with Page enabled, and gives a binding to a
            # world made later only with Runtime enabled; both are domains every tool session
            # keeps enabled anyway (``sessions.TOOL_DOMAINS``), and enabling twice is harmless.
            for domain in TOOL_DOMAINS:
                await self.browser.cdp(self.tab_id, f"{domain}.enable")
            await self.browser.cdp(
                self.tab_id,
                "Runtime.addBinding",
                {"name": self.binding, "executionContextName": self.world},
            )
            script = fill(
                _PROLOGUE,
                BINDING_NAME=json.dumps(self.binding),
                MAX_MESSAGE_BYTES=str(MAX_MESSAGE_BYTES),
                WORLD_SOURCE=source,
            )
            answer = await self.browser.cdp(
                self.tab_id,
                "Page.addScriptToEvaluateOnNewDocument",
                {"source": script, "worldName": self.world, "runImmediately": True},
            )
            self.script = str(answer["identifier"])
        except BrowserError as error:
            raise ToolError(
                f"could not put Tabrelay's page code in tab {self.tab_id}: {error.message} "
                "(the tab may have been closed)"
            ) from None
        except (KeyError, TypeError):
            raise ToolError(
                f"tab {self.tab_id} did not take Tabrelay's page code (no script identifier)"
            ) from None

    async def _remove_after(self, setup: asyncio.Future[None]) -> None:
        with contextlib.suppress(BaseException):
            await setup
        await self._take_away()

    async def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the world, top frame, current document (promises are
        awaited; the value comes back as JSON).

        Raises:
            ToolError: the world was removed, the tab is gone, or the expression threw.
        """
        if self._removal is not None:
            raise ToolError(f"Tabrelay's page code in tab {self.tab_id} was removed")
        return await self._evaluate(expression)

    async def _evaluate(self, expression: str) -> Any:
        try:
            tree = await self.browser.cdp(self.tab_id, "Page.getFrameTree")
            frame_id = tree["frameTree"]["frame"]["id"]
            # The world the script made for this document (Chrome makes it once per name).
            made = await self.browser.cdp(
                self.tab_id,
                "Page.createIsolatedWorld",
                {"frameId": frame_id, "worldName": self.world},
            )
            answer = await self.browser.cdp(
                self.tab_id,
                "Runtime.evaluate",
                {
                    "expression": expression,
                    "contextId": made["executionContextId"],
                    "returnByValue": True,
                    "awaitPromise": True,
                },
            )
        except BrowserError as error:
            raise ToolError(f"could not run code in tab {self.tab_id}: {error.message}") from None
        except (KeyError, TypeError):
            raise ToolError(f"tab {self.tab_id} answered without its frame or world") from None
        details = answer.get("exceptionDetails")
        if details:
            raise ToolError(
                f"Tabrelay's page code in tab {self.tab_id} failed: {exception_text(details)}"
            )
        return answer.get("result", {}).get("value")

    async def remove(self, cleanup: str | None = None) -> None:
        """Run ``cleanup`` in the world (best effort), remove the script and the binding, and
        stop listening. Idempotent; never raises for a tab or browser that is gone; finishes
        even when the caller is cancelled meanwhile."""
        if self._removal is None:
            self._cleanup = cleanup
        await self._settle(self._take_away())

    def _settle(self, work: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
        """Start the removal (once: later calls get the first one), as a task of its own that a
        cancel of the caller does not stop; the shielded removal to await."""
        if self._removal is not None:
            work.close()
        else:
            task = asyncio.ensure_future(work)
            self._removal = task
            PageWorld._settling.add(task)
            task.add_done_callback(PageWorld._settling.discard)
        return asyncio.shield(self._removal)

    async def _take_away(self) -> None:
        self._subscription.close()  # nothing more is delivered, whatever follows
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        steps: list[tuple[str, dict[str, Any]]] = []
        if self.script is not None:
            steps.append(("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self.script}))
        steps.append(("Runtime.removeBinding", {"name": self.binding}))
        if self.script is not None and not self.browser.closed:
            # The source's own clean-ups first (also for an install cancelled on its way: what
            # it showed in the current document goes too), then the owner's.
            cleanups = [REMOVED, *([self._cleanup] if self._cleanup is not None else [])]
            with contextlib.suppress(ToolError, TimeoutError):
                async with asyncio.timeout(CLEANUP_TIMEOUT):
                    for cleanup in cleanups:
                        await self._evaluate(cleanup)
        for method, params in steps:
            if self.browser.closed:
                break
            with contextlib.suppress(TabrelayError):
                await self.browser.cdp(self.tab_id, method, params, timeout=CLEANUP_TIMEOUT)

    # --- messages ------------------------------------------------------------------------------

    async def _read(self) -> None:
        with contextlib.suppress(EventsClosed):
            while True:
                for event in await self._subscription.wait(limit=100):
                    self._deliver(event)

    def _deliver(self, event: HubEvent) -> None:
        payload = event.params.get("payload")
        if not self._admit():
            return
        if not isinstance(payload, str) or len(payload.encode("utf-8")) > MAX_MESSAGE_BYTES:
            self._drop("a message over %d bytes", MAX_MESSAGE_BYTES)
            return
        try:
            message = json.loads(payload)
        except ValueError:
            self._drop("a message that is not JSON")
            return
        if not isinstance(message, dict):
            self._drop("a message that is not a JSON object")
            return
        self.received += 1
        try:
            self._on_message(message)
        except Exception:  # the owner's code: one failing message must not end the world
            logger.exception("page world %s: handling a message failed", self.world)

    def _admit(self) -> bool:
        now = time.monotonic()
        self._tokens = min(MESSAGE_BURST, self._tokens + (now - self._refilled) * MESSAGE_RATE)
        self._refilled = now
        if self._tokens >= 1:
            self._tokens -= 1
            self._flooding = False
            return True
        self.dropped += 1
        if not self._flooding:  # one line per flood, not one per message
            self._flooding = True
            logger.warning(
                "page world %s in tab %s sends messages too fast; dropping them",
                self.world,
                self.tab_id,
            )
        return False

    def _drop(self, what: str, *args: Any) -> None:
        self.dropped += 1
        logger.warning("page world %s dropped " + what, self.world, *args)
