"""Each control of the effect pages (``tests/e2e/pages/effects``) acted on by an agent under a
site grant, and whether Tabrelay held it back for the person (issue 25).

Every control names what it does in ``data-expect`` (an effect kind of ``approval.effects``,
``routine``, or ``leave`` for a link to another site) and how an agent uses it in
``data-action`` (click by default; ``type`` with ``data-text``, ``enter``, ``select`` with
``data-value``). The tests read those over their own CDP connection, never through Tabrelay.
The person's answer is scripted: every question is denied and kept (``ApprovalRequest``, with
the effect the dialog shows); a call that runs, runs (the pages keep every click and submit
from going anywhere).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from e2e.agent import Agent
from e2e.harness import AppUnderTest, Page
from support.harness import ScriptedToolApprover
from support.mcp import text_of
from tabrelay.approval.effects import Kind
from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.approval.policy import normalize_origin
from tabrelay.config.settings import PolicyRule
from tabrelay.tools.state.guard import origin_of

GRANTED = (
    "browser_click", "browser_type", "browser_press_key", "browser_select_option",
    "browser_fill_form",
)  # fmt: skip
CONTROLS = """
[...document.querySelectorAll('[data-expect]')].map((el) => ({
  id: el.id, expect: el.dataset.expect, action: el.dataset.action || 'click',
  text: el.dataset.text || '', value: el.dataset.value || '',
}))
"""
PAGES = ("shop", "social", "account", "signin", "bank", "languages", "forms")


@dataclass(frozen=True)
class Outcome:
    page: str
    control: str
    expected: str  # data-expect
    asked: bool
    decided: str  # the kind the message named, "leave", or "routine" when it ran
    message: str

    @property
    def consequential(self) -> bool:
        return self.expected != "routine"

    @property
    def right(self) -> bool:
        return self.asked == self.consequential


async def grant_site(app: AppUnderTest, url: str, *, tools: tuple[str, ...] = GRANTED) -> None:
    """What "Always allow this tool on this site" writes, for each of ``tools`` on the page's
    site."""
    origin = origin_of(url)
    assert origin is not None
    site = normalize_origin(origin)

    def grant(settings: object) -> None:
        rules = settings.policy_rules  # type: ignore[attr-defined]
        rules += [PolicyRule(tool=tool, decision="allow", site=site) for tool in tools]

    await asyncio.to_thread(app.harness.core.settings_store.update, grant)


async def judge_page(
    app: AppUnderTest, agent: Agent, page: Page, tab: int, name: str
) -> list[Outcome]:
    """Act on each control of the page the tab shows, in order, the person denying whatever
    they are asked."""
    person = app.harness.tool_approver
    answer, person.answer = person.answer, Choice.DENY
    try:
        return [await _judge(agent, person, tab, name, c) for c in await page.evaluate(CONTROLS)]
    finally:
        person.answer = answer


async def _judge(
    agent: Agent, person: ScriptedToolApprover, tab: int, name: str, control: dict[str, str]
) -> Outcome:
    selector = f"#{control['id']}"
    action = control["action"]
    if action == "type":
        arguments = {"selector": selector, "text": control["text"]}
        tool = "browser_type"
    elif action == "enter":
        arguments, tool = {"selector": selector, "key": "Enter"}, "browser_press_key"
    elif action == "select":
        arguments = {"selector": selector, "values": [control["value"]]}
        tool = "browser_select_option"
    else:
        arguments, tool = {"selector": selector}, "browser_click"
    before = len(person.requests)
    result = await agent.call(tool, tab_id=tab, **arguments)
    message = text_of(result)
    asked = len(person.requests) > before
    assert asked or not result.is_error, f"{name} {selector}: {message}"
    request = person.requests[-1] if asked else None
    return Outcome(name, control["id"], control["expect"], asked, _decided(request), message)


def _decided(request: ApprovalRequest | None) -> str:
    """What the dialog said the call would do: its effect, or leaving for another site."""
    if request is None:
        return "routine"
    if request.asks_for_effect:
        assert request.effect is not None
        return request.effect.kind.value
    return "leave" if request.leaving is not None else Kind.ROUTINE.value
