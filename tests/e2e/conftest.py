"""Fixtures for the e2e tests: one Chromium, one app and one page server per test module.

Sharing them per module keeps the suite fast; a test that changes shared state (closes the
app, rotates the token) restores it or runs last in its module. Without Chromium every test
here is collected and skipped with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from e2e.agent import Agent
from e2e.chromium import EXTENSION_ID, chromium_path
from e2e.harness import (
    AppUnderTest,
    DefaultPortGuard,
    ExtensionBrowser,
    PageServer,
    PortTaken,
)
from support.mcp import mcp_client
from tabrelay.config.paths import Paths

CHROMIUM = chromium_path()

requires_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's Chromium is not installed (/usr/bin/chromium); `make test` installs it",
)

# Every e2e module uses this: the marker, the skip, and one event loop for the module (its
# Chromium, app and CDP connection live across tests).
E2E = [pytest.mark.e2e, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


async def launch_browser(relay_port: int) -> ExtensionBrowser:
    """Chromium with a fresh profile and the extension, pointed at ``relay_port``.

    The port is typed into the options page, as a person would; until then the default port is
    held so a fresh extension cannot pair with a real Tabrelay listening there.
    """
    assert CHROMIUM is not None
    try:
        async with DefaultPortGuard():
            browser = await ExtensionBrowser.launch(CHROMIUM)
            try:
                await browser.set_relay_port(relay_port)
            except BaseException:
                await browser.close()
                raise
    except PortTaken as taken:
        pytest.skip(str(taken))
    return browser


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


@pytest.fixture(scope="module")
def module_paths(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    return Paths.resolve({"TABRELAY_HOME": str(tmp_path_factory.mktemp("tabrelay-home"))})


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(module_paths: Paths) -> AsyncIterator[AppUnderTest]:
    """The real app core; the test extension may pair once, as after `tabrelay pair allow`."""
    async with AppUnderTest(module_paths, allowed=(EXTENSION_ID,), write_instance_file=True) as app:
        yield app


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(app: AppUnderTest) -> AsyncIterator[ExtensionBrowser]:
    """Chromium with the extension, connected to ``app``."""
    browser = await launch_browser(app.port)
    try:
        await app.browser(timeout=15)
        yield browser
    finally:
        await browser.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(app: AppUnderTest, browser: ExtensionBrowser) -> AsyncIterator[Agent]:
    """An MCP client connected to the app, as an AI agent would be.

    The client lives in a task of its own: its anyio scopes must be entered and left in the
    same task, and a module fixture's setup and teardown run in different ones.
    """
    await app.browser(timeout=15)
    token = await app.harness.add_client("e2e-agent")
    connected: asyncio.Future[Agent] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        async with mcp_client(app.harness.base_mcp(), token) as client:
            connected.set_result(Agent(client))
            await done.wait()

    holder = asyncio.create_task(hold())
    yield await asyncio.wait_for(connected, 15)
    done.set()
    await holder
