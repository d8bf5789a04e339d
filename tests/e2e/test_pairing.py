"""Pairing in real Chromium: an unpaired extension waits for the person's approval and then gets
a credential of its own; a rotation makes it ask the person again; a rejected one stays
rejected until the person pairs it again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest_asyncio

from e2e.chromium import EXTENSION_ID
from e2e.conftest import E2E, launch_browser
from e2e.harness import AppUnderTest, ExtensionBrowser, digest, wait_until
from support.harness import ScriptedApprover
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import SettingsStore
from tabrelay.protocol.constants import EXTENDED_METHODS, FEATURES
from tabrelay.relay.pairing import Pairing

pytestmark = E2E


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(module_paths: Paths) -> AsyncIterator[AppUnderTest]:
    """The app with nothing paired and an approver that waits for the test's decision."""
    async with AppUnderTest(module_paths, approver=ScriptedApprover(answer=None), paired=()) as app:
        yield app


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(app: AppUnderTest) -> AsyncIterator[ExtensionBrowser]:
    browser = await launch_browser(app.port)
    try:
        yield browser
    finally:
        await browser.close()


async def test_an_unpaired_extension_gets_no_token_and_asks_the_person_to_approve(
    app: AppUnderTest, browser: ExtensionBrowser
) -> None:
    await wait_until(lambda: app.approver.requests, timeout=10, message="a pairing request")
    assert app.approver.requests == [EXTENSION_ID]

    await browser.wait_for_state("awaiting_approval")
    popup = await browser.open_popup()
    try:
        assert await popup.text_of("#headline") == "Approve this browser in the Tabrelay app"
        shown = await popup.text_of("#detail")
    finally:
        await popup.close()
    # The popup and the app's dialog show the same code: the person allows this very browser.
    [code] = app.approver.codes
    assert code is not None and f"code {code}" in shown, shown
    assert await browser.badge() == "…"
    assert await browser.stored_token_digest() is None
    assert app.browsers() == []
    # The extension keeps asking while the person decides; the app shows one dialog.
    assert app.approver.requests == [EXTENSION_ID]


async def test_approving_the_pairing_connects_the_extension(
    app: AppUnderTest, browser: ExtensionBrowser
) -> None:
    started = time.monotonic()
    app.approver.decide(True)
    relay = await app.browser(timeout=10)
    connect_time = time.monotonic() - started
    assert connect_time < 6, f"connected {connect_time:.1f} s after approval (polls every 3–4 s)"

    assert relay.extension_id == EXTENSION_ID
    assert relay.name.startswith("Chromium ")
    capabilities = set(relay.hello.capabilities)  # type: ignore[union-attr]
    assert capabilities == {*EXTENDED_METHODS, *FEATURES}
    assert await browser.stored_token_digest() == digest(app.harness.token)
    assert await browser.storage("sync") == {}, "the token never syncs to other devices"
    assert await browser.badge() == "ON"
    assert (await browser.wait_for_state("connected"))["port"] == app.port


async def test_a_rotation_by_the_connected_app_makes_the_extension_ask_the_person_again(
    app: AppUnderTest, browser: ExtensionBrowser
) -> None:
    first = await app.browser()
    old_digest = await browser.stored_token_digest()
    asked = len(app.approver.requests)
    await app.harness.core.rotate_relay_token()
    await wait_until(
        lambda: len(app.approver.requests) > asked,
        timeout=10,
        message="the extension asks to pair again",
    )
    assert app.browsers() == [], "no credential comes back without the person"
    app.approver.decide(True)
    await wait_until(
        lambda: [b for b in app.browsers() if b is not first],
        timeout=10,
        message="the extension reconnects with its new credential",
    )
    assert await browser.stored_token_digest() == digest(app.harness.token) != old_digest


async def test_a_rejected_credential_stays_rejected_until_the_person_pastes_a_new_one(
    app: AppUnderTest, browser: ExtensionBrowser, module_paths: Paths
) -> None:
    old_digest = await browser.stored_token_digest()
    # The browser is unpaired while it cannot hear about it (the app is not running), and the
    # person pairs it by hand instead.
    await app.stop()
    pairing = Pairing(SettingsStore(module_paths.settings_file), TokenStore.open(module_paths))
    pairing.revoke(EXTENSION_ID)
    _, new_token = pairing.add(EXTENSION_ID)
    await app.start()

    state = await browser.wait_for_state("rejected", timeout=20)
    assert "no longer accepts this browser's credential" in state["detail"]
    assert await browser.badge() == "!"
    assert await browser.stored_token_digest() == old_digest, "not adopted without the person"
    # It does not try again on its own (bounded look, not a wait for something to happen).
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        assert app.browsers() == []
        await asyncio.sleep(0.2)

    await browser.paste_token(new_token)
    await app.browser(timeout=10)
    assert await browser.stored_token_digest() == digest(new_token)
    assert await browser.badge() == "ON"


async def test_a_link_to_the_options_page_cannot_change_the_relay(
    app: AppUnderTest, browser: ExtensionBrowser
) -> None:
    relay = await app.browser()
    for suffix in ("?relay=ws://evil.test:1/&port=1", "#port=1", "?port=9"):
        page = await browser.open_page(
            f"chrome-extension://{EXTENSION_ID}/src/pages/options.html{suffix}"
        )
        try:
            assert await page.evaluate("document.getElementById('port').value") == str(app.port)
        finally:
            await page.close()
    assert (await browser.storage("local"))["relayPort"] == app.port
    assert app.browsers() == [relay], "the connection was not disturbed"
