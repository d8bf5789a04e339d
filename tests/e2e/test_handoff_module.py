"""browser_handoff's run (tools/groups/handoff.py) in real Chromium with the real extension, called
with a ToolContext as the endpoint makes one: the banner's Done pressed by a real (trusted) click,
ended from the tray, by the timeout, by closing the tab, by cancelling the call at each await; a
page script cannot end, read or hide the banner; nothing the person types reaches the tab's observer
log or the dashboard's events; the tab is held against the idle detach while it is handed over.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.errors import ToolError
from tabrelay.relay.browser import Browser
from tabrelay.relay.events import HubEvent
from tabrelay.tools.context import ToolContext, ToolResult
from tabrelay.tools.groups.handoff import BANNER_ATTRIBUTE, HandoffParams, handoff
from tabrelay.tools.page.page_world import PageWorld
from tabrelay.tools.state.handoffs import REFUSAL, Handoffs

pytestmark = E2E

HOST = f"document.querySelector('[{BANNER_ATTRIBUTE}]')"


@dataclass
class Progress:
    """What the call told its client while it waited."""

    told: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.told.append((done, total, message))


@dataclass
class Handoff:
    page: Page
    tab_id: int
    relay: Browser
    ctx: ToolContext
    handoffs: Handoffs
    progress: Progress
    call: asyncio.Task[ToolResult]

    async def result(self, timeout: float = 20) -> ToolResult:
        return await asyncio.wait_for(asyncio.shield(self.call), timeout)


async def open_tab(browser: ExtensionBrowser, pages: PageServer) -> tuple[Page, int, str]:
    url = pages.url(f"handoff/login.html?run={uuid.uuid4().hex[:8]}")
    page = await browser.open_page(url)
    return page, await browser.tab_id_of(url), url


async def hand_over(
    app: AppUnderTest,
    browser: ExtensionBrowser,
    pages: PageServer,
    *,
    reason: str = "sign in with your password",
    timeout: int = 120,
    handoffs: Handoffs | None = None,
    wait_for_banner: bool = True,
) -> Handoff:
    page, tab_id, _url = await open_tab(browser, pages)
    progress = Progress()
    ctx = await app.tool_context(tab_id, progress=progress, guard=True)
    handoffs = handoffs or Handoffs()
    params = HandoffParams(reason=reason, timeout=timeout, tab_id=tab_id)
    call = asyncio.ensure_future(handoff(ctx, params, handoffs))
    handed = Handoff(page, tab_id, ctx.need_browser(), ctx, handoffs, progress, call)
    if wait_for_banner:
        await banner_shown(handed)
    return handed


async def banner_shown(handed: Handoff) -> None:
    await wait_until(
        lambda: handed.page.evaluate(f"!!{HOST} && {HOST}.matches(':popover-open')"),
        timeout=10,
        message="the banner shows",
    )


async def banner_gone(page: Page) -> None:
    await wait_until(
        lambda: page.evaluate(f"{HOST} === null"), timeout=10, message="the banner is gone"
    )


async def button_center(page: Page, action: str) -> tuple[float, float]:
    """Where the banner's button is, found as DevTools finds it (it pierces closed roots)."""
    document = await page.session.send("DOM.getDocument", {"depth": -1, "pierce": True})

    def find(node: dict[str, Any]) -> int | None:
        attributes = node.get("attributes", [])
        pairs = dict(zip(attributes[::2], attributes[1::2], strict=True))
        if node.get("nodeName") == "BUTTON" and pairs.get("data-action") == action:
            return int(node["nodeId"])
        for child in [*node.get("children", []), *node.get("shadowRoots", [])]:
            found = find(child)
            if found is not None:
                return found
        return None

    node_id = find(document["root"])
    assert node_id is not None, f"no {action} button in the page"
    quad = (await page.session.send("DOM.getBoxModel", {"nodeId": node_id}))["model"]["content"]
    return (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2


async def trusted_click(page: Page, action: str) -> None:
    x, y = await button_center(page, action)
    for kind in ("mousePressed", "mouseReleased"):
        await page.session.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
        )


def cleaned_up(app: AppUnderTest, handed: Handoff) -> None:
    core, relay = app.harness.core, handed.relay
    assert handed.handoffs.open() == []
    assert not core.hub.muted(relay.id, handed.tab_id)
    assert not core.sessions.held(relay.id, handed.tab_id)


