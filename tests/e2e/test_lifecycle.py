"""The extension's life in real Chromium: idle periods, app restarts, a service worker that is
stopped mid-command. MV3 suspends a worker after 30 s without extension activity; the
extension's own keepalive and its wake alarm are what keep Tabrelay connected."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from e2e.chromium import EXTENSION_ID
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from tabrelay.config.paths import Paths
from tabrelay.errors import BrowserDisconnected
from tabrelay.protocol.messages import Ping, parse_extension_message
from tabrelay.relay.browser import Browser

pytestmark = E2E

IDLE_SECONDS = 75


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(module_paths: Paths) -> AsyncIterator[AppUnderTest]:
    """The app, pinging too rarely to matter: only the extension's own traffic keeps it up."""
    async with AppUnderTest(
        module_paths, allowed=(EXTENSION_ID,), ping_interval=600.0, pong_timeout=600.0
    ) as app:
        yield app


async def attached_tab(relay: Browser, pages: PageServer) -> int:
    url = pages.url("index.html")
    tab = await relay.create_tab(url)
    await relay.attach(tab.id)
    await wait_until(lambda: tab.id in relay.attached_tabs, timeout=5, message="attached")

    async def loaded() -> bool:
        # Not the first about:blank: a document still to commit would end a pending evaluate.
        expression = "[location.href, document.readyState]"
        state = await relay.cdp(
            tab.id, "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        return bool(state["result"]["value"] == [url, "complete"])

    await wait_until(loaded, timeout=5, message="the page loaded")
    return tab.id


async def test_the_connection_survives_75_seconds_idle(
    app: AppUnderTest, browser: ExtensionBrowser, monkeypatch: pytest.MonkeyPatch
) -> None:
    relay = await app.browser()
    assert relay.attached_tabs == frozenset(), "an attached debugger would keep the worker up"
    pings: list[float] = []

    def counting_parse(frame: str) -> object:
        message = parse_extension_message(frame)
        if isinstance(message, Ping):
            pings.append(time.monotonic())
        return message

    monkeypatch.setattr("tabrelay.relay.session.parse_extension_message", counting_parse)
    changes: list[str] = []
    unsubscribe = app.harness.core.registry.add_listener(
        lambda change, _browser: changes.append(change) if change != "updated" else None
    )
    try:
        # Really idle: no command, no page, no DevTools session on the worker.
        await asyncio.sleep(IDLE_SECONDS)
    finally:
        unsubscribe()

    assert changes == [], "the connection dropped while idle"
    assert app.browsers() == [relay]
    assert len(pings) >= IDLE_SECONDS // 20 - 1, f"only {len(pings)} keepalive pings"
    assert await relay.list_tabs(), "and it still obeys"


async def test_after_the_app_restarts_the_extension_is_back_within_3_s_and_its_tabs_usable(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab = await attached_tab(await app.browser(), pages)
    # Chrome keeps sockets it opened in advance; quitting must not wait for them.
    _reader, idle_socket = await asyncio.open_connection("127.0.0.1", app.port)
    stopping = time.monotonic()
    await app.stop()
    assert time.monotonic() - stopping < 2, "the app took long to quit"
    idle_socket.close()
    await asyncio.sleep(1.0)  # the app is down for a moment, as in a real restart
    assert (await browser.relay_state() or {}).get("state") != "connected"

    await app.start()
    started = time.monotonic()
    relay = await app.browser(timeout=3)
    assert time.monotonic() - started < 3
    # The app's quit let the tab go (test_letting_go.py); it attaches again when used.
    assert relay.attached_tabs == frozenset()
    result = await relay.cdp(tab, "Runtime.evaluate", {"expression": "1 + 1"})
    assert result["result"]["value"] == 2
    await relay.close_tab(tab)


async def test_a_stopped_worker_fails_commands_at_once_and_its_alarm_brings_it_back(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    relay = await app.browser()
    tab = await attached_tab(relay, pages)
    command = asyncio.create_task(
        relay.cdp(
            tab, "Runtime.evaluate", {"expression": "new Promise(() => {})", "awaitPromise": True}
        )
    )
    await wait_until(
        lambda: relay.pending_count == 1 or command.done(), timeout=5, message="the command is sent"
    )
    assert not command.done(), f"the command ended early: {command.exception()!r}"

    # Chrome stops the worker (as after a crash, or serviceworker-internals' Stop).
    await browser.cdp.send("Target.closeTarget", {"targetId": await browser.worker_target_id()})
    with pytest.raises(BrowserDisconnected):
        await asyncio.wait_for(command, 1.0)

    # Nothing happens in the browser; the wake alarm (every 30 s) restarts the worker, which
    # reconnects and reports the tab its predecessor attached (the debugger stayed attached).
    stopped = time.monotonic()
    back = await wait_until(
        lambda: [b for b in app.browsers() if b is not relay],
        timeout=40,
        interval=0.2,
        message="the extension reconnects after its worker was stopped",
    )
    assert time.monotonic() - stopped < 35
    await wait_until(lambda: back[0].attached_tabs == {tab}, timeout=5, message="tabs reported")
    result = await back[0].cdp(tab, "Runtime.evaluate", {"expression": "'still here'"})
    assert result["result"]["value"] == "still here"
    await back[0].close_tab(tab)
