"""The gate shows the page's elements only while the person is asked, and takes them away
whatever ends the question: an answer, a timeout, a pause, a cancelled call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

import pytest

from tabrelay.approval.gate import ApprovalGate, ApprovalRequest, Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.errors import ApprovalDenied
from tabrelay.tools.targets import TargetView, Touches

SITE = "https://shop.example"
BUY = TargetView("ref", "e3", "click", role="button", name="Buy", frame="main frame")


@dataclass(frozen=True)
class MarkedTouches(Touches):
    """Touches whose page is a list of what happened to it."""

    page_log: list[str] = field(default_factory=list, compare=False)
    on_mark: asyncio.Event | None = field(default=None, compare=False)
    gate: ApprovalGate | None = field(default=None, compare=False)  # paused while marking

    @contextlib.asynccontextmanager
    async def shown(self, *, timeout: float) -> AsyncIterator[tuple[TargetView, ...]]:
        self.page_log.append("marked")
        try:
            if self.gate is not None:
                self.gate.set_paused(True)
            await asyncio.sleep(0)
            yield tuple(replace(t, picture=b"jpeg") for t in self.targets)
        finally:
            self.page_log.append("unmarked")


class Approver:
    def __init__(self, choice: Choice | None, touches: MarkedTouches) -> None:
        self.choice = choice
        self.touches = touches
        self.requests: list[ApprovalRequest] = []
        self.page_when_asked: list[list[str]] = []

    async def decide(self, request: ApprovalRequest) -> Choice:
        self.requests.append(request)
        self.page_when_asked.append(list(self.touches.page_log))
        if self.choice is None:
            await asyncio.Event().wait()
        assert self.choice is not None
        return self.choice


def gate_for(
    home: Paths, choice: Choice | None, **touched: object
) -> tuple[ApprovalGate, Approver]:
    store = SettingsStore(home.settings_file)
    store.load()
    touches = MarkedTouches(targets=(BUY,), destination=None, unnamed=2, **touched)  # type: ignore[arg-type]
    approver = Approver(choice, touches)
    return ApprovalGate(store, approver=approver), approver


async def click(gate: ApprovalGate, approver: Approver) -> str:
    approval = await gate.check(
        client="cursor",
        tool="browser_click",
        arguments={"ref": "e3"},
        origin=SITE,
        tab_id=4,
        touches=approver.touches,
    )
    return approval.how


async def test_the_question_carries_the_elements_with_their_pictures(home: Paths) -> None:
    gate, approver = gate_for(home, Choice.ALLOW_ONCE)
    assert await click(gate, approver) == "approved once by the person"
    [request] = approver.requests
    assert request.targets == (BUY,) and request.targets[0].picture == b"jpeg"
    assert request.unnamed_targets == 2
    assert approver.page_when_asked == [["marked"]]
    assert approver.touches.page_log == ["marked", "unmarked"]


@pytest.mark.parametrize("ending", ["deny", "timeout", "pause", "cancel"])
async def test_the_elements_are_unmarked_whatever_ends_the_question(
    home: Paths, ending: str
) -> None:
    gate, approver = gate_for(home, Choice.DENY if ending == "deny" else None)
    if ending == "timeout":
        gate.settings_store.update(lambda s: setattr(s, "approval_timeout", 0.05))
    asking = asyncio.create_task(click(gate, approver))
    async with asyncio.timeout(5):
        while not approver.requests and not asking.done():
            await asyncio.sleep(0)
    if ending == "pause":
        gate.set_paused(True)
    elif ending == "cancel":
        asking.cancel()
    outcome = (await asyncio.gather(asking, return_exceptions=True))[0]
    assert isinstance(outcome, asyncio.CancelledError if ending == "cancel" else ApprovalDenied)
    assert approver.page_when_asked == [["marked"]]
    assert approver.touches.page_log == ["marked", "unmarked"]
    assert gate.pending == {}


async def test_nothing_is_marked_when_nobody_is_asked(home: Paths) -> None:
    gate, approver = gate_for(home, Choice.ALLOW_ONCE)
    gate.settings_store.update(
        lambda s: s.policy_rules.append(PolicyRule(tool="browser_click", decision="allow"))
    )
    await click(gate, approver)
    gate.set_paused(True)
    with pytest.raises(ApprovalDenied):
        await click(gate, approver)
    gate.set_paused(False)
    gate.approver = None  # headless
    gate.settings_store.update(lambda s: s.policy_rules.clear())
    with pytest.raises(ApprovalDenied, match="running headless"):
        await click(gate, approver)
    assert approver.touches.page_log == [] and approver.requests == []


async def test_a_pause_while_the_page_is_marked_denies_without_asking(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.load()
    gate = ApprovalGate(store)
    approver = Approver(Choice.ALLOW_ONCE, MarkedTouches(targets=(BUY,), gate=gate))
    gate.approver = approver
    with pytest.raises(ApprovalDenied, match="paused by the person"):
        await click(gate, approver)
    assert approver.requests == []
    assert approver.touches.page_log == ["marked", "unmarked"]


async def test_a_new_tab_asks_with_where_it_goes(home: Paths) -> None:
    gate, approver = gate_for(home, Choice.ALLOW_ONCE)
    await gate.check(
        client="cursor",
        tool="browser_new_tab",
        arguments={"url": "HTTPS://Example.ORG./a"},
        touches=Touches(destination="https://example.org"),
    )
    [request] = approver.requests
    assert (request.origin, request.destination, request.targets) == (
        None,
        "https://example.org",
        (),
    )
