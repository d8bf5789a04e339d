"""The extension finds its way back by itself, in real Chromium, after the app's port or
credentials change — with no click from the person but the approval in the tray, and without
trusting anything on a port that has not proved it holds this browser's pairing.

Which ports it tries, in this order: the port set in its options page, the port the app said
it moves to (the app tells its connected browsers when it quits with another port in its
settings), the ports where the app proved itself before, and the app's default port 23001.
On each it runs the challenge–response only: the credential never goes on the wire, and
nothing else is sent (no hello, no status, no answer, no pairing request) to a program that
cannot prove it knows the credential.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import tabrelay.relay.pairing
from e2e.cdp import CdpError
from e2e.chromium import EXTENSION_ID
from e2e.conftest import E2E, launch_browser
from e2e.harness import (
    AppUnderTest,
    ExtensionBrowser,
    ImpostorServer,
    Page,
    digest,
    free_port,
    wait_until,
)
from support.cli import run_cli
from support.harness import ScriptedApprover
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.protocol.constants import CONFIG_PATH, DEFAULT_RELAY_PORT
from tabrelay.protocol.handshake import new_nonce
from tabrelay.relay.pairing import Pairing

pytestmark = E2E

CONNECTED = "Connected to the Tabrelay app"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(module_paths: Paths) -> AsyncIterator[AppUnderTest]:
    """The app with nothing paired and nothing allowed ahead: every pairing is the person's
    answer in the tray (the scripted approver waits for the test's decision)."""
    async with AppUnderTest(module_paths, approver=ScriptedApprover(answer=None), paired=()) as app:
        yield app


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(app: AppUnderTest) -> AsyncIterator[ExtensionBrowser]:
    """Chromium with the extension, paired once by the person's approval."""
    browser = await launch_browser(app.port)
    try:
        await wait_until(lambda: app.approver.requests, timeout=15, message="a pairing request")
        app.approver.decide(True)
        await app.browser(timeout=15)
        yield browser
    finally:
        await browser.close()


async def rotate(paths: Paths) -> None:
    """`tabrelay token rotate`, typed by the person while the app may be running."""
    await asyncio.to_thread(run_cli, paths, "token", "rotate")


async def open_popup(browser: ExtensionBrowser) -> Page:
    """The popup, once Chrome has an active window to show it over again (right after a popup
    or a tab closed, headless Chrome may have none for a moment)."""

    async def opened() -> Page | None:
        try:
            return await browser.open_popup()
        except CdpError as error:
            if "active browser window" not in str(error):
                raise
            return None

    return await wait_until(opened, timeout=10, interval=0.2, message="the popup opens")


async def popup_view(browser: ExtensionBrowser) -> dict[str, object]:
    popup = await open_popup(browser)
    try:
        return await popup_state(popup)
    finally:
        await popup.close()


async def popup_state(popup: Page) -> dict[str, object]:
    return {
        "headline": await popup.text_of("#headline"),
        "detail": await popup.text_of("#detail"),
        "pair_button": not await popup.evaluate("document.getElementById('pair').hidden"),
    }


async def dialogs_after(app: AppUnderTest, count: int, *, timeout: float = 20) -> None:
    await wait_until(
        lambda: len(app.approver.requests) > count,
        timeout=timeout,
        message="the app's pairing dialog",
    )


async def no_new_dialog(app: AppUnderTest, count: int, *, seconds: float) -> None:
    """A bounded look: no pairing dialog beyond ``count`` appears for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert len(app.approver.requests) == count, "the person was asked again"
        await asyncio.sleep(0.2)


async def assert_connected(app: AppUnderTest, browser: ExtensionBrowser) -> None:
    """The person's view: the popup says connected, offers no Pair, the badge says ON."""
    relay = await app.browser(timeout=15)
    state = await browser.wait_for_state("connected")
    assert state["port"] == app.port
    view = await popup_view(browser)
    assert view["headline"] == CONNECTED, view
    assert f"port {app.port}" in str(view["detail"]), view
    assert view["pair_button"] is False, "no 'Pair again' once a credential works"
    assert await browser.badge() == "ON"
    assert await browser.stored_token_digest() == digest(app.harness.credential(EXTENSION_ID))
    assert relay.extension_id == EXTENSION_ID


async def test_a_rotation_while_connected_needs_one_approval_and_ends_connected(
    app: AppUnderTest, browser: ExtensionBrowser, module_paths: Paths
) -> None:
    first = await app.browser()
    asked = len(app.approver.requests)
    await rotate(module_paths)
    await dialogs_after(app, asked)
    # The dialog and the popup show the same code, and the popup says where to look.
    code = app.approver.codes[-1]
    await browser.wait_for_state("awaiting_approval")
    view = await popup_view(browser)
    assert view["headline"] == "Approve this browser in the Tabrelay app", view
    assert f"code {code}" in str(view["detail"]), view
    assert view["pair_button"] is False, "nothing for the person to click in the browser"

    app.approver.decide(True)
    await wait_until(
        lambda: [b for b in app.browsers() if b is not first],
        timeout=15,
        message="the extension reconnects with its new credential",
    )
    await assert_connected(app, browser)
    await no_new_dialog(app, asked + 1, seconds=2)


async def test_a_rotation_while_the_browser_was_away_needs_only_the_approval_in_the_tray(
    app: AppUnderTest, browser: ExtensionBrowser, module_paths: Paths
) -> None:
    old_digest = await browser.stored_token_digest()
    asked = len(app.approver.requests)
    # The browser cannot hear of it: the app is not running while the person rotates.
    await app.stop()
    await rotate(module_paths)
    await app.start()
    # The app proves it knew the old credential and says it was replaced (4410): the
    # extension asks to pair again by itself; the person answers the dialog.
    await dialogs_after(app, asked, timeout=30)
    state = await browser.wait_for_state("awaiting_approval")
    assert f"code {app.approver.codes[-1]}" in state["detail"]
    assert await browser.stored_token_digest() is None, "the dead credential is forgotten"
    app.approver.decide(True)
    await assert_connected(app, browser)
    assert await browser.stored_token_digest() != old_digest
    await no_new_dialog(app, asked + 1, seconds=2)


class Stranger(ImpostorServer):
    """A program that took a port Tabrelay used: it starts the handshake but cannot prove it
    knows the credential; it records everything the extension sends it."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.frames: list[str] = []
        self.paths: list[str] = []

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self.paths.append(request.path.split("?")[0])
        return None

    async def _handle(self, connection: ServerConnection) -> None:
        try:
            await connection.send(
                json.dumps({"type": "auth.challenge", "protocol": 1, "nonce": new_nonce()})
            )
            self.frames.append(str(await connection.recv()))
            await connection.send(json.dumps({"type": "auth.ok", "proof": new_nonce()}))
            async for frame in connection:
                self.frames.append(str(frame))
        except ConnectionClosed:
            pass


async def test_an_app_restarted_on_another_port_is_found_and_no_stranger_is_told_anything(
    app: AppUnderTest, browser: ExtensionBrowser, module_paths: Paths
) -> None:
    await app.browser()
    token = app.harness.credential(EXTENSION_ID)
    old_port, new_port = app.port, free_port()
    asked = len(app.approver.requests)

    # The person sets another relay port in the app's settings; it takes effect at restart.
    def move(settings: Settings) -> None:
        settings.relay_port = new_port

    await asyncio.to_thread(SettingsStore(module_paths.settings_file).update, move)
    await wait_until(
        lambda: app.harness.core.settings.relay_port == new_port,
        timeout=5,
        message="the app sees its new settings",
    )
    await app.stop()
    # While the app is away the extension looks for it: the port in its options, the port the
    # app said it moves to, the default port; and says so.
    tried = f"looked for it on ports {old_port}, {new_port} and {DEFAULT_RELAY_PORT}"

    async def looked() -> bool:
        state = await browser.relay_state() or {}
        return state.get("state") == "unreachable" and tried in state.get("detail", "")

    await wait_until(looked, timeout=20, message=f"the extension says it {tried}")

    async with Stranger(old_port) as stranger:
        app.port = new_port
        await app.start()
        await assert_connected(app, browser)
        assert app.port == new_port

    sent = [json.loads(frame) for frame in stranger.frames]
    assert sent, "the extension did try the port in its options first"
    assert {m.get("type") for m in sent} == {"auth.response"}, "it said hello or answered"
    assert token not in json.dumps(stranger.frames), "the credential went on the wire"
    assert CONFIG_PATH not in stranger.paths, "it asked a stranger for a credential"
    assert len(app.approver.requests) == asked, "the person had nothing to approve"
    # Its options still show the person's port: only the person changes it.
    assert (await browser.storage("local"))["relayPort"] == old_port


async def test_a_rejection_on_the_old_port_does_not_outlive_the_person_setting_the_right_one(
    app: AppUnderTest,
    browser: ExtensionBrowser,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Another Tabrelay (another home, this extension paired there with another credential)
    now listens on the port the extension knows; the app runs elsewhere, unannounced."""
    await app.browser()
    options_port = (await browser.storage("local"))["relayPort"]
    other_paths = Paths.resolve({"TABRELAY_HOME": str(tmp_path_factory.mktemp("other-home"))})
    other = AppUnderTest(other_paths, paired=(EXTENSION_ID,))
    other.port = options_port
    await app.stop()
    await other.start()
    try:
        state = await browser.wait_for_state("rejected", timeout=30)
        assert "Click Pair" in state["detail"]
        app.port = free_port()
        await app.start()
        # The person types the app's port into the options page: that is all it takes.
        await browser.set_relay_port(app.port)
        await assert_connected(app, browser)
    finally:
        await other.stop()


async def test_pair_after_a_rejection_waits_for_the_persons_answer_however_long_it_takes(
    app: AppUnderTest, browser: ExtensionBrowser, module_paths: Paths
) -> None:
    """The app no longer knows the browser's credential (unpaired while the browser was away
    and another browser paired since): the person presses Pair once and answers in the tray
    when they get to it; the browser does not fall back to the refused credential meanwhile."""
    await app.browser()
    await app.stop()
    pairing = Pairing(SettingsStore(module_paths.settings_file), TokenStore.open(module_paths))
    await asyncio.to_thread(pairing.revoke, EXTENSION_ID)
    await asyncio.to_thread(pairing.add, EXTENSION_ID)
    await app.start()
    await browser.wait_for_state("rejected", timeout=30)
    asked = len(app.approver.requests)
    popup = await open_popup(browser)
    try:
        await popup.click("#pair")
    finally:
        await popup.close()
    await dialogs_after(app, asked)
    await browser.wait_for_state("awaiting_approval")
    # The person takes a while (the extension asks every 3-4 s meanwhile): a bounded look.
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        assert (await browser.relay_state() or {}).get("state") == "awaiting_approval"
        assert app.browsers() == []
        await asyncio.sleep(0.3)
    app.approver.decide(True)
    await assert_connected(app, browser)
    await no_new_dialog(app, asked + 1, seconds=2)


async def test_a_declined_request_is_not_repeated_within_the_quiet_minute(
    app: AppUnderTest,
    browser: ExtensionBrowser,
    module_paths: Paths,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The app's minute of quiet after a "no", shortened so the test sees both sides of it.
    quiet = 8.0
    monkeypatch.setattr(tabrelay.relay.pairing, "REFUSED_PAUSE", quiet)
    await app.browser()
    asked = len(app.approver.requests)
    await rotate(module_paths)
    await dialogs_after(app, asked)
    app.approver.decide(False)
    declined_at = time.monotonic()

    state = await browser.wait_for_state("declined")
    assert "declined" in state["detail"]
    # It does not ask again on its own: not within the quiet time, nor after it.
    await no_new_dialog(app, asked + 1, seconds=quiet + 4)
    view = await popup_view(browser)
    assert view["headline"] == "Pairing was declined in the Tabrelay app", view
    assert view["pair_button"] is True

    # The person asks again (the popup's button): one dialog, at once (the quiet time is over).
    popup = await open_popup(browser)
    try:
        await popup.click("#pair")
        await dialogs_after(app, asked + 1)
        app.approver.decide(False)
        declined_at = time.monotonic()
        await browser.wait_for_state("declined")
        # Asked again within the quiet time: it waits for its end, then asks once.
        await wait_until(
            lambda: popup.evaluate("!document.getElementById('pair').hidden"),
            timeout=5,
            message="the Pair button",
        )
        await popup.click("#pair")
        waiting = await browser.wait_for_state("pairing")
        assert "wait" in waiting["detail"], waiting
        await no_new_dialog(app, asked + 2, seconds=quiet - (time.monotonic() - declined_at) - 1)
        await dialogs_after(app, asked + 2, timeout=quiet + 5)
        assert time.monotonic() - declined_at >= quiet - 0.5
        app.approver.decide(True)
        await wait_until(
            lambda: popup.evaluate(
                f"document.getElementById('headline').textContent === {json.dumps(CONNECTED)}"
            ),
            timeout=15,
            message="the open popup turns to connected",
        )
    finally:
        await popup.close()
    await assert_connected(app, browser)
