"""Errors carry codes callers decide by, and every code has a home: the wire's in
``protocol.constants.ErrorCode``, the app's own in an enum beside the code that raises them
(``tools.acting.loading.LoadCode``). No ``CommandFailed`` is raised with a loose string."""

from __future__ import annotations

import ast
from pathlib import Path

import tabrelay
from tabrelay.errors import CommandFailed
from tabrelay.protocol.constants import ErrorCode
from tabrelay.tools.acting.loading import LoadCode

PACKAGE = Path(tabrelay.__file__).parent


def loose_codes(source: str) -> list[int]:
    """The lines where ``CommandFailed(..., code="...")`` names its code by a bare string."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == CommandFailed.__name__
        for keyword in node.keywords
        if keyword.arg == "code"
        and isinstance(keyword.value, ast.Constant)
        and isinstance(keyword.value.value, str)
    ]


def test_no_command_failure_names_its_code_by_a_loose_string() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := loose_codes(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_finder_finds_a_loose_code() -> None:
    assert loose_codes('raise CommandFailed("no", code="net_error")\n') == [1]
    assert loose_codes("raise CommandFailed('no', code=LoadCode.NET_ERROR)\n") == []


def test_the_apps_own_codes_are_not_wire_codes() -> None:
    assert not {str(c) for c in LoadCode} & {str(c) for c in ErrorCode}
