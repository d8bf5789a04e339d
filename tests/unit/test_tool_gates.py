"""The gates a call passes are fields of its tool's spec (tools/catalog.py), named by every
tool: a tool that leaves one out is not a tool, and each gate agrees with what the tool is.
Where they are applied: endpoint/calls.py (dialog, blocked site, effect, touches, recording)
and approval/ (read-only defaults, plans, standing grants), from the spec alone."""

from __future__ import annotations

import inspect
from typing import Any, get_args

import pytest

from tabrelay.approval.plans import TOOLS_OF
from tabrelay.approval.policy import NEVER_ALWAYS_TOOLS, READ_ONLY_TOOLS
from tabrelay.tools import catalog
from tabrelay.tools.catalog import BY_NAME, TOOLS, Judged, _spec
from tabrelay.tools.context import Action, Params, ToolContext, ToolResult

GATES = ("read_only", "while_dialog", "leaves_page", "judged", "touches", "recorded", "plan",
         "always")  # fmt: skip
EVERY_GATE: dict[str, Any] = {
    "read_only": True, "while_dialog": False, "leaves_page": False, "judged": "nothing",
    "touches": None, "recorded": False, "plan": None, "always": True,
}  # fmt: skip


async def _run(ctx: ToolContext, params: Any) -> ToolResult:
    return ToolResult("")


def test_each_gate_is_a_field_of_the_spec_that_every_tool_must_name() -> None:
    signature = inspect.signature(_spec)
    for gate in GATES:
        assert signature.parameters[gate].default is inspect.Parameter.empty, gate
        assert gate in catalog.ToolSpec.__dataclass_fields__, gate
    _spec("browser_x", "X", "x", Params, _run, **EVERY_GATE)  # all named: a tool
    for gate in GATES:
        lacking = {k: v for k, v in EVERY_GATE.items() if k != gate}
        with pytest.raises(TypeError, match=gate):
            _spec("browser_x", "X", "x", Params, _run, **lacking)


def test_each_tools_gates_agree_with_what_it_is() -> None:
    for spec in TOOLS:
        assert spec.judged in get_args(Judged), spec.name
        assert spec.plan is None or spec.plan in get_args(Action), spec.name
        if spec.read_only:  # a read needs no plan, is judged as nothing, and repeats nothing
            assert (spec.plan, spec.judged, spec.destructive) == (None, "nothing", False)
        if spec.leaves_page:  # it takes a tab away, acting on no element of it
            assert spec.target == "tab" and spec.touches is None, spec.name
        if spec.judged not in ("nothing", "dialog", "recipe", "page_tool", "upload"):
            assert spec.touches is not None, f"{spec.name} judges an element it names"
    # The name sets the approval keeps are the spec's, read once.
    assert {s.name for s in TOOLS if s.read_only} == READ_ONLY_TOOLS
    assert {s.name for s in TOOLS if not s.always} == NEVER_ALWAYS_TOOLS
    assert {t for tools in TOOLS_OF.values() for t in tools} == {s.name for s in TOOLS if s.plan}


def test_the_gates_that_stop_a_call_are_where_the_person_expects_them() -> None:
    # While a dialog blocks the page, only answering it and tab management work on the tab.
    on_a_tab = {s.name for s in TOOLS if s.target == "tab" and s.while_dialog}
    assert on_a_tab == {"browser_handle_dialog", "browser_close_tab", "browser_activate_tab"}
    # On a tab showing a blocked site, only what takes the tab away.
    assert {s.name for s in TOOLS if s.leaves_page} == {
        "browser_navigate", "browser_close_tab", "browser_activate_tab"}  # fmt: skip
    # Code and files are never granted for good from a question.
    assert {"browser_evaluate", "browser_upload_file", "browser_cdp"} == NEVER_ALWAYS_TOOLS
    assert BY_NAME["browser_run_recipe"].judged == "recipe"
