"""Fault injection in real Chromium: every acting and waiting tool and the snapshot, cancelled at
each of its await points, leaves nothing behind, loses nothing (a closed shadow root being opened
to Tabrelay's world) and never stalls the loop.

The call is cancelled at the n-th command it sends to the browser, either while that command
waits for its answer or right after the answer (so the cancel lands at the tool's next await,
an event wait included), for n = 1, 2, … until the tool finishes before its n-th command. After
each cancel: the loop never paused for 100 ms or more, no task, waiter, subscription or pending
command is left, the page holds no mouse button or key down, and the app still answers a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from e2e.cdp import CdpError
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from support.harness import allow_everything
from support.watchdog import LoopWatch
from tabrelay.config.settings import SettingsStore
from tabrelay.endpoint.calls import Caller, ToolRunner
from tabrelay.relay.browser import Browser
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.results import plain

pytestmark = E2E

CALLER = Caller("fault-injection")
MAX_GAP_MS = 100
SETTLE_TIMEOUT = 5.0


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def agent_tab(app: AppUnderTest, url: str) -> tuple[ToolRunner, Browser, int]:
    """The app's tool runner, its browser, and a tab an agent opened on ``url``."""
    runner = app.harness.core.runner
    assert runner is not None
    relay = await app.browser()
    opened = await runner.call(BY_NAME["browser_new_tab"], {"url": url}, CALLER, no_progress)
    return runner, relay, int(opened.data["tab_id"])  # type: ignore[index]


