"""Downloads held for the app's word, over a real relay socket (docs/protocol.md ``download``):
an extension that holds them is asked to as it connects; one that begins with no action under way
(the person's own) is let go at once; a malformed ``download`` frame is refused and holds nothing
up; an extension that refuses to hold is never asked to decide. The rules themselves:
tests/unit/test_held_downloads.py; in real Chromium: tests/e2e/test_reach_downloads.py."""

from __future__ import annotations

import asyncio
from typing import Any

from support.fake_extension import FakeExtension
from support.harness import RelayHarness
from tabrelay.protocol.constants import EXTENDED_METHODS, FEATURES

HELD = {"id": 4, "url": "https://shop.test/r.csv", "finalUrl": "https://shop.test/r.csv",
        "filename": "r.csv", "mime": "text/csv", "totalBytes": 39, "danger": "safe"}  # fmt: skip


async def holding_extension(relay: RelayHarness) -> tuple[FakeExtension, list[dict[str, Any]]]:
    """A scripted extension that holds downloads, connected and holding: the
    ``downloads.decide`` words it got."""
    decided: list[dict[str, Any]] = []

    async def hold(params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def decide(params: dict[str, Any]) -> dict[str, Any]:
        decided.append(params)
        return {}

    extension = await relay.extension(
        capabilities=(*EXTENDED_METHODS, *FEATURES),
        handlers={"downloads.hold": hold, "downloads.decide": decide},
    )
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    await until(lambda: browser.held.holding)
    return extension, decided


async def until(condition: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_the_app_asks_to_hold_and_lets_the_persons_own_download_go_at_once(
    relay: RelayHarness,
) -> None:
    extension, decided = await holding_extension(relay)
    assert [c["method"] for c in extension.commands][:1] == ["downloads.hold"]
    await extension.send({"type": "download", "download": HELD})
    await until(lambda: decided)
    assert decided == [{"id": 4, "allow": True}]


async def test_a_malformed_download_frame_is_refused_and_decides_nothing(
    relay: RelayHarness,
) -> None:
    extension, decided = await holding_extension(relay)
    for bad in ({**HELD, "id": "4"}, {**HELD, "totalBytes": -7}, {**HELD, "url": "u" * 5000}):
        await extension.send({"type": "download", "download": bad})
    await until(lambda: len(extension.errors) == 3)
    assert {e["code"] for e in extension.errors} == {"bad_field"}
    # The connection still serves: a good frame after them is answered.
    await extension.send({"type": "download", "download": {**HELD, "id": 5}})
    await until(lambda: decided)
    assert decided == [{"id": 5, "allow": True}]


async def test_an_extension_that_does_not_hold_is_never_asked_to_decide(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension(capabilities=(*EXTENDED_METHODS, *FEATURES))
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    await until(lambda: any(c["method"] == "downloads.hold" for c in extension.commands))
    await asyncio.sleep(0.1)
    assert not browser.held.holding, "its 'Unknown method' answer: nothing is held"
