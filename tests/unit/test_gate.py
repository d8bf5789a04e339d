"""The approval gate: fail closed on every path, and each choice creates the matching rule."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tabrelay.approval.gate import ApprovalGate, ApprovalRequest, Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.errors import ApprovalDenied

SITE = "https://shop.example"


class Approver:
    def __init__(self, choice: Choice | None) -> None:
        self.choice = choice
        self.requests: list[ApprovalRequest] = []
        self.cancelled = asyncio.Event()

    async def decide(self, request: ApprovalRequest) -> Choice:
        self.requests.append(request)
        if self.choice is None:
            try:
                await asyncio.Event().wait()  # never answers
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        assert self.choice is not None
        return self.choice


def gate_for(
    home: Paths, choice: Choice | None = Choice.ALLOW_ONCE
) -> tuple[ApprovalGate, Approver]:
    store = SettingsStore(home.settings_file)
    store.load()
    approver = Approver(choice)
    return ApprovalGate(store, approver=approver), approver


async def click(gate: ApprovalGate, *, tool: str = "browser_click", client: str = "cursor") -> str:
    approval = await gate.check(
        client=client,
        tool=tool,
        arguments={"ref": "e3"},
        origin=SITE,
        tab_title="Cart",
        tab_id=4,
        browser_name="Chrome 131",
        client_reported="Cursor 1.2 (self-reported)",
    )
    return approval.how


async def test_read_only_tools_pass_without_asking(home: Paths) -> None:
    gate, approver = gate_for(home)
    assert await click(gate, tool="browser_snapshot") == "allowed by default (allow)"
    assert approver.requests == []


async def test_acting_tools_ask_with_everything_the_dialog_shows(home: Paths) -> None:
    gate, approver = gate_for(home)
    assert await click(gate) == "approved once by the person"
    [request] = approver.requests
    assert (request.client, request.tool, request.origin, request.tab_title) == (
        "cursor",
        "browser_click",
        SITE,
        "Cart",
    )
    assert request.arguments == {"ref": "e3"} and request.offers_always
    assert gate.pending == {}
    await click(gate)  # once means once
    assert len(approver.requests) == 2


async def test_a_denial_raises_a_clear_error(home: Paths) -> None:
    gate, _ = gate_for(home, Choice.DENY)
    with pytest.raises(ApprovalDenied, match="denied by the person"):
        await click(gate)


async def test_no_answer_in_time_is_a_denial(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: setattr(s, "approval_timeout", 0.05))
    approver = Approver(None)
    gate = ApprovalGate(store, approver=approver)
    with pytest.raises(ApprovalDenied, match=r"did not answer within 0\.05 s"):
        await click(gate)
    assert approver.cancelled.is_set()  # the dialog is withdrawn
    assert gate.pending == {}


async def test_cancelling_the_call_withdraws_the_pending_approval(home: Paths) -> None:
    gate, approver = gate_for(home, None)
    changes: list[int] = []
    gate.add_listener(lambda: changes.append(len(gate.pending)))
    task = asyncio.create_task(click(gate))
    async with asyncio.timeout(1):
        while not gate.pending:
            await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert approver.cancelled.is_set()
    assert gate.pending == {} and changes == [1, 0]


async def test_headless_ask_is_denied_with_how_to_allow_it(home: Paths) -> None:
    gate, _ = gate_for(home)
    gate.approver = None
    with pytest.raises(ApprovalDenied) as raised:
        await click(gate)
    assert "running headless" in str(raised.value)
    assert f"tabrelay policy set browser_click allow --site {SITE}" in str(raised.value)


async def test_pause_denies_everything_at_once_until_resumed(home: Paths) -> None:
    gate, approver = gate_for(home)
    gate.set_paused(True)
    for tool in ("browser_snapshot", "browser_click"):
        with pytest.raises(ApprovalDenied, match="paused agent access"):
            await click(gate, tool=tool)
    assert approver.requests == []
    gate.set_paused(False)
    await click(gate, tool="browser_snapshot")


async def test_pausing_withdraws_questions_already_waiting_in_the_gate(home: Paths) -> None:
    gate, approver = gate_for(home, choice=None)
    asking = [asyncio.create_task(click(gate)) for _ in range(3)]
    async with asyncio.timeout(5):
        while len(approver.requests) < 3:  # three dialogs are up
            await asyncio.sleep(0)
    gate.set_paused(True)
    async with asyncio.timeout(1):
        outcomes = await asyncio.gather(*asking, return_exceptions=True)
    for outcome in outcomes:
        assert isinstance(outcome, ApprovalDenied)
        assert "paused by the person" in str(outcome)
        assert outcome.decision == "denied: agent access paused"
    assert approver.cancelled.is_set(), "the dialog was told to go away"
    assert gate.pending == {}


async def test_a_cancelled_call_withdraws_its_question_and_the_gate_forgets_it(home: Paths) -> None:
    gate, approver = gate_for(home, choice=None)
    asking = asyncio.create_task(click(gate))
    async with asyncio.timeout(5):
        while not approver.requests:
            await asyncio.sleep(0)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert approver.cancelled.is_set()
    assert gate.pending == {}
    assert not gate.paused


async def test_a_deny_rule_refuses_without_asking(home: Paths) -> None:
    gate, approver = gate_for(home)
    gate.settings_store.update(
        lambda s: s.policy_rules.append(PolicyRule(tool="browser_click", decision="deny"))
    )
    with pytest.raises(ApprovalDenied, match=r"denied by a rule \(deny browser_click\)"):
        await click(gate)
    assert approver.requests == []


async def test_allow_for_the_session_is_remembered_for_that_client_and_site_only(
    home: Paths,
) -> None:
    gate, approver = gate_for(home, Choice.ALLOW_SESSION)
    assert await click(gate) == "approved for the session by the person"
    assert await click(gate) == "allowed by allow browser_click on https://shop.example for cursor"
    approver.choice = Choice.ALLOW_ONCE
    await click(gate, client="claude")
    assert len(approver.requests) == 2
    assert SettingsStore(home.settings_file).load().policy_rules == []  # not persisted
    gate.forget_client("cursor")
    await click(gate)
    assert len(approver.requests) == 3


async def test_always_allow_persists_a_rule(home: Paths) -> None:
    gate, _ = gate_for(home, Choice.ALLOW_ALWAYS)
    assert await click(gate) == "approved always by the person"
    [rule] = SettingsStore(home.settings_file).load().policy_rules
    assert (rule.tool, rule.decision, rule.site, rule.client) == (
        "browser_click",
        "allow",
        SITE,
        "cursor",
    )


async def test_always_is_downgraded_to_the_session_for_evaluate(home: Paths) -> None:
    gate, approver = gate_for(home, Choice.ALLOW_ALWAYS)
    await click(gate, tool="browser_evaluate")
    assert not approver.requests[0].offers_always
    assert SettingsStore(home.settings_file).load().policy_rules == []
    assert len(gate.session_rules) == 1


class Heard:
    """A progress callback that records what the gate reports."""

    def __init__(self, *, fail: bool = False) -> None:
        self.reports: list[tuple[float, float | None, str | None]] = []
        self.fail = fail
        self._changed = asyncio.Event()

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.reports.append((done, total, message))
        self._changed.set()
        if self.fail:
            raise ConnectionResetError("the client went away")

    async def until(self, count: int) -> None:
        async with asyncio.timeout(5):
            while len(self.reports) < count:
                self._changed.clear()
                await self._changed.wait()


class AnsweringApprover:
    """Answers when the test says so."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[Choice] = asyncio.get_running_loop().create_future()

    async def decide(self, request: ApprovalRequest) -> Choice:
        return await self.answer


