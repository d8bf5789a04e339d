"""Demonstrations: the person records a recipe by doing it ("Record what I do" on a tab).

``Demonstrations`` puts capture code in the tab through a ``PageWorld`` (out of the page's
scripts' reach). The world listens, in the capture phase and to trusted events only (what the
person did, never what a page script dispatched), for clicks, checkboxes and radios, text
fields edited (one step with the final text per edit), selects, and non-character keys and
shortcuts, and sends each as the locator of its element (``locators.LOCATOR_SCRIPT``) and what
was done. The app adds navigations the person made themselves (typed URL, back, forward,
reload): main-frame navigations no captured input caused within ``CAUSED_WITHIN`` seconds.
Text typed into a secret field (``page_scripts.FIELD_KIND``) never leaves the world: it sends
``{secret: true, kind}`` and the step types ``{{password}}`` with a secret parameter. Steps go
to the ``Recorder``; nothing here writes a file itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from tabrelay.errors import EventsClosed, TabrelayError, ToolError
from tabrelay.listeners import Listeners
from tabrelay.recipes.model import MAX_TEXT, PARAM, Param, Step
from tabrelay.recipes.recorder import Recorder
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import EventHub, HubEvent, Subscription
from tabrelay.relay.registry import BrowserRegistry
from tabrelay.tools.page.locators import LOCATOR_SCRIPT, locator_from
from tabrelay.tools.page.page_world import PageWorld
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.page_scripts import FIELD_KIND
from tabrelay.tools.state.sessions import TabSessions
from tabrelay.tools.state.tab_state import TabStates

logger = logging.getLogger(__name__)

CAUSED_WITHIN = 1.5  # seconds: a navigation this soon after a captured input is its effect
NAV_SETTLE = 0.3  # seconds a navigation waits for the input messages sent before it
WATCH_EVERY = 0.5  # seconds between looks at whether the tab or its browser went
STOP_TIMEOUT = 3.0  # taking the last edit out of the page when the person presses Stop
_NAVIGATIONS = frozenset({"Page.frameNavigated", "Page.navigatedWithinDocument"})
_MODIFIERS: tuple[Literal["Alt", "Control", "Meta", "Shift"], ...] = (
    "Alt",
    "Control",
    "Meta",
    "Shift",
)
_SECRET_NAMES = {"password": "password", "one-time code": "one_time_code"}

# The capture code, in the demonstration's world. ``TABRELAY_SEND`` is the world's way out.
CAPTURE_SOURCE = (
    "const locate = "
    + LOCATOR_SCRIPT
    + ";\nconst fieldKind = "
    + FIELD_KIND.strip()
    + ";\n"
    + script("capture.js")
)
_STOP = "Object.hasOwn(globalThis, 'TABRELAY_DEMO') ? TABRELAY_DEMO.stop() : null"
_TAKE = "Object.hasOwn(globalThis, 'TABRELAY_DEMO') ? TABRELAY_DEMO.take() : null"


@dataclass(eq=False)
class _Demonstration:
    id: str
    browser: Browser
    tab_id: int
    release: Callable[[], None]
    subscription: Subscription
    world: PageWorld | None = None
    watcher: asyncio.Task[None] | None = None
    ending: asyncio.Task[None] | None = None
    last_input: float = 0.0
    history: tuple[int, int, str] | None = None  # (current index, entries, url)
    main_frame: str = ""


class Demonstrations:
    """The demonstrations being recorded, one per tab at most; see the module docstring."""

    def __init__(
        self,
        *,
        registry: BrowserRegistry,
        hub: EventHub,
        tabs: TabStates,
        sessions: TabSessions,
        recorder: Recorder,
    ) -> None:
        self._registry = registry
        self._hub = hub
        self._tabs = tabs
        self._sessions = sessions
        self._recorder = recorder
        self._active: dict[str, _Demonstration] = {}
        self._changed: Listeners[[]] = Listeners("demonstrations")

    def active(self) -> list[tuple[str, str, int]]:
        """(recording id, browser id, tab id) of each demonstration being recorded."""
        return [(d.id, d.browser.id, d.tab_id) for d in self._active.values()]

    def add_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Tell ``fn`` on each start and stop (each step: the recorder's own listeners);
        returns the way to stop telling it."""
        return self._changed.add(fn)

    async def start(self, browser_id: str, tab_id: int) -> str:
        """Start recording what the person does in the tab; the recording's id.

        Raises:
            ToolError: no such browser or tab, the tab is already being recorded, or it cannot
                host the capture code (a page Tabrelay may not use).
            RecipeError: the recordings folder cannot be written.
        """
        browser = self._registry.get(browser_id)
        if browser is None or browser.closed:
            raise ToolError(f"no browser {browser_id!r} is connected")
        if any(d.browser.id == browser_id and d.tab_id == tab_id for d in self._active.values()):
            raise ToolError(f"tab {tab_id} is already being recorded; press Stop first")
        try:
            tab = await browser.get_tab(tab_id, ask=True)
            await self._sessions.prepare(browser, tab_id)
            history = await _history(browser, tab_id)
            tree = await browser.cdp(tab_id, "Page.getFrameTree")
        except TabrelayError as error:
            raise ToolError(f"cannot record tab {tab_id}: {error.message}") from None
        release = self._sessions.hold(browser_id, tab_id)
        subscription = self._hub.subscribe(
            maxlen=1000,
            hears_muted=True,  # the person's own recording goes on through a handoff
            accept=lambda e: (
                e.browser_id == browser_id
                and e.tab_id == tab_id
                and (
                    (e.kind == "cdp" and e.method in _NAVIGATIONS)
                    or (e.kind == "tab" and e.method == "removed")
                )
            ),
        )
        recording_id: str | None = None
        try:
            recording_id = self._recorder.begin(
                "demonstration", browser_id=browser_id, tab_id=tab_id, start_url=tab.url
            )
            demo = _Demonstration(recording_id, browser, tab_id, release, subscription)
            demo.history = history
            demo.main_frame = str(tree["frameTree"]["frame"]["id"])
            with contextlib.suppress(ValidationError):
                self._recorder.add(
                    recording_id, [Step(action="navigate", url=tab.url, by="person")]
                )
            demo.world = await PageWorld.install(
                browser,
                tab_id,
                hub=self._hub,
                name="demonstration",
                source=CAPTURE_SOURCE,
                on_message=lambda message: self._heard(demo, message),
            )
        except BaseException:
            subscription.close()
            release()
            if recording_id is not None:
                self._recorder.finish(recording_id)
            raise
        self._active[recording_id] = demo
        demo.watcher = asyncio.create_task(self._watch(demo))
        logger.info("demonstration %s on tab %s of browser %s", recording_id, tab_id, browser_id)
        self._changed.tell()
        return recording_id

    async def stop(self, recording_id: str) -> None:
        """End the demonstration (its last edit recorded first). Idempotent; finishes even when
        the caller is cancelled meanwhile."""
        demo = self._active.get(recording_id)
        if demo is None:
            return
        await self._end(demo, take_last=True)

    async def close(self) -> None:
        """End every demonstration (Tabrelay stopping)."""
        for demo in list(self._active.values()):
            await self._end(demo, take_last=False)

    # --- inside ---------------------------------------------------------------------------

    async def _end(self, demo: _Demonstration, *, take_last: bool) -> None:
        await asyncio.shield(self._ending(demo, take_last=take_last))

    def _ending(self, demo: _Demonstration, *, take_last: bool) -> asyncio.Task[None]:
        """The demonstration's one ending, begun now if it has not begun."""
        if demo.ending is None:
            demo.ending = asyncio.ensure_future(self._take_down(demo, take_last=take_last))
        return demo.ending

    async def _take_down(self, demo: _Demonstration, *, take_last: bool) -> None:
        if demo.watcher is not None and demo.watcher is not asyncio.current_task():
            demo.watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await demo.watcher
        if take_last and demo.world is not None and not demo.browser.closed:
            with contextlib.suppress(TabrelayError, TimeoutError):
                async with asyncio.timeout(STOP_TIMEOUT):
                    last = await demo.world.evaluate(_TAKE)
                if isinstance(last, dict):
                    self._heard(demo, last)
        demo.subscription.close()
        demo.release()
        self._active.pop(demo.id, None)
        self._recorder.finish(demo.id)
        if demo.world is not None:
            await demo.world.remove(_STOP)
        logger.info("demonstration %s ended", demo.id)
        self._changed.tell()

    async def _watch(self, demo: _Demonstration) -> None:
        """Navigations the person made, until the tab closes or its browser goes."""
        browser, tab_id = demo.browser, demo.tab_id
        try:
            while not browser.closed and tab_id in browser.tabs:
                try:
                    async with asyncio.timeout(WATCH_EVERY):
                        batch = await demo.subscription.wait()
                except TimeoutError:
                    continue
                for event in batch:
                    if event.kind == "tab":
                        return
                    if _main_frame(event, demo.main_frame):
                        await self._navigated(demo)
        except EventsClosed:
            pass
        finally:
            if demo.ending is None:  # the tab or its browser went: it ends by itself
                self._ending(demo, take_last=False)

    async def _navigated(self, demo: _Demonstration) -> None:
        await asyncio.sleep(NAV_SETTLE)  # messages the input sent before it arrive first
        try:
            history = await _history(demo.browser, demo.tab_id)
        except TabrelayError:
            return
        before, demo.history = demo.history, history
        if time.monotonic() - demo.last_input < CAUSED_WITHIN or history is None:
            return
        index, entries, url = history
        step: Step | None = None
        with contextlib.suppress(ValidationError):
            if before is not None and (index, entries, url) == before:
                step = Step(action="navigate", history="reload", by="person")
            elif before is not None and index < before[0] and entries == before[1]:
                step = Step(action="navigate", history="back", by="person")
            elif before is not None and index > before[0] and entries == before[1]:
                step = Step(action="navigate", history="forward", by="person")
            elif before is None or url != before[2]:
                step = Step(action="navigate", url=url, by="person")
        if step is not None:
            self._add(demo, [step])

    def _heard(self, demo: _Demonstration, message: dict[str, Any]) -> None:
        """One message from the world: a step (or a gap when its element had no locator)."""
        kind = message.get("type")
        if kind in ("click", "check", "select", "press", "submit"):
            demo.last_input = time.monotonic()
        if kind == "submit" or (demo.ending is not None and demo.id not in self._active):
            return
        target = locator_from(message.get("target"))
        params: list[Param] = []
        try:
            match kind:
                case "click" if target is not None:
                    said = message.get("modifiers") or []
                    mods = [m for m in _MODIFIERS if m in said]
                    step = Step(action="click", target=target, modifiers=mods, by="person")
                case "check" if target is not None:
                    step = Step(
                        action="check", target=target, checked=bool(message["checked"]), by="person"
                    )
                case "select" if target is not None and not message.get("secret"):
                    options = [str(o) for o in message.get("options") or [] if str(o)]
                    step = Step(action="select", target=target, options=options, by="person")
                case "type" if target is not None and message.get("secret"):
                    name = _SECRET_NAMES.get(str(message.get("kind")), "secret")
                    step = Step(action="type", target=target, text=f"{{{{{name}}}}}", by="person")
                    params = [Param(name=name, secret=True, description=f"the {name} typed")]
                case "type" if target is not None:
                    text = str(message.get("text", ""))
                    if len(text) > MAX_TEXT or PARAM.search(text):
                        self._gap(demo, "text typed that a recipe cannot hold as it is")
                        return
                    step = Step(action="type", target=target, text=text, by="person")
                case "press":
                    step = Step(
                        action="press", key=str(message.get("key")), target=target, by="person"
                    )
                case _:
                    self._gap(demo, f"a {kind} on an element that could not be described")
                    return
        except (ValidationError, KeyError, TypeError):
            self._gap(demo, f"a {kind} that could not be recorded")
            return
        self._add(demo, [step], params)

    def _add(self, demo: _Demonstration, steps: list[Step], params: Sequence[Param] = ()) -> None:
        try:
            self._recorder.add(demo.id, steps, params)
        except TabrelayError as error:  # forgotten meanwhile, or the disk refused: it ends
            logger.warning("demonstration %s ends: %s", demo.id, error.message)
            self._ending(demo, take_last=False)

    def _gap(self, demo: _Demonstration, what: str) -> None:
        try:
            self._recorder.add(demo.id, [], gap=what)
        except TabrelayError as error:
            logger.warning("demonstration %s: %s", demo.id, error.message)


def _main_frame(event: HubEvent, main_frame: str) -> bool:
    if event.method == "Page.frameNavigated":
        frame = event.params.get("frame") or {}
        return isinstance(frame, dict) and not frame.get("parentId")
    return event.params.get("frameId") == main_frame


async def _history(browser: Browser, tab_id: int) -> tuple[int, int, str] | None:
    answer = await browser.cdp(tab_id, "Page.getNavigationHistory")
    try:
        index = int(answer["currentIndex"])
        entries = answer["entries"]
        return index, len(entries), str(entries[index]["url"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
