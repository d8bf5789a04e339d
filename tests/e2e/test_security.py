"""What web pages and impostors can do to Tabrelay in real Chromium: nothing.

A page cannot open the relay or read the pairing config; a program squatting the relay port
never gets the token and is never obeyed, and Chrome sends the pinned extension Origin the app
relies on (a contract test: it fails if Chrome changes what it sends, THREATS X1).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest_asyncio
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from e2e.chromium import EXTENSION_ORIGIN
from e2e.conftest import E2E
from e2e.harness import (
    AppUnderTest,
    ExtensionBrowser,
    ImpostorServer,
    PageServer,
    digest,
    wait_until,
)
from tabrelay.protocol.constants import CONFIG_PATH, HEALTH_PATH
from tabrelay.protocol.handshake import new_nonce
from tabrelay.relay.browser import Browser

pytestmark = E2E


@pytest_asyncio.fixture(loop_scope="module")
async def relay(app: AppUnderTest, browser: ExtensionBrowser) -> Browser:
    return await app.browser()


async def run_attack_page(browser: ExtensionBrowser, url: str) -> dict[str, Any]:
    page = await browser.open_page(url)
    try:
        return await page.evaluate("window.attackResult", timeout=15)  # type: ignore[no-any-return]
    finally:
        await page.close()


async def test_a_web_page_can_neither_open_the_relay_nor_read_the_pairing_config(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, relay: Browser
) -> None:
    for host in ("127.0.0.1", "localhost"):
        result = await run_attack_page(
            browser, pages.url(f"attack.html#port={app.port}", host=host)
        )
        socket = result["webSocket"]
        assert socket["opened"] is False and socket["messages"] == [], host
        assert "failed" in result["corsFetch"], f"{host}: a CORS read succeeded: {result}"
        assert result["noCorsFetch"].get("type") == "opaque"
        assert result["noCorsFetch"].get("body") == ""
        assert app.harness.token not in json.dumps(result)
    assert app.browsers() == [relay], "the real extension stayed the only browser"
    assert app.approver.requests == [], "no page can raise a pairing request"


async def test_a_tab_pointed_at_the_config_endpoint_shows_no_token(
    app: AppUnderTest, browser: ExtensionBrowser
) -> None:
    page = await browser.open_page(f"http://127.0.0.1:{app.port}{CONFIG_PATH}")
    try:
        text = await page.text()
    finally:
        await page.close()
    assert "forbidden" in text
    assert app.harness.token not in text


async def test_web_pages_cannot_message_the_extension(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, relay: Browser
) -> None:
    page = await browser.open_page(pages.url("index.html"))
    try:
        outcome = await page.evaluate(
            f"""(async () => {{
                if (typeof chrome === 'undefined' || !chrome.runtime?.sendMessage) return 'no API';
                try {{
                  await chrome.runtime.sendMessage('{EXTENSION_ORIGIN[19:]}', {{ type: 'pair' }});
                  return 'delivered';
                }} catch (error) {{ return 'refused: ' + error.message; }}
            }})()"""
        )
    finally:
        await page.close()
    assert outcome == "no API" or outcome.startswith("refused"), outcome
    assert (await browser.relay_state() or {}).get("state") == "connected"
    assert app.browsers() == [relay]


class Squatter(ImpostorServer):
    """A program on the relay port that is not Tabrelay. It accepts every connection, records
    every frame, tries a different trick on each connection, and serves a token of its own."""

    TRICKS = ("command_first", "forged_auth_ok", "rotation_before_auth", "rejection")

    def __init__(self, port: int, marker_url: str, tab_id: int) -> None:
        super().__init__(port)
        self.marker_url = marker_url
        self.tab_id = tab_id
        self.token = secrets.token_urlsafe(32)
        self.frames: list[str] = []
        self.requests: list[tuple[str, Headers]] = []
        self.tricks_played: list[str] = []

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?")[0]
        self.requests.append((path, request.headers))
        if path in (CONFIG_PATH, HEALTH_PATH):
            body = json.dumps({"port": self.port, "token": self.token, "protocol": 1})
            response = connection.respond(200, body)
            response.headers["Content-Type"] = "application/json"
            if origin := request.headers.get("Origin"):
                response.headers["Access-Control-Allow-Origin"] = origin
            return response
        return None

    def _commands(self) -> list[dict[str, Any]]:
        return [
            {"id": "1", "method": "tabs.create", "params": {"url": self.marker_url}},
            {"id": "2", "method": "debugger.attach", "params": {"tabId": self.tab_id}},
            {"id": "3", "method": "tabs.list", "params": {}},
        ]

    async def _handle(self, connection: ServerConnection) -> None:
        trick = self.TRICKS[min(len(self.tricks_played), len(self.TRICKS) - 1)]
        self.tricks_played.append(trick)
        try:
            if trick == "command_first":
                for command in self._commands():
                    await connection.send(json.dumps(command))
            else:
                await connection.send(
                    json.dumps({"type": "auth.challenge", "protocol": 1, "nonce": new_nonce()})
                )
                self.frames.append(str(await connection.recv()))
                if trick == "forged_auth_ok":
                    await connection.send(json.dumps({"type": "auth.ok", "proof": new_nonce()}))
                    for command in self._commands():
                        await connection.send(json.dumps(command))
                elif trick == "rotation_before_auth":
                    await connection.close(4410, "token rotated")
                else:
                    await connection.close(4401, "authentication failed")
            async for frame in connection:
                self.frames.append(str(frame))
        except ConnectionClosed:
            pass


async def test_a_program_squatting_the_relay_port_gets_no_token_and_no_obedience(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, relay: Browser
) -> None:
    real_token = app.harness.token
    tab = (await relay.create_tab(pages.url("index.html"))).id
    await relay.detach(tab)
    await wait_until(lambda: tab not in relay.attached_tabs, timeout=5, message="detached")
    tabs_before = {t["targetId"] for t in await browser.page_targets()}
    marker = pages.url("second.html?squatter")

    await app.stop()  # the app quits (or crashed); something else takes its port
    async with Squatter(app.port, marker, tab) as squatter:
        state = await browser.wait_for_state("rejected", timeout=20)
        assert squatter.tricks_played == list(Squatter.TRICKS)
        assert not any(path == CONFIG_PATH for path, _ in squatter.requests), (
            "a rejection makes the extension ask nothing of whoever is on the port"
        )
        # The person presses Pair while the squatter is still there: only now is the config
        # asked for (and Chrome's headers on that request can be seen).
        popup = await browser.open_popup()
        try:
            await popup.click("#pair")
        finally:
            await popup.close()
        await wait_until(
            lambda: any(path == CONFIG_PATH for path, _ in squatter.requests),
            timeout=10,
            message="the config request",
        )
        await browser.wait_for_state("rejected", "unverified", timeout=20)

    everything = json.dumps(squatter.frames)
    assert real_token not in everything, "the token went on the wire"
    sent = [json.loads(frame) for frame in squatter.frames]
    assert {m.get("type") for m in sent} == {"auth.response"}, "it said hello or obeyed"
    assert not any("id" in m for m in sent)
    assert {t["targetId"] for t in await browser.page_targets()} == tabs_before, "a tab opened"
    attached = await browser.in_worker(
        f"chrome.debugger.getTargets().then(ts => ts.find(t => t.tabId === {tab}).attached)"
    )
    assert attached is False, "the debugger was attached"
    # It refused the squatter and says so: "!" until the person pairs again.
    assert "Click Pair" in state["detail"]
    assert await browser.badge() == "!"

    # Chrome sends the pinned extension Origin on the upgrade and on the config request: the
    # app's pairing and Origin checks rely on exactly this.
    upgrades = [h for path, h in squatter.requests if path.startswith("/ws/browser-relay")]
    configs = [h for path, h in squatter.requests if path == CONFIG_PATH]
    assert upgrades and all(h.get_all("Origin") == [EXTENSION_ORIGIN] for h in upgrades)
    assert configs and all(h.get_all("Origin") == [EXTENSION_ORIGIN] for h in configs)
    assert all(h.get("Sec-Fetch-Mode") == "cors" for h in configs)
    assert all(h.get("Sec-Fetch-Dest") == "empty" for h in configs)

    # The real app is back; the person presses "Pair again" in the popup and approves.
    await app.start()
    popup = await browser.open_popup()
    try:
        assert await popup.text_of("#headline") == "Rejected by the Tabrelay app"
        await popup.click("#pair")
        await app.browser(timeout=15)
    finally:
        await popup.close()
    assert await browser.stored_token_digest() == digest(app.harness.token)
