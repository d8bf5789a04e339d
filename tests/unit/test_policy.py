"""The approval policy: defaults, precedence, expiry, client scoping, and what "always" offers."""

from __future__ import annotations

import pytest

from tabrelay.approval.policy import (
    NEVER_ALWAYS_TOOLS,
    READ_ONLY_TOOLS,
    default_decision,
    describe_rule,
    evaluate,
    offers_always,
)
from tabrelay.config.settings import PolicyRule

SITE = "https://shop.example"


def decide(
    rules: list[PolicyRule],
    tool: str = "browser_click",
    *,
    client: str = "cursor",
    origin: str | None = SITE,
    now: float = 1000.0,
) -> str:
    return evaluate(rules, client=client, tool=tool, origin=origin, now=now).decision


@pytest.mark.parametrize("tool", sorted(READ_ONLY_TOOLS))
def test_read_only_tools_are_allowed_by_default(tool: str) -> None:
    assert decide([], tool) == "allow"


@pytest.mark.parametrize(
    "tool",
    [
        "browser_click",
        "browser_type",
        "browser_navigate",
        "browser_new_tab",
        "browser_close_tab",
        "browser_evaluate",
        "browser_upload_file",
        "browser_cdp",
        "some_future_tool",
    ],
)
def test_acting_and_unknown_tools_ask_by_default(tool: str) -> None:
    assert default_decision(tool) == "ask"
    assert decide([], tool) == "ask"


def test_always_is_never_offered_for_evaluate_upload_and_cdp() -> None:
    assert {"browser_evaluate", "browser_upload_file", "browser_cdp"} == NEVER_ALWAYS_TOOLS
    assert not any(offers_always(t) for t in NEVER_ALWAYS_TOOLS)
    assert offers_always("browser_click")


def test_the_most_specific_rule_wins() -> None:
    rules = [
        PolicyRule(tool="*", decision="deny"),
        PolicyRule(tool="browser_click", decision="ask"),
        PolicyRule(tool="browser_click", decision="allow", site=SITE),
        PolicyRule(tool="browser_click", decision="deny", site=SITE, client="cursor"),
    ]
    assert decide(rules) == "deny"  # tool + site + client
    assert decide(rules, client="claude") == "allow"  # tool + site
    assert decide(rules, origin="https://other.example") == "ask"  # tool only
    assert decide(rules, "browser_type") == "deny"  # the wildcard


def test_a_named_tool_beats_a_site_wide_wildcard() -> None:
    rules = [
        PolicyRule(tool="*", decision="allow", site=SITE),
        PolicyRule(tool="browser_evaluate", decision="ask"),
    ]
    assert decide(rules, "browser_evaluate") == "ask"
    assert decide(rules, "browser_click") == "allow"


def test_equally_specific_rules_fail_closed() -> None:
    rules = [
        PolicyRule(tool="browser_click", decision="allow", site=SITE),
        PolicyRule(tool="browser_click", decision="deny", site=SITE),
    ]
    assert decide(rules) == "deny"


def test_expired_rules_no_longer_apply() -> None:
    rules = [PolicyRule(tool="browser_click", decision="allow", expires_at=999.0)]
    assert decide(rules, now=998.0) == "allow"
    assert decide(rules, now=999.0) == "ask"


def test_site_rules_compare_normalized_origins_and_need_a_tab() -> None:
    rules = [PolicyRule(tool="browser_click", decision="allow", site="HTTPS://Shop.Example/")]
    assert decide(rules, origin="https://shop.example") == "allow"
    assert decide(rules, origin=None) == "ask"


def test_client_scoped_rules_only_match_that_client() -> None:
    rules = [PolicyRule(tool="browser_click", decision="allow", client="claude-code")]
    assert decide(rules, client="claude-code") == "allow"
    assert decide(rules, client="cursor") == "ask"


def test_verdicts_and_rules_describe_themselves() -> None:
    rule = PolicyRule(tool="browser_click", decision="allow", site=SITE, client="cursor")
    assert describe_rule(rule) == f"allow browser_click on {SITE} for cursor"
    verdict = evaluate([rule], client="cursor", tool="browser_click", origin=SITE)
    assert verdict.rule == rule
    assert evaluate([], client="x", tool="browser_click", origin=None).describe() == "default (ask)"
