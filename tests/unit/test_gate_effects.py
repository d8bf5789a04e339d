"""The gate weighs what a call will do and where it goes, not only which tool on which site
(issue 25): a consequential effect asks under any grant of its tool unless a rule names the
effect; a call that takes the tab to another site needs its tool allowed there; the person's
choices make the rules that would let it through next time, never a standing one for paying,
moving money or granting access; headless, the denial names the effect and the rule."""

from __future__ import annotations

import pytest

from support.harness import ScriptedToolApprover
from tabrelay.approval.effects import Effect, Kind
from tabrelay.approval.gate import ApprovalGate, Choice
from tabrelay.approval.plans import PlanDraft
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.errors import ApprovalDenied
from tabrelay.tools.results import plain

SITE = "https://shop.example"
PAY = Effect(Kind.PAY, "button “Place order” in a form with card number field")
SEND = Effect(Kind.SEND, "button “Send”")
ROUTINE = Effect(Kind.ROUTINE)


def gate_for(
    home: Paths,
    *rules: PolicyRule,
    choice: Choice | None = Choice.ALLOW_ONCE,
    headless: bool = False,
) -> tuple[ApprovalGate, ScriptedToolApprover, SettingsStore]:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: s.policy_rules.extend(rules))
    approver = ScriptedToolApprover(choice)
    return ApprovalGate(store, approver=None if headless else approver), approver, store


def granted(tool: str = "browser_click", site: str = SITE) -> PolicyRule:
    return PolicyRule(tool=tool, decision="allow", site=site)


async def call(
    gate: ApprovalGate,
    effect: Effect | None,
    *,
    tool: str = "browser_click",
    leaving: str | None = None,
) -> str:
    approval = await gate.check(
        client="cursor",
        tool=tool,
        arguments={"ref": "e3"},
        origin=SITE,
        tab_id=4,
        effect=effect,
        leaving=leaving,
    )
    return approval.how


async def test_a_site_grant_runs_routine_clicks_and_asks_before_paying(home: Paths) -> None:
    gate, person, _ = gate_for(home, granted())
    assert (await call(gate, ROUTINE)).startswith("allowed by allow browser_click on")
    assert await call(gate, PAY) == "approved once by the person"
    (request,) = person.requests
    assert request.asks_for_effect and request.effect == PAY
    assert not request.offers_session  # no standing rule to pay, from a dialog


async def test_a_rule_naming_the_effect_lets_it_through_and_a_deny_rule_stops_it(
    home: Paths,
) -> None:
    gate, person, _ = gate_for(
        home, granted(), PolicyRule(tool="effect:send", decision="allow", site=SITE)
    )
    assert (await call(gate, SEND)).startswith("allowed by")
    assert person.requests == []
    denying, _, _ = gate_for(home, PolicyRule(tool="effect:pay", decision="deny"))
    with pytest.raises(ApprovalDenied, match=r"denied by a rule \(deny effect:pay\)"):
        await call(denying, PAY)


async def test_allowing_an_effect_for_the_session_allows_it_and_its_tool_on_the_site(
    home: Paths,
) -> None:
    gate, person, store = gate_for(home, choice=Choice.ALLOW_SESSION)
    await call(gate, SEND)
    assert {(r.tool, r.site) for r in gate.session_rules} == {
        ("browser_click", SITE),
        ("effect:send", SITE),
    }
    assert (await call(gate, SEND)).startswith("allowed by")
    assert (await call(gate, PAY)) == "approved once by the person"  # never a session grant
    assert len(person.requests) == 2  # paying asked again: sending was allowed, not paying
    assert store.current.policy_rules == []


async def test_always_for_an_effect_is_saved_but_paying_is_only_ever_once(home: Paths) -> None:
    gate, _, store = gate_for(home, choice=Choice.ALLOW_ALWAYS)
    await call(gate, SEND)
    assert {(r.tool, r.site) for r in store.current.policy_rules} == {
        ("browser_click", SITE),
        ("effect:send", SITE),
    }
    assert await call(gate, PAY) == "approved once by the person"
    assert "effect:pay" not in {r.tool for r in store.current.policy_rules}


async def test_leaving_for_another_site_needs_the_tool_allowed_there(home: Paths) -> None:
    out = "http://localhost:8000/record?exfil=card-4242"
    gate, person, _ = gate_for(home, granted("browser_navigate"), choice=Choice.DENY)
    with pytest.raises(ApprovalDenied, match="denied by the person"):
        await call(gate, ROUTINE, tool="browser_navigate", leaving=out)
    assert person.requests[0].leaving == out  # the whole address, query included
    there, _, _ = gate_for(
        home, granted("browser_navigate"), granted("browser_navigate", "http://localhost:8000")
    )
    assert (await call(there, ROUTINE, tool="browser_navigate", leaving=out)).startswith("allowed")


async def test_headless_the_denial_says_what_would_happen_and_which_rule_allows_it(
    home: Paths,
) -> None:
    gate, _, _ = gate_for(home, granted(), headless=True)
    with pytest.raises(ApprovalDenied) as denied:
        await call(gate, PAY)
    message = plain(str(denied.value))
    assert "This call will probably PLACE AN ORDER OR PAY on https://shop.example" in message
    assert "in a form with card number field" in message
    assert f"`tabrelay policy set effect:pay allow --site {SITE}`" in message
    with pytest.raises(ApprovalDenied) as leaving:
        await call(gate, ROUTINE, leaving="https://evil.example/?d=1")
    assert "it goes to another site: https://evil.example/?d=1" in plain(str(leaving.value))
    assert "`tabrelay policy set browser_click allow --site https://evil.example`" in str(
        leaving.value
    )


def test_a_redirect_on_the_way_may_go_where_a_rule_or_the_plan_lets_the_tool_go(
    home: Paths,
) -> None:
    """What a server's redirect is judged by (``tools/state/interception.py``): there is no one to
    ask mid-flight, so only a rule, or the caller's plan, lets the call go on to that site."""
    elsewhere = "http://localhost:8000"
    gate, _, store = gate_for(home, granted("browser_navigate"))

    def may(client: str = "cursor", session: str | None = "s1") -> bool:
        return gate.may_go(client=client, session=session, tool="browser_navigate", site=elsewhere)

    assert not may()  # allowed on the shop only
    plan = gate.plans.start("cursor", "s1", PlanDraft("Compare prices", (elsewhere,)))
    assert may() and not may(session="s2") and not may(client="claude")
    gate.plans.revoke(plan.id)
    store.update(lambda s: s.policy_rules.append(granted("browser_navigate", elsewhere)))
    assert may(client="claude")
    store.update(
        lambda s: s.policy_rules.append(
            PolicyRule(tool="browser_navigate", decision="deny", site=elsewhere, client="claude")
        )
    )
    assert not may(client="claude") and may()
    gate.set_paused(True)
    assert not may()
