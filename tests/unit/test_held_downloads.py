"""The downloads a browser holds for the app's word (relay/held_downloads.py): the person's own go
on at once, an action's wait to be claimed by its address, what no action claimed goes on when
the last action ends, and an answer the browser cannot take is logged, never raised. End to end
in real Chromium: tests/e2e/test_reach_downloads.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tabrelay.errors import BrowserDisconnected, CommandFailed
from tabrelay.protocol.constants import MAX_HELD_URL_LENGTH
from tabrelay.protocol.messages import HeldDownload
from tabrelay.relay.held_downloads import HeldDownloads


class Extension:
    """What the app sent, and what it answers (an exception to raise, or {})."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.fails: Exception | None = None

    async def send(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        if self.fails is not None:
            raise self.fails
        return {}


def held(download_id: int, url: str = "https://shop.test/r", final: str = "") -> HeldDownload:
    return HeldDownload(download_id, url, final or url, "r.csv", "text/csv", 12, "safe")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_the_hold_is_asked_for_and_known_only_once_the_browser_took_it() -> None:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    holds.start()
    assert not holds.holding
    await settle()
    assert extension.sent == [("downloads.hold", {})] and holds.holding

    refusing = Extension()
    refusing.fails = CommandFailed("Unknown method: downloads.hold", code="unknown_method")
    old = HeldDownloads(refusing.send)
    old.start()
    await settle()
    assert not old.holding, "an extension that refused holds nothing: nothing is claimed"


async def test_a_download_while_no_action_is_under_way_goes_on_at_once() -> None:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    holds.arrived(held(1))
    await settle()
    assert extension.sent == [("downloads.decide", {"id": 1, "allow": True})]
    assert await holds.claim("https://shop.test/r", timeout=0.05) is None


async def test_an_actions_download_waits_to_be_claimed_and_the_rest_go_on_when_it_ends() -> None:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    with holds.acting():
        claiming = asyncio.ensure_future(holds.claim("https://cdn.test/r.csv", timeout=5))
        await settle()
        holds.arrived(held(1, "https://other.test/x"))  # the person's, meanwhile
        holds.arrived(held(2, "https://shop.test/export", final="https://cdn.test/r.csv"))
        claimed = await claiming
        assert claimed is not None and claimed.id == 2, "by where it ended, too"
        await settle()
        assert extension.sent == [], "nothing goes on while an action may still claim it"
        with holds.acting():  # a second action at once
            pass
        assert extension.sent == [], "not while the first is under way"
        await holds.decide(2, allow=False)
    await settle()
    assert extension.sent == [
        ("downloads.decide", {"id": 2, "allow": False}),
        ("downloads.decide", {"id": 1, "allow": True}),
    ]


async def test_a_claim_times_out_and_a_long_address_is_matched_as_the_extension_cut_it() -> None:
    holds = HeldDownloads(Extension().send)
    with holds.acting():
        assert await holds.claim("https://shop.test/r", timeout=0.05) is None
        long = "data:text/csv," + "a" * 5000
        holds.arrived(held(3, long[:MAX_HELD_URL_LENGTH]))
        claimed = await holds.claim(long, timeout=0.05)
        assert claimed is not None and claimed.id == 3


async def test_answers_the_browser_cannot_take_are_logged_and_the_connection_ending_stops_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    extension.fails = BrowserDisconnected("Chrome disconnected")
    holds.arrived(held(1))
    await settle()
    assert "a held download was not answered: Chrome disconnected" in caplog.text

    extension.fails = None
    with holds.acting():
        holds.arrived(held(2))
        holds.close()
        assert not holds.holding
    await settle()
    assert ("downloads.decide", {"id": 2, "allow": True}) not in extension.sent, (
        "a closed connection answers nothing (the extension cancels what it held)"
    )


async def test_an_action_cancelled_before_it_claimed_has_the_unclaimed_downloads_cancelled() -> (
    None
):
    extension = Extension()
    holds = HeldDownloads(extension.send)

    def cancelled_action() -> None:
        with holds.acting():
            holds.arrived(held(4))
            raise asyncio.CancelledError  # the client cancelled the click while it was followed

    with pytest.raises(asyncio.CancelledError):
        cancelled_action()
    await settle()
    assert extension.sent == [("downloads.decide", {"id": 4, "allow": False})]
    # The next action ends well: what arrives then goes on again.
    with holds.acting():
        holds.arrived(held(5))
    await settle()
    assert extension.sent[-1] == ("downloads.decide", {"id": 5, "allow": True})
