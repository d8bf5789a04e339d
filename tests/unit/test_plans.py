"""One approval for a task (issue 25): a plan the person approved lets the routine actions it
names run on its sites for its session and its time; consequential effects and other sites
still ask; the person's edits hold; it ends with its session, its time, a revoke, a pause or
the client's token, and headless nobody can approve one."""

from __future__ import annotations

import pytest

from support.harness import ScriptedToolApprover
from tabrelay.approval.effects import Effect, Kind
from tabrelay.approval.gate import ApprovalGate, Choice
from tabrelay.approval.plans import ACTIONS, Plans, draft_of, edited
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.errors import ApprovalDenied

SHOP = "https://shop.example"
DRAFT = draft_of("Reorder my usual tea", [SHOP, "https://Mail.Example/"], ["click", "type"], 30)


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def gate_for(
    home: Paths, *rules: PolicyRule, headless: bool = False
) -> tuple[ApprovalGate, ScriptedToolApprover, Clock]:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: s.policy_rules.extend(rules))
    approver = ScriptedToolApprover(Choice.DENY)  # every question without a plan: no
    clock = Clock()
    gate = ApprovalGate(store, approver=None if headless else approver, clock=clock)
    return gate, approver, clock


async def act(
    gate: ApprovalGate,
    *,
    tool: str = "browser_click",
    site: str = SHOP,
    session: str | None = "s1",
    effect: Effect | None = None,
    leaving: str | None = None,
) -> str:
    approval = await gate.check(
        client="cursor",
        tool=tool,
        arguments={},
        origin=site,
        tab_id=3,
        session=session,
        effect=effect,
        leaving=leaving,
    )
    return approval.how


def test_a_draft_names_each_site_once_as_rules_do_and_the_person_s_edits_hold() -> None:
    assert DRAFT.sites == (SHOP, "https://mail.example")
    assert DRAFT.actions == ("click", "type")
    assert DRAFT.tools() == {"browser_click", "browser_type", "browser_fill_form"}
    mine = edited(DRAFT, sites=["https://shop.example", "https://docs.example"], minutes=600)
    assert mine.sites == (SHOP, "https://docs.example") and mine.minutes == 480
    assert draft_of("x", [SHOP], [], 5).actions == ACTIONS  # none named: all of them


async def test_an_approved_plan_runs_routine_actions_on_its_sites_only(home: Paths) -> None:
    gate, person, _ = gate_for(home)
    person.answer = Choice.ALLOW_ONCE
    plan = await gate.request_plan(client="cursor", session="s1", draft=DRAFT)
    person.answer = Choice.DENY
    assert (await act(gate)).startswith(f"allowed by plan {plan.id}")
    assert (await act(gate, tool="browser_type", site="https://mail.example")).startswith(
        "allowed by plan"
    )
    asked = len(person.requests)
    for call in (
        act(gate, site="https://other.example"),  # a site outside the plan
        act(gate, tool="browser_navigate"),  # an action it does not name
        act(gate, effect=Effect(Kind.SEND, "button “Send”")),  # a consequential effect
        act(gate, session="s2"),  # another session of the same client
        act(gate, leaving="https://evil.example/?d=card"),  # leaving for a site not in it
    ):
        with pytest.raises(ApprovalDenied, match="denied by the person"):
            await call
    assert len(person.requests) == asked + 5
    assert [r.plan for r in person.requests[:1]] == [DRAFT]  # the plan's own question


async def test_the_person_s_sites_and_time_are_the_plan(home: Paths) -> None:
    gate, person, clock = gate_for(home)
    person.answer = Choice.ALLOW_ONCE
    person.plan_answer = lambda draft: edited(draft, sites=[SHOP], minutes=10)
    await gate.request_plan(client="cursor", session="s1", draft=DRAFT)
    person.answer = Choice.DENY
    assert (await act(gate)).startswith("allowed by plan")
    with pytest.raises(ApprovalDenied):
        await act(gate, tool="browser_type", site="https://mail.example")  # taken out
    clock.now += 10 * 60
    with pytest.raises(ApprovalDenied):
        await act(gate)  # its time is up
    assert gate.plans.live() == []


async def test_a_plan_ends_with_its_session_a_revoke_a_pause_or_its_client(home: Paths) -> None:
    gate, person, _ = gate_for(home)
    person.answer = Choice.ALLOW_ONCE
    ended = []
    gate.plans.add_listener(lambda: ended.append(len(gate.plans.live())))
    for end in (
        lambda: gate.plans.end_session("cursor", "s1"),
        lambda: gate.plans.revoke(gate.plans.live()[0].id),
        lambda: gate.set_paused(True),
        lambda: gate.forget_client("cursor"),
    ):
        gate.set_paused(False)
        await gate.request_plan(client="cursor", session="s1", draft=DRAFT)
        assert len(gate.plans.live()) == 1
        end()
        assert gate.plans.live() == []
    assert ended.count(0) == 4


async def test_no_plan_without_the_person_unless_a_rule_says_so(home: Paths) -> None:
    gate, person, _ = gate_for(home)
    with pytest.raises(ApprovalDenied, match="did not approve the plan"):
        await gate.request_plan(client="cursor", session="s1", draft=DRAFT)
    person.answer = Choice.ALLOW_ONCE
    person.plan_answer = lambda draft: edited(draft, sites=[], minutes=5)
    with pytest.raises(ApprovalDenied, match="did not approve the plan"):
        await gate.request_plan(client="cursor", session="s1", draft=DRAFT)  # no site left
    headless, _, _ = gate_for(home, headless=True)
    with pytest.raises(ApprovalDenied, match="running headless"):
        await headless.request_plan(client="cursor", session="s1", draft=DRAFT)
    allowed, _, _ = gate_for(home, PolicyRule(tool="browser_request_access", decision="allow"))
    allowed.approver = None
    plan = await allowed.request_plan(client="cursor", session=None, draft=DRAFT)
    assert plan.draft == DRAFT
    paused, _, _ = gate_for(home)
    paused.set_paused(True)
    with pytest.raises(ApprovalDenied, match="paused"):
        await paused.request_plan(client="cursor", session="s1", draft=DRAFT)


def test_plans_are_the_one_owner_and_a_new_one_replaces_the_old() -> None:
    clock = Clock()
    plans = Plans(clock=clock)
    first = plans.start("cursor", "s1", DRAFT)
    second = plans.start("cursor", "s1", DRAFT)
    assert plans.live() == [second] and first.id != second.id
    assert plans.covering(client="cursor", session="s1", tool="browser_click", site=SHOP)
    assert not plans.covering(client="claude", session="s1", tool="browser_click", site=SHOP)
    assert not plans.revoke(first.id) and plans.revoke(second.id)