async def test_the_person_presses_done_on_the_banner(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handed = await hand_over(app, browser, pages, reason="sign in <b>now</b> & then 'go'")
    relay = handed.relay
    (opened,) = handed.handoffs.open()
    assert (opened.tab_id, opened.reason) == (handed.tab_id, "sign in <b>now</b> & then 'go'")
    assert app.harness.core.hub.muted(relay.id, handed.tab_id)
    assert app.harness.core.sessions.held(relay.id, handed.tab_id)
    # The agent's text is shown as text: no markup made from it.
    shown = await handed.page.session.send("DOM.getDocument", {"depth": -1, "pierce": True})
    assert "The agent asks you to: sign in <b>now</b> & then 'go'" in json.dumps(shown)
    assert '"B"' not in json.dumps(shown)  # no <b> element anywhere
    # The person moves on in the tab (guarded: the guard must still answer its held loads while
    # the tab is muted), then presses Done.
    interceptor = app.harness.core.interceptor._subscription
    assert interceptor.hears_muted, (
        "tools/state/interception.py must subscribe with hears_muted=True, else a handed-over "
        "tab's loads wait for the guard forever"
    )
    second = pages.url("second.html")
    await handed.page.click("#next")
    await handed.page.wait_for_load(second)
    await banner_shown(handed)  # back on the new page
    await trusted_click(handed.page, "done")
    result = await handed.result()
    assert result.data is not None
    assert {k: v for k, v in result.data.items() if k != "waited_s"} == {
        "outcome": "done",
        "ended_by": "banner",
        "url": second,
        "title": "Second test page",
    }
    assert result.data["waited_s"] > 0
    assert "pressed Done" in result.text and "Second test page" in result.text
    await banner_gone(handed.page)
    cleaned_up(app, handed)
    done, total, message = handed.progress.told[0]
    assert (done, total, message) == (0, 120.0, "waiting for the person: " + opened.reason)
    await handed.page.close()


async def test_cancel_on_the_banner_and_end_from_the_tray_or_the_dashboard(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handed = await hand_over(app, browser, pages)
    await trusted_click(handed.page, "cancelled")
    result = await handed.result()
    assert result.data is not None
    assert (result.data["outcome"], result.data["ended_by"]) == ("cancelled", "banner")
    await handed.page.close()

    for outcome, by in (("done", "tray"), ("cancelled", "dashboard"), ("done", "cli")):
        handed = await hand_over(app, browser, pages)
        (opened,) = handed.handoffs.open()
        assert handed.handoffs.end(opened.id, outcome, by)  # type: ignore[arg-type]
        result = await handed.result()
        assert result.data is not None
        assert (result.data["outcome"], result.data["ended_by"]) == (outcome, by)
        assert result.data["title"] == "Sign in to the test shop"
        await banner_gone(handed.page)
        cleaned_up(app, handed)
        await handed.page.close()


async def test_a_page_script_cannot_end_read_or_hide_the_banner(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handed = await hand_over(app, browser, pages)
    page = handed.page
    attempts = await page.evaluate(
        f"""(async () => {{
          const host = {HOST};
          const seen = {{ shadowRoot: host.shadowRoot, children: host.children.length }};
          // Clicks the page can make are untrusted, wherever it aims them.
          const rect = host.getBoundingClientRect();
          const at = document.elementFromPoint(rect.right - 40, rect.top + rect.height / 2);
          seen.at = at === host;
          for (const target of [host, at]) {{
            target.click();
            target.dispatchEvent(new MouseEvent('click', {{ bubbles: true, composed: true }}));
            target.dispatchEvent(new PointerEvent('pointerup', {{ bubbles: true }}));
          }}
          try {{ host.attachShadow({{ mode: 'open' }}); seen.attached = true; }}
          catch (e) {{ seen.attached = false; }}
          // Take it away, hide it, restyle it, close its popover.
          host.remove();
          await new Promise((r) => setTimeout(r, 50));
          seen.back = !!{HOST};
          {HOST}.style.setProperty('display', 'none', 'important');
          {HOST}.hidePopover();
          await new Promise((r) => setTimeout(r, 50));
          seen.shown = getComputedStyle({HOST}).display !== 'none'
            && {HOST}.matches(':popover-open');
          {HOST}.removeAttribute('{BANNER_ATTRIBUTE}');
          await new Promise((r) => setTimeout(r, 50));
          seen.marked = !!{HOST};
          return seen;
        }})()""",
    )
    assert attempts == {
        "shadowRoot": None,
        "children": 0,
        "at": True,
        "attached": False,
        "back": True,
        "shown": True,
        "marked": True,
    }
    assert not handed.call.done()
    assert len(handed.handoffs.open()) == 1
    await banner_shown(handed)
    await trusted_click(page, "done")  # the person can still press it
    result = await handed.result()
    assert result.data is not None and result.data["ended_by"] == "banner"
    await banner_gone(page)
    await page.close()


async def test_what_the_person_types_reaches_neither_the_observer_log_nor_the_dashboard(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    core = app.harness.core
    dashboard = core.hub.subscribe()  # as the dashboard's live events subscribe
    try:
        handed = await hand_over(app, browser, pages)
        relay, tab_id = handed.relay, handed.tab_id
        dashboard.drain()
        await handed.page.type_into("#password", "hunter2-secret")
        assert await handed.page.evaluate("document.getElementById('password').value") == (
            "hunter2-secret"
        )
        # The page logged it (its own business); a console message after the handoff proves
        # the log would have shown it had it not been muted.
        (opened,) = handed.handoffs.open()
        handed.handoffs.end(opened.id, "done", "tray")
        await handed.result()
        await handed.page.evaluate("console.log('after the handoff'); 1")
        log = core.tabs.tab(relay.id, tab_id).log
        await wait_until(
            lambda: any(m.text == "after the handoff" for m in log.console),
            timeout=10,
            message="the console message after the handoff is logged",
        )
        assert not any("hunter2" in m.text for m in log.console)
        seen: list[HubEvent] = dashboard.drain()
        assert seen, "the dashboard hears the tab again after the handoff"
        assert not any("hunter2" in json.dumps(e.params) for e in seen)
        assert not any(e.method == "Runtime.bindingCalled" for e in seen)
        cleaned_up(app, handed)
        await handed.page.close()
    finally:
        dashboard.close()


async def test_it_times_out_and_tells_the_client_it_is_still_waiting(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    started = time.monotonic()
    handed = await hand_over(app, browser, pages, timeout=10)
    result = await handed.result(timeout=30)
    took = time.monotonic() - started
    assert result.data is not None
    assert (result.data["outcome"], result.data["ended_by"]) == ("timeout", "timeout")
    assert 10 <= took < 20 and result.data["waited_s"] >= 10
    told = handed.progress.told
    assert len(told) >= 2, told  # at once and every 5 s
    assert [t[0] for t in told] == sorted(t[0] for t in told)
    assert all(total == 10.0 for _, total, _ in told)
    assert told[1][0] >= 5
    await banner_gone(handed.page)
    cleaned_up(app, handed)
    await handed.page.close()


async def test_closing_the_tab_ends_it(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    handed = await hand_over(app, browser, pages)
    await handed.page.close()
    result = await handed.result()
    assert result.data is not None
    assert {k: v for k, v in result.data.items() if k != "waited_s"} == {
        "outcome": "tab closed",
        "ended_by": "browser",
        "url": "",
        "title": "",
    }
    cleaned_up(app, handed)


async def test_a_second_handoff_of_the_tab_fails_and_agent_calls_are_refused(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    from tabrelay.tools.state.handoffs import refusal

    handed = await hand_over(app, browser, pages)
    params = HandoffParams(reason="again", tab_id=handed.tab_id)
    with pytest.raises(ToolError, match="already handed to the person"):
        await handoff(handed.ctx, params, handed.handoffs)
    message = refusal(handed.handoffs, handed.relay.id, handed.tab_id)
    assert message is not None and REFUSAL in message
    assert len(handed.handoffs.open()) == 1 and not handed.call.done()
    (opened,) = handed.handoffs.open()
    handed.handoffs.end(opened.id, "done", "cli")
    await handed.result()
    await banner_gone(handed.page)
    await handed.page.close()


async def test_the_handed_over_tab_is_not_detached_for_idleness(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    core = app.harness.core
    store = core.settings_store
    before = store.current.idle_detach_minutes
    handed = await hand_over(app, browser, pages)
    await asyncio.to_thread(store.update, lambda s: setattr(s, "idle_detach_minutes", 0.0001))
    try:
        await asyncio.sleep(0.05)  # longer than the idle time
        await core.sessions.detach_idle()
        assert handed.tab_id in handed.relay.attached_tabs
        await banner_shown(handed)
        (opened,) = handed.handoffs.open()
        handed.handoffs.end(opened.id, "done", "tray")
        await handed.result()

        async def detached() -> bool:
            await core.sessions.detach_idle()
            return handed.tab_id not in handed.relay.attached_tabs

        await wait_until(detached, timeout=10, message="the tab, let go, is detached when idle")
    finally:
        await asyncio.to_thread(store.update, lambda s: setattr(s, "idle_detach_minutes", before))
    await handed.page.close()


class CancelAt:
    """Cancel the handoff call at its n-th browser command (while it waits for the answer, or
    right after), over and over as the MCP SDK's cancel scope does."""

    def __init__(self, relay: Browser, n: int, after_answer: bool) -> None:
        self.relay = relay
        self.send = relay.send_command
        self.n, self.after_answer, self.count = n, after_answer, 0
        self.call: asyncio.Task[Any] | None = None

    async def send_command(self, method: str, params: Any = None, *, timeout: Any = None) -> Any:
        mine = self._in_call()
        if mine:
            self.count += 1
        hit = mine and self.count == self.n
        if hit and not self.after_answer:
            self.cancel()
        result = await self.send(method, params, timeout=timeout)
        if hit and self.after_answer:
            self.cancel()
        return result

    def _in_call(self) -> bool:
        task = asyncio.current_task()
        # PageWorld's own steps run as a task of their own, started by the call.
        return task is self.call or getattr(task, "handoff_call", False)

    def cancel(self) -> None:
        call, loop = self.call, asyncio.get_running_loop()
        assert call is not None

        def again() -> None:
            if not call.done():
                call.cancel()
                loop.call_soon(again)

        loop.call_soon(again)


def tag_tasks(call: Callable[[], asyncio.Task[Any] | None]) -> Callable[[], None]:
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        current = asyncio.current_task(loop)
        if current is not None and (current is call() or getattr(current, "handoff_call", False)):
            task.handoff_call = True  # type: ignore[attr-defined]
        return task

    loop.set_task_factory(factory)
    return lambda: loop.set_task_factory(previous)


async def test_cancelling_the_call_at_each_await_ends_the_handoff_and_leaves_nothing(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    core = app.harness.core
    page, tab_id, _url = await open_tab(browser, pages)
    relay = await app.browser()
    send = relay.send_command
    subscribers = core.hub.subscriber_count
    handoffs = Handoffs()
    ended: list[int] = []
    handoffs.add_listener(lambda: ended.append(len(handoffs.open())))
    cancels = [(n, after) for n in range(1, 7) for after in (False, True)] + [(7, False)]
    cancelled = 0
    try:
        # Commands: bring to front (1), the page world (2-5); the 6th is the banner's removal
        # after the person pressed Done; n = 7: cancelled while it waits for the person.
        for n, after_answer in cancels:
            progress = Progress()
            ctx = await app.tool_context(tab_id, progress=progress, guard=True)
            hook = CancelAt(relay, n, after_answer)
            relay.send_command = hook.send_command  # type: ignore[method-assign]
            untag = tag_tasks(lambda: hook.call)  # noqa: B023 - used within the iteration
            params = HandoffParams(reason="sign in", timeout=60, tab_id=tab_id)
            hook.call = asyncio.ensure_future(handoff(ctx, params, handoffs))
            if n >= 6:
                await wait_until(lambda: progress.told, timeout=10, message="it waits")  # noqa: B023
                if n == 6:
                    (opened,) = handoffs.open()
                    handoffs.end(opened.id, "done", "tray")
                else:
                    hook.cancel()
            outcome = (await asyncio.gather(hook.call, return_exceptions=True))[0]
            untag()
            relay.send_command = send  # type: ignore[method-assign]
            assert isinstance(outcome, asyncio.CancelledError), (n, after_answer, outcome)
            cancelled += 1
            assert handoffs.open() == [] and ended[-1] == 0
            assert not core.hub.muted(relay.id, tab_id)
            assert not core.sessions.held(relay.id, tab_id)
            await wait_until(
                lambda: not PageWorld._settling and relay.pending_count == 0,
                timeout=10,
                message="the banner's removal ends",
            )
            assert core.hub.subscriber_count == subscribers
            await banner_gone(page)
            # No banner comes back on the next document either.
            await page.session.send("Page.reload")
            await wait_until(
                lambda: page.evaluate("document.readyState === 'complete'"),
                timeout=10,
                message="the page reloads",
            )
            assert await page.evaluate(f"{HOST} === null")
    finally:
        relay.send_command = send  # type: ignore[method-assign]
        await page.close()
    assert cancelled == len(cancels)
