"""The downloads a browser holds for the app's word (relay/held_downloads.py): the person's own go
on at once; an action's wait to be claimed by its address; what no aftermath claimed is settled
by the action that saw it begin (asked about, or cancelled when that action failed); an answer is
sent whatever happens to its caller, and one the browser cannot take is logged, never raised.
End to end in real Chromium: tests/e2e/test_reach_downloads.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tabrelay.errors import BrowserDisconnected, CommandFailed
from tabrelay.protocol.constants import MAX_HELD_URL_LENGTH
from tabrelay.protocol.messages import HeldDownload
from tabrelay.relay import held_downloads
from tabrelay.relay.held_downloads import HeldDownloads


class Extension:
    """What the app sent, and what it answers (an exception to raise, or {})."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.fails: Exception | None = None
        self.slow = 0.0

    async def send(self, method: str, params: dict[str, Any]) -> Any:
        await asyncio.sleep(self.slow)
        self.sent.append((method, params))
        if self.fails is not None:
            raise self.fails
        return {}

    def decided(self) -> list[tuple[int, bool]]:
        return [(p["id"], p["allow"]) for m, p in self.sent if m == "downloads.decide"]


def held(download_id: int, url: str = "https://shop.test/r", final: str = "") -> HeldDownload:
    return HeldDownload(download_id, url, final or url, "r.csv", "text/csv", 12, "safe")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def holding() -> tuple[Extension, HeldDownloads]:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    holds.start()
    await settle()
    assert holds.holding
    extension.sent.clear()
    return extension, holds


class Person:
    """``acting``'s settle: what it was asked about, and its answer."""

    def __init__(self, answer: bool | BaseException = True) -> None:
        self.answer = answer
        self.asked: list[int] = []

    async def __call__(self, download: HeldDownload) -> bool:
        self.asked.append(download.id)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


async def test_the_hold_is_asked_for_and_a_frame_before_it_is_refused() -> None:
    extension = Extension()
    holds = HeldDownloads(extension.send)
    assert not holds.arrived(held(1)), "a download frame nobody asked for is refused"
    holds.start()
    await settle()
    assert extension.sent == [("downloads.hold", {})] and holds.holding

    refusing = Extension()
    refusing.fails = CommandFailed("Unknown method: downloads.hold", code="unknown_method")
    old = HeldDownloads(refusing.send)
    old.start()
    await settle()
    assert not old.holding, "an extension that refused holds nothing: nothing is claimed"


async def test_a_download_while_no_action_is_under_way_goes_on_at_once() -> None:
    extension, holds = await holding()
    assert holds.arrived(held(1))
    await settle()
    assert extension.decided() == [(1, True)]
    assert await holds.claim("https://shop.test/r", timeout=0.05) is None


async def test_an_actions_download_is_claimed_and_what_it_saw_unclaimed_is_asked_about() -> None:
    extension, holds = await holding()
    person = Person(answer=False)
    async with holds.acting(person):
        claiming = asyncio.ensure_future(holds.claim("https://cdn.test/r.csv", timeout=5))
        await settle()
        holds.arrived(held(1, "https://other.test/x"))  # a page's script, another tab, …
        holds.arrived(held(2, "https://shop.test/export", final="https://cdn.test/r.csv"))
        claimed = await claiming
        assert claimed is not None and claimed.id == 2, "by where it ended, too"
        await settle()
        assert extension.decided() == [], "nothing goes on while the action is under way"
        await holds.decide(2, allow=True)
    assert person.asked == [1], "the claimed one is the claimer's; the other is asked about"
    assert extension.decided() == [(2, True), (1, False)]


async def test_with_two_actions_the_one_that_ends_last_settles_what_both_saw() -> None:
    extension, holds = await holding()
    first, second = Person(), Person()
    async with holds.acting(second):
        async with holds.acting(first):
            holds.arrived(held(1))
        assert first.asked == [], "the other action saw it too, and is still under way"
        holds.arrived(held(2))
    assert second.asked == [1, 2]
    assert extension.decided() == [(1, True), (2, True)]


async def failing(
    holds: HeldDownloads, person: Person, download_id: int, error: BaseException
) -> None:
    """An action during which ``download_id`` began, ended by ``error``."""
    async with holds.acting(person):
        holds.arrived(held(download_id))
        raise error


async def test_an_action_that_fails_cancels_what_only_it_saw_and_nobody_is_asked() -> None:
    extension, holds = await holding()
    person, other = Person(), Person()
    with pytest.raises(asyncio.CancelledError):  # the client cancelled the click while followed
        await failing(holds, person, 3, asyncio.CancelledError())
    await settle()
    assert extension.decided() == [(3, False)] and person.asked == []
    async with holds.acting(other):
        with pytest.raises(asyncio.CancelledError):
            await failing(holds, person, 4, asyncio.CancelledError())
        with pytest.raises(RuntimeError):
            await failing(holds, person, 5, RuntimeError("the page's tool threw"))
        await settle()
        assert extension.decided() == [(3, False)], "another action under way saw them: its to say"
    await settle()
    assert person.asked == [] and other.asked == [4, 5]