PROGRESS_INTERVAL = 0.01
QUIET = 10 * PROGRESS_INTERVAL  # a gate still reporting would report about ten times in it


@pytest.mark.parametrize("ending", ["answer", "timeout", "pause", "cancel"])
async def test_a_waiting_call_hears_how_long_it_waited_until_its_question_ends(
    home: Paths, ending: str
) -> None:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: setattr(s, "approval_timeout", 0.3 if ending == "timeout" else 60))
    approver = AnsweringApprover()
    gate = ApprovalGate(store, approver=approver, progress_interval=PROGRESS_INTERVAL)
    heard = Heard()
    call = asyncio.create_task(
        gate.check(client="cursor", tool="browser_click", arguments={}, origin=SITE, progress=heard)
    )
    await heard.until(3)
    if ending == "answer":
        approver.answer.set_result(Choice.ALLOW_ONCE)
    elif ending == "pause":
        gate.set_paused(True)
    elif ending == "cancel":
        call.cancel()
    outcome = (await asyncio.gather(call, return_exceptions=True))[0]
    if ending == "answer":
        assert outcome.how == "approved once by the person"  # type: ignore[union-attr]
    else:
        assert isinstance(outcome, ApprovalDenied | asyncio.CancelledError)
    reported = len(heard.reports)
    await asyncio.sleep(QUIET)  # an observation window: nothing more may be reported
    assert len(heard.reports) == reported
    timeout = store.current.approval_timeout
    waited = [done for done, _, _ in heard.reports]
    assert waited[0] == 0 and all(a < b for a, b in itertools.pairwise(waited))
    assert all(total == timeout for _, total, _ in heard.reports)
    assert all("waiting for the person to allow browser_click" in str(m) for *_, m in heard.reports)


async def test_a_progress_report_that_fails_does_not_decide_the_question(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.load()
    approver = AnsweringApprover()
    gate = ApprovalGate(store, approver=approver, progress_interval=PROGRESS_INTERVAL)
    heard = Heard(fail=True)
    call = asyncio.create_task(
        gate.check(client="cursor", tool="browser_click", arguments={}, origin=SITE, progress=heard)
    )
    await heard.until(1)
    await asyncio.sleep(QUIET)  # the question still waits, and nothing more is reported
    assert not call.done() and len(heard.reports) == 1 and gate.pending
    approver.answer.set_result(Choice.DENY)
    with pytest.raises(ApprovalDenied, match="denied by the person"):
        await call
