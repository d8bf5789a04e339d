"""A recipe's step runs the tool an agent would call, looked up in the catalog by name and its
arguments validated as an agent's call of it is (tools/groups/recipes.py): every kind of step, and
only tools a recipe repeats (``ToolSpec.recorded``). End to end: tests/e2e/test_recipes*.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from tabrelay.errors import ToolError
from tabrelay.recipes.model import Action, Locator, Step
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.context import ToolResult
from tabrelay.tools.groups import recipes

STEPS = {
    "navigate": Step(action="navigate", url="https://example.com/"),
    "click": Step(action="click", target=Locator(css="#go"), double=True, modifiers=["Shift"]),
    "type": Step(action="type", target=Locator(css="#q"), text="hello", submit=True),
    "select": Step(action="select", target=Locator(css="#size"), options=["Large"]),
    "check": Step(action="check", target=Locator(css="#terms"), checked=True),
    "press": Step(action="press", key="Enter", repeat=2),
    "hover": Step(action="hover", target=Locator(css="#menu")),
    "dialog": Step(action="dialog", accept=True, text="yes"),
    "expect_text": Step(action="expect_text", text="Done"),
}


class Called:
    """The catalog's tools with their real parameter models; running one only notes the call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, BaseModel]] = []

    def __call__(self, name: str) -> Any:
        async def run(ctx: Any, params: BaseModel) -> ToolResult:
            self.calls.append((name, params))
            return ToolResult("")

        return SimpleNamespace(params=BY_NAME[name].params, run=run)


@pytest.fixture
def ctx(monkeypatch: pytest.MonkeyPatch) -> Any:
    async def find(ctx: Any, locator: Locator, *, timeout: float) -> str:
        return "e7"

    async def shown(ctx: Any, timeout: float) -> None:
        return None

    monkeypatch.setattr(recipes, "find", find)
    monkeypatch.setattr(recipes, "_dialog_shown", shown)
    return SimpleNamespace(state=SimpleNamespace(log=SimpleNamespace(dialog=None)))


def test_the_steps_cover_every_kind() -> None:
    assert set(STEPS) == set(get_args(Action))


@pytest.mark.parametrize("kind", sorted(STEPS))
async def test_each_kind_of_step_runs_a_recorded_tool_with_its_validated_parameters(
    ctx: Any, kind: str
) -> None:
    called = Called()
    await recipes._step(ctx, called, STEPS[kind], 5.0, secret=False)
    [(name, params)] = called.calls
    assert BY_NAME[name].recorded, name
    assert isinstance(params, BY_NAME[name].params)
    if STEPS[kind].target is not None:
        assert dict(params).get("ref") or dict(params)["fields"][0].ref == "e7"


async def test_the_step_says_what_it_did_in_the_tools_own_terms(ctx: Any) -> None:
    called = Called()
    await recipes._step(ctx, called, STEPS["click"], 5.0, secret=False)
    await recipes._step(ctx, called, STEPS["type"], 5.0, secret=True)
    await recipes._step(ctx, called, STEPS["press"], 5.0, secret=False)
    (_, click), (_, typed), (_, pressed) = called.calls
    assert {"ref": "e7", "double": True, "modifiers": ["Shift"]}.items() <= dict(click).items()
    assert {"ref": "e7", "text": "hello", "submit": True, "secret": True}.items() <= dict(
        typed
    ).items()
    assert {"key": "Enter", "repeat": 2, "ref": None}.items() <= dict(pressed).items()


@pytest.mark.parametrize(
    "odd",
    [
        Step.model_construct(action="select", target=Locator(css="#s"), options=[]),
        Step.model_construct(action="press", target=None, key="Enter", repeat=99),
        Step.model_construct(action="navigate", url=None, history=None),
    ],
    ids=["no option", "pressed 99 times", "nowhere to go"],
)
async def test_a_step_its_tool_refuses_fails_saying_why_and_runs_nothing(
    ctx: Any, odd: Step
) -> None:
    """A recipe file edited by hand, or a parameter's value the tool's field takes not: the step is
    refused as an agent's call of the tool would be, as a step failure (a ToolError the run
    reports with the step's number), never an internal error."""
    called = Called()
    with pytest.raises(ToolError, match="refuses the step's arguments"):
        await recipes._step(ctx, called, odd, 5.0, secret=False)
    assert called.calls == []
