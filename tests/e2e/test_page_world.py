"""Tabrelay's own code in a tab (tools/page/page_world.py), in real Chromium with the real
extension: it runs in an isolated world the page's scripts cannot reach, its messages come back
through a binding only that world can call, it survives navigations, and removing it (or cancelling
its install at any await) leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.errors import ToolError
from tabrelay.relay.browser import Browser
from tabrelay.tools.page.page_world import MESSAGE_BURST, PageWorld

pytestmark = E2E

# Marks each document it runs in (the DOM is shared, so the page can see the mark) and says hello.
SOURCE = """
  globalThis.worldSecret = "only the world knows";
  const mark = () => document.documentElement.setAttribute("data-world", location.pathname);
  if (document.documentElement) mark();
  else document.addEventListener("readystatechange", mark, { once: true });
  TABRELAY_ON_REMOVE(() => document.documentElement.removeAttribute("data-world"));
  TABRELAY_SEND({ hello: location.pathname });
"""


class Inbox:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    async def until(self, message: dict[str, Any], *, timeout: float = 10.0) -> None:
        await wait_until(
            lambda: message in self.messages,
            timeout=timeout,
            message=f"{message} arrives (got {self.messages[-5:]})",
        )


async def open_tab(browser: ExtensionBrowser, pages: PageServer) -> tuple[Page, int, str]:
    url = pages.url(f"index.html?world={uuid.uuid4().hex[:8]}")
    page = await browser.open_page(url)
    return page, await browser.tab_id_of(url), url


async def reload(page: Page, url: str) -> None:
    await page.session.send("Page.navigate", {"url": url})
    await page.wait_for_load(url)


async def install(app: AppUnderTest, tab_id: int, inbox: Inbox) -> PageWorld:
    return await PageWorld.install(
        await app.browser(),
        tab_id,
        hub=app.harness.core.hub,
        name="test",
        source=SOURCE,
        on_message=inbox,
    )


async def test_messages_arrive_from_the_world_now_and_after_a_navigation(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    page, tab_id, _url = await open_tab(browser, pages)
    inbox = Inbox()
    world = await install(app, tab_id, inbox)
    try:
        await inbox.until({"hello": "/index.html"})  # the current document, at once
        second = pages.url("second.html")
        await reload(page, second)
        await inbox.until({"hello": "/second.html"})
        assert await page.evaluate("document.documentElement.dataset.world") == "/second.html"
        assert await world.evaluate("worldSecret") == "only the world knows"
        assert await world.evaluate("Promise.resolve(location.pathname)") == "/second.html"
        with pytest.raises(ToolError, match="boom"):
            await world.evaluate("(() => { throw new Error('boom'); })()")
    finally:
        await world.remove()
        await page.close()


async def test_the_pages_scripts_cannot_reach_the_world_or_forge_its_messages(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    page, tab_id, _url = await open_tab(browser, pages)
    # The page defines its own TABRELAY_SEND before Tabrelay arrives.
    await page.evaluate("window.TABRELAY_SEND = (m) => 'the page\\'s own'; 1")
    inbox = Inbox()
    world = await install(app, tab_id, inbox)
    try:
        await inbox.until({"hello": "/index.html"})
        binding = json.dumps(world.binding)
        assert await page.evaluate("typeof worldSecret") == "undefined"
        assert await page.evaluate(f"typeof window[{binding}]") == "undefined"
        assert await page.evaluate(f"Object.keys(window).includes({binding})") is False
        assert await page.evaluate("window.TABRELAY_SEND({forged: true})") == "the page's own"
        # Every other way a page script might send: a postMessage, a binding by its name on a
        # frame, an event.
        await page.evaluate(
            f"""(() => {{
              window.postMessage({{forged: true}}, '*');
              const frame = document.createElement('iframe');
              document.body.append(frame);
              try {{ frame.contentWindow[{binding}]('{{"forged": true}}'); }} catch (e) {{}}
              document.dispatchEvent(new CustomEvent('tabrelay', {{detail: {{forged: true}}}}));
              return 1;
            }})()"""
        )
        # The world's own TABRELAY_SEND is the world's, not the page's.
        assert await world.evaluate("TABRELAY_SEND({ from: 'world' })") is True
        await inbox.until({"from": "world"})
        assert not any(m.get("forged") for m in inbox.messages)
        # The iframe the page added got no world of Tabrelay's: top frame only.
        assert (
            await page.evaluate(
                "document.querySelector('iframe').contentDocument"
                ".documentElement.dataset.world ?? null"
            )
            is None
        )
    finally:
        await world.remove()
        await page.close()


async def test_bad_and_flooding_messages_are_dropped_and_the_world_goes_on(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    page, tab_id, _url = await open_tab(browser, pages)
    inbox = Inbox()
    world = await install(app, tab_id, inbox)
    binding = json.dumps(world.binding)
    try:
        await inbox.until({"hello": "/index.html"})
        # What TABRELAY_SEND refuses in the world, and what the app refuses from the binding.
        refused = await world.evaluate(
            """(() => {
              const out = [];
              for (const bad of [[1], null, 'text', 5]) {
                try { TABRELAY_SEND(bad); out.push('sent'); } catch (e) { out.push(e.name); }
              }
              out.push(TABRELAY_SEND({ big: 'x'.repeat(70000) }));
              return out;
            })()"""
        )
        assert refused == ["TypeError", "TypeError", "TypeError", "TypeError", False]
        dropped = world.dropped
        await world.evaluate(
            f"[globalThis[{binding}]('not json'), globalThis[{binding}]('[1, 2]'),"
            f" globalThis[{binding}]('\"a string\"'),"
            f" globalThis[{binding}](JSON.stringify({{big: 'x'.repeat(70000)}}))]"
        )
        await world.evaluate("TABRELAY_SEND({ after: 'bad ones' })")
        await inbox.until({"after": "bad ones"})
        assert world.dropped == dropped + 4
        # A flood: far more than the burst at once; the rest is dropped, nothing breaks.
        before = len(inbox.messages)
        await world.evaluate("for (let i = 0; i < 5000; i++) TABRELAY_SEND({ flood: i }); 1")
        await world.evaluate("TABRELAY_SEND({ flood: 'end' })")
        await wait_until(
            lambda: world.received + world.dropped >= before + 5001 - 1,
            timeout=20,
            message="the flood is read",
        )
        flooded = len(inbox.messages) - before
        assert flooded <= MESSAGE_BURST + 200, flooded  # refilled at most while it was read
        assert world.dropped > 4000

        # Once it slows down, messages come through again.
        async def calm_arrives() -> bool:
            await world.evaluate("TABRELAY_SEND({ calm: true })")
            await asyncio.sleep(0.1)
            return {"calm": True} in inbox.messages

        await wait_until(calm_arrives, timeout=10, interval=0.2, message="a calm message")
    finally:
        await world.remove()
        await page.close()


async def test_remove_runs_the_cleanup_and_leaves_no_script_or_binding(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    page, tab_id, url = await open_tab(browser, pages)
    hub = app.harness.core.hub
    subscribers = hub.subscriber_count
    inbox = Inbox()
    world = await install(app, tab_id, inbox)
    await inbox.until({"hello": "/index.html"})
    await world.remove("document.documentElement.setAttribute('data-cleaned', 'yes')")
    await world.remove()  # again: nothing happens
    assert await page.evaluate("document.documentElement.dataset.cleaned") == "yes"
    assert await page.evaluate("document.documentElement.dataset.world ?? null") is None
    assert hub.subscriber_count == subscribers
    inbox.messages.clear()
    await reload(page, url)
    await reload(page, pages.url("second.html"))
    assert await page.evaluate("document.documentElement.dataset.world ?? null") is None
    assert inbox.messages == []
    with pytest.raises(ToolError, match="removed"):
        await world.evaluate("1")
    await page.close()


async def test_install_on_a_tab_that_closes_meanwhile_fails_clearly_and_remove_never_raises(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    relay = await app.browser()
    hub = app.harness.core.hub
    subscribers = hub.subscriber_count
    page, tab_id, _url = await open_tab(browser, pages)
    send = relay.send_command

    async def closing(method: str, params: Any = None, *, timeout: Any = None) -> Any:
        if params and params.get("method") == "Page.addScriptToEvaluateOnNewDocument":
            await page.close()
            await wait_until(lambda: tab_id not in relay.tabs, timeout=10, message="tab closed")
        return await send(method, params, timeout=timeout)

    relay.send_command = closing  # type: ignore[method-assign]
    try:
        with pytest.raises(ToolError, match=f"tab {tab_id}.*closed"):
            await install(app, tab_id, Inbox())
    finally:
        relay.send_command = send  # type: ignore[method-assign]
    assert hub.subscriber_count == subscribers

    page, tab_id, _url = await open_tab(browser, pages)
    inbox = Inbox()
    world = await install(app, tab_id, inbox)
    await inbox.until({"hello": "/index.html"})
    await page.close()
    await wait_until(lambda: tab_id not in relay.tabs, timeout=10, message="tab closed")
    await world.remove("1")  # the tab is gone: no error
    assert hub.subscriber_count == subscribers


class CancelAt:
    """A browser's command channel that cancels ``call`` at its ``n``-th command, while that
    command waits for its answer or right after it."""

    def __init__(self, send: Any, n: int, after_answer: bool) -> None:
        self._send = send
        self.n = n
        self.after_answer = after_answer
        self.count = 0
        self.call: asyncio.Future[Any] | None = None

    async def send_command(self, method: str, params: Any = None, *, timeout: Any = None) -> Any:
        self.count += 1
        hit = self.count == self.n
        assert self.call is not None
        if hit and not self.after_answer:
            self.call.cancel()
        result = await self._send(method, params, timeout=timeout)
        if hit and self.after_answer:
            self.call.cancel()
        return result


async def test_install_cancelled_at_each_await_leaves_no_script_behind(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    relay: Browser = await app.browser()
    hub = app.harness.core.hub
    subscribers = hub.subscriber_count
    send = relay.send_command
    page, tab_id, url = await open_tab(browser, pages)
    cancelled = finished = 0
    try:
        for n in range(1, 7):  # each of install's commands (four), and past the last
            for after_answer in (False, True):
                hook = CancelAt(send, n, after_answer)
                relay.send_command = hook.send_command  # type: ignore[method-assign]
                inbox = Inbox()
                hook.call = asyncio.ensure_future(install(app, tab_id, inbox))
                outcome = (await asyncio.gather(hook.call, return_exceptions=True))[0]
                relay.send_command = send  # type: ignore[method-assign]
                if isinstance(outcome, PageWorld):  # finished before its n-th command
                    finished += 1
                    await outcome.remove()
                    continue
                assert isinstance(outcome, asyncio.CancelledError), outcome
                cancelled += 1
                await wait_until(
                    lambda: not PageWorld._settling and relay.pending_count == 0,
                    timeout=10,
                    message="the cancelled install is taken away",
                )
                assert hub.subscriber_count == subscribers
                # What it showed in the current document went too (TABRELAY_ON_REMOVE).
                assert await page.evaluate("document.documentElement.dataset.world ?? null") is None
                inbox.messages.clear()
                await reload(page, url)
                assert await page.evaluate("document.documentElement.dataset.world ?? null") is None
                assert inbox.messages == []
    finally:
        relay.send_command = send  # type: ignore[method-assign]
        await page.close()
    assert cancelled == 8 and finished == 4, (cancelled, finished)