async def test_a_call_cancelled_while_the_person_decides_cancels_the_rest_it_had_to_settle() -> (
    None
):
    extension, holds = await holding()
    deciding = asyncio.Event()

    async def person(download: HeldDownload) -> bool:
        deciding.set()
        await asyncio.Event().wait()
        return True

    async def act() -> None:
        async with holds.acting(person):
            holds.arrived(held(6))
            holds.arrived(held(7))

    acting = asyncio.ensure_future(act())
    await asyncio.wait_for(deciding.wait(), 5)
    acting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await acting
    await settle()
    assert sorted(extension.decided()) == [(6, False), (7, False)]


async def test_an_answer_is_sent_though_its_caller_is_cancelled_meanwhile() -> None:
    extension, holds = await holding()
    extension.slow = 0.05
    deciding = asyncio.ensure_future(holds.decide(3, allow=False))
    await asyncio.sleep(0.01)
    deciding.cancel()
    await asyncio.sleep(0.1)
    assert extension.decided() == [(3, False)]


async def test_a_claim_times_out_and_a_long_address_is_matched_as_the_extension_cut_it() -> None:
    _, holds = await holding()
    async with holds.acting(Person()):
        assert await holds.claim("https://shop.test/r", timeout=0.05) is None
        long = "data:text/csv," + "a" * 5000
        holds.arrived(held(3, long[:MAX_HELD_URL_LENGTH]))
        claimed = await holds.claim(long, timeout=0.05)
        assert claimed is not None and claimed.id == 3


async def test_too_many_waiting_are_cancelled_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held_downloads, "MAX_WAITING", 2)
    extension, holds = await holding()
    async with holds.acting(Person()):
        for n in range(3):
            holds.arrived(held(n))
        await settle()
        assert extension.decided() == [(2, False)]
    assert extension.decided() == [(2, False), (0, True), (1, True)]


async def test_answers_the_browser_cannot_take_are_logged_and_the_connection_ending_stops_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    extension, holds = await holding()
    extension.fails = BrowserDisconnected("Chrome disconnected")
    holds.arrived(held(1))
    await settle()
    assert "a held download was not answered: Chrome disconnected" in caplog.text

    extension.fails = None
    person = Person()
    async with holds.acting(person):
        claiming = asyncio.ensure_future(holds.claim("https://nothing.test/", timeout=30))
        holds.arrived(held(2))
        holds.close()
        assert await asyncio.wait_for(claiming, 1) is None, "a claim waiting ends with it"
        assert not holds.holding
    assert person.asked == [] and (2, True) not in extension.decided(), (
        "a closed connection answers nothing (the extension cancels what it held)"
    )


async def test_a_question_about_a_download_is_withdrawn_when_the_connection_ends() -> None:
    extension, holds = await holding()
    asked = asyncio.Event()
    withdrawn: list[bool] = []

    async def person_deciding() -> None:
        async with holds.asking():
            asked.set()
            try:
                await asyncio.sleep(3600)  # the person has not decided
            except asyncio.CancelledError:
                withdrawn.append(True)  # the dialog is taken down
                raise

    question = asyncio.ensure_future(person_deciding())
    await asked.wait()
    holds.close()
    with pytest.raises(BrowserDisconnected, match="while the person was being asked"):
        await asyncio.wait_for(question, 1)
    assert withdrawn == [True]
    assert not question.cancelled() and question.cancelling() == 0, "the withdrawal is undone"
    # Nothing is answered on a connection that ended, and nothing is asked on one.
    holds.decide_later(1, allow=False)
    await settle()
    assert extension.decided() == []
    with pytest.raises(BrowserDisconnected):
        async with holds.asking():
            pytest.fail("asked on a connection that ended")


async def test_a_caller_cancelled_while_asking_stays_cancelled_though_the_connection_ends_too() -> (
    None
):
    _, holds = await holding()
    asked = asyncio.Event()

    async def person_deciding() -> None:
        async with holds.asking():
            asked.set()
            await asyncio.sleep(3600)

    question = asyncio.ensure_future(person_deciding())
    await asked.wait()
    question.cancel()  # the agent's client went away
    holds.close()  # and the browser, in the same moment
    with pytest.raises(asyncio.CancelledError):
        await question
    # A question that ended on its own leaves nothing behind to be withdrawn later.
    _, holds = await holding()
    async with holds.asking():
        pass
    holds.close()
    assert holds._asking == set() and holds._withdrawn == set()