class CancelAt:
    """Wraps a browser's command channel: cancels ``call`` at its ``n``-th command."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.count = 0
        self.n = 0
        self.after_answer = False
        self.call: asyncio.Task[Any] | None = None
        self.cancelled_at: float | None = None
        self.waiting: dict[int, str] = {}  # commands sent and not yet answered, for a failure
        self._send = browser.send_command

    async def send_command(self, method: str, params: Any = None, *, timeout: Any = None) -> Any:
        mine = asyncio.current_task() is self.call or self._inside_call()
        if mine:
            self.count += 1
        hit = mine and self.count == self.n
        if hit and not self.after_answer:
            self._cancel()  # lands while this command waits for its answer
        key = id(asyncio.current_task())
        self.waiting[key] = f"{method} {str(params)[:200]}"
        try:
            result = await self._send(method, params, timeout=timeout)
        finally:
            self.waiting.pop(key, None)
        if hit and self.after_answer:
            self._cancel()  # lands at whatever the tool awaits next
        return result

    def _inside_call(self) -> bool:
        # Commands the call sends from helper tasks (an input command racing a dialog) count.
        task = asyncio.current_task()
        return task is not None and getattr(task, "fault_injection_call", False)

    def _cancel(self) -> None:
        """Cancel the call the way the MCP SDK does: its cancel scope cancels every await the
        call makes after the first, until the call is over."""
        assert self.call is not None
        self.cancelled_at = time.monotonic()
        call, loop = self.call, asyncio.get_running_loop()

        def again() -> None:
            if not call.done():
                call.cancel()
                loop.call_soon(again)

        loop.call_soon(again)


def tag_child_tasks(loop: asyncio.AbstractEventLoop, call: asyncio.Task[Any]) -> Callable[[], None]:
    """Mark tasks created while ``call`` runs as part of it (so their commands count)."""
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        current = asyncio.current_task(loop)
        if current is call or getattr(current, "fault_injection_call", False):
            task.fault_injection_call = True  # type: ignore[attr-defined]
        return task

    loop.set_task_factory(factory)
    return lambda: loop.set_task_factory(previous)


@pytest.fixture(scope="module")
def uploads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("uploads")
    (folder / "file.txt").write_text("hello")
    return folder


async def test_every_acting_reading_and_waiting_tool_cancelled_at_each_await_leaves_nothing_behind(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, uploads: Path
) -> None:
    core = app.harness.core
    await asyncio.to_thread(allow_everything, app.paths)
    url = pages.url(f"tools/cancel.html?run={uuid.uuid4().hex[:8]}")
    runner, relay, tab = await agent_tab(app, url)
    page = await browser.attach_page(url)
    snapshot = plain(
        (await runner.call(BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress)).text
    )

    def ref(role: str, name: str) -> str:
        for line in snapshot.splitlines():
            if line.strip().startswith(f'{role} "{name}"'):
                return line.split("[", 1)[1].split("]", 1)[0]
        raise AssertionError(f"no {role} {name!r} in\n{snapshot}")

    await asyncio.to_thread(
        SettingsStore(app.paths.settings_file).update,
        lambda s: setattr(s, "upload_dirs", [str(uploads)]),
    )
    cases: list[tuple[str, dict[str, Any]]] = [
        ("browser_click", {"ref": ref("button", "Go")}),
        ("browser_click", {"ref": ref("button", "Pay now")}),  # in a frame of another site
        ("browser_type", {"ref": ref("textbox", "Name on card"), "text": "Ada"}),
        ("browser_click", {"selector": "#go", "double": True, "modifiers": ["Shift"]}),
        ("browser_type", {"ref": ref("textbox", "Name"), "text": "new", "submit": True}),
        ("browser_type", {"selector": "#name", "text": "slow", "slowly": True}),
        ("browser_fill_form", {"fields": [
            {"selector": "#name", "value": "Ada"}, {"selector": "#pw", "value": "pw-1"},
            {"selector": "#size", "value": "Large"}, {"selector": "#agree", "value": True},
        ]}),
        ("browser_select_option", {"selector": "#size", "values": ["Large"]}),
        ("browser_hover", {"selector": "#hover"}),
        ("browser_press_key", {"key": "Shift+ArrowDown", "selector": "#name", "repeat": 2}),
        ("browser_scroll", {"direction": "to_element", "selector": "#far"}),
        ("browser_scroll", {"direction": "down"}),
        ("browser_drag", {"source_selector": "#src", "target_selector": "#dst"}),
        ("browser_upload_file", {"selector": "#file", "paths": [str(uploads / "file.txt")]}),
        ("browser_evaluate", {"expression": "new Promise((r) => setTimeout(() => r(1), 50))"}),
        ("browser_wait_for", {"text": "never on this page", "timeout": 1}),
        ("browser_wait_for", {"load_state": "load"}),
        ("browser_navigate", {"url": url}),
        ("browser_navigate", {"action": "reload"}),
        ("browser_snapshot", {}),
        ("browser_snapshot", {"scope": "viewport"}),
        ("browser_find", {"text": "Go"}),
    ]  # fmt: skip
    hook = CancelAt(relay)
    relay.send_command = hook.send_command  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()
    subscribers = core.hub.subscriber_count
    baseline = set(asyncio.all_tasks())
    injected = 0
    try:
        async with LoopWatch() as watch:
            baseline.add(asyncio.current_task())  # type: ignore[arg-type]
            baseline |= set(asyncio.all_tasks())  # the watch's own ticker
            for tool, arguments in cases:
                for n, after_answer in ((n, a) for n in range(1, 200) for a in (False, True)):
                    watch.reset()
                    call = {"tab_id": tab, **arguments}
                    if await _cancel_once(runner, hook, loop, tool, call, n, after_answer):
                        break  # the tool finished before its n-th command
                    injected += 1
                    where = f"{tool} cancelled {'after' if after_answer else 'at'} command {n}"
                    await _settled(runner, relay, hook, where)
                    assert not watch.frozen, where
                    assert watch.max_gap_ms < MAX_GAP_MS, (
                        f"{where}: {watch.max_gap_ms:.0f} ms (collections apart), the loop in\n"
                        f"{watch.stalled_in}"
                    )
                    assert core.hub.subscriber_count == subscribers, where
                    assert runner.active_calls == 0, where
                    leftover = await _tasks_left(baseline)
                    assert leftover == [], (where, leftover)
                    held = await _held(page)
                    assert held == {"buttons": [], "keys": []}, (where, held)
                # The app still answers a call after everything this tool left.
                snapshot = (
                    await runner.call(
                        BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress
                    )
                ).text
    finally:
        relay.send_command = hook._send  # type: ignore[method-assign]
        await page.close()
    assert injected > 150, f"only {injected} cancellations were injected"
    # Reads cancelled while they opened the closed shadow root, or read the frame of another
    # site, lost nothing of either.
    assert 'button "Closed go"' in snapshot, snapshot
    assert 'button "Pay now"' in snapshot, snapshot


async def _cancel_once(
    runner: ToolRunner,
    hook: CancelAt,
    loop: asyncio.AbstractEventLoop,
    tool: str,
    arguments: dict[str, Any],
    n: int,
    after_answer: bool,
) -> bool:
    """Run ``tool`` and cancel it at its ``n``-th command; True if it finished before that."""
    hook.count, hook.n, hook.after_answer, hook.cancelled_at = 0, n, after_answer, None
    call = asyncio.ensure_future(runner.call(BY_NAME[tool], arguments, CALLER, no_progress))
    hook.call = call  # type: ignore[assignment]
    untag = tag_child_tasks(loop, call)  # type: ignore[arg-type]
    try:
        outcome = (await asyncio.gather(call, return_exceptions=True))[0]
    finally:
        untag()
    if hook.cancelled_at is None:
        assert not isinstance(outcome, BaseException) or tool == "browser_wait_for", (
            tool,
            outcome,
        )
        return True
    return False


async def _held(page: Page) -> object:
    """What the page holds down, once it has loaded (a cancelled navigation goes on, and its
    document may be replaced while it is asked)."""
    ask = "document.readyState === 'complete' && typeof heldNow === 'function' && heldNow()"

    async def held() -> object:
        with contextlib.suppress(CdpError):
            return await page.evaluate(ask)
        return None

    return await wait_until(held, timeout=SETTLE_TIMEOUT, message="the page answers")


async def _tasks_left(baseline: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """Tasks begun since ``baseline`` still running after SETTLE_TIMEOUT. The app's own short
    work (telling clients the tab list changed after a click opened or closed something) ends by
    itself within it; a task the cancelled call leaked does not."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        left = [t for t in asyncio.all_tasks() if t not in baseline and not t.done()]
        if not left or time.monotonic() >= deadline:
            return left
        await asyncio.sleep(0.01)


async def _settled(runner: ToolRunner, browser: Browser, hook: CancelAt, where: str) -> None:
    """Whatever the cancelled call started has ended: background input, pending commands."""
    try:
        await wait_until(
            lambda: not runner.background and browser.pending_count == 0,
            timeout=SETTLE_TIMEOUT,
            interval=0.01,
            message="the cancelled call's commands are gone",
        )
    except TimeoutError as error:
        left = f"background {runner.background!r}, waiting {list(hook.waiting.values())!r}"
        raise AssertionError(f"{where}: {error}; {left}") from error
