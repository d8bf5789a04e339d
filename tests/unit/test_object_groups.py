"""Page objects a tool asks for live in its call's object group (``ToolContext.objects``),
released when the call ends however it ends; a group shared by name between calls lets one
call free another's objects, and a release awaited by the tool itself is skipped by a cancel."""

from __future__ import annotations

import ast
from pathlib import Path

import tabrelay.tools

TOOLS = Path(tabrelay.tools.__file__).parent


def fixed_groups(source: str) -> list[int]:
    """Lines where a CDP command names its object group by a string or a module constant."""
    tree = ast.parse(source)
    constants = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    return [
        value.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant)
        and key.value == "objectGroup"
        and (
            isinstance(value, ast.Constant | ast.JoinedStr)
            or (isinstance(value, ast.Name) and value.id in constants)
        )
    ]


def test_every_tool_asks_for_page_objects_in_its_calls_group() -> None:
    found = {
        str(path.relative_to(TOOLS)): lines
        for path in sorted(TOOLS.rglob("*.py"))
        if (lines := fixed_groups(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_finder_finds_a_fixed_group() -> None:
    source = '_GROUP = "g"\nx = {"objectGroup": _GROUP}\ny = {"objectGroup": "h"}\n'
    assert fixed_groups(source) == [2, 3]
    assert fixed_groups('x = {"objectGroup": ctx.objects}\n') == []
