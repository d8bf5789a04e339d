"""A clean stop of the app lets every browser's tabs go before it closes the connections, with
the seed protocol's own ``debugger.detach`` (an older extension does not let them go itself)."""

from __future__ import annotations

import time

import pytest

from support.fake_extension import FakeExtension
from support.harness import running_core
from tabrelay.config.paths import Paths


@pytest.mark.parametrize("seed", [True, False], ids=["seed", "tabrelay"])
async def test_a_clean_stop_detaches_every_attached_tab_before_closing(
    home: Paths, seed: bool
) -> None:
    async with running_core(home) as app:
        # Not app.extension(): the harness would close it before the app stops.
        extension = await FakeExtension(app.port, app.token, seed=seed).connect()
        await app.browser_count(1)
        browser = app.core.registry.resolve()
        await browser.attach(1)
        await browser.attach(2)
        assert browser.attached_tabs == {1, 2}
        sent_before = len(extension.commands)
    code = await extension.wait_closed(5)
    assert code == 1001, "going away"
    detached = [c for c in extension.commands[sent_before:] if c["method"] == "debugger.detach"]
    assert sorted(c["params"]["tabId"] for c in detached) == [1, 2]
    assert extension.attached == set()


async def test_a_browser_that_does_not_answer_does_not_hold_up_the_stop(home: Paths) -> None:
    async with running_core(home) as app:
        extension = await FakeExtension(app.port, app.token).connect()
        await app.browser_count(1)
        await app.core.registry.resolve().attach(1)
        extension.hold_replies = True
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 2.5
    assert await extension.wait_closed(5) == 1001
