"""``editor_text.found``: the code editors in the answer of the page's world (any JSON value the
page makes it give). An entry of another shape is left out, never an error: the snapshot then
shows that editor as the outline reads it. The script itself runs on real editors in
tests/e2e (test_agent_editors.py, test_snapshot_one_look.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tabrelay.tools.page import editor_text
from tabrelay.tools.page.outline import EditorText

GOOD = [[0, 1, 2], [0, 1, "s", 0], "select 1", True, "SQL query"]


def test_each_editor_says_where_it_is_and_what_it_holds() -> None:
    (editor,) = editor_text.found([GOOD])
    assert editor == editor_text.CodeEditor(
        [0, 1, 2], [0, 1, "s", 0], "select 1", True, "SQL query"
    )
    assert editor_text.paths([editor]) == [[[0, 1, 2], [0, 1, "s", 0]]]
    assert editor.held(41, 40) == (41, EditorText("select 1", True, 40, "SQL query"))
    assert editor_text.found([[[0, "f", 0, 3], [0, "f", 0], "x", "yes", None]]) == [
        editor_text.CodeEditor([0, "f", 0, 3], [0, "f", 0], "x", False, "")
    ]


@pytest.mark.parametrize(
    "value",
    [None, 7, "editors", {"0": GOOD}, [], [None], [GOOD[:4]], [[*GOOD, "more"]]],
)
def test_an_answer_of_another_shape_finds_no_editor(value: Any) -> None:
    assert editor_text.found(value) == []


@pytest.mark.parametrize(
    "path",
    [
        [],  # the document itself
        None,
        "0/1",
        [0, -1],
        [0, 1.5],
        [0, True],  # a bool is no index
        [0, "x"],
        [0, 2**31],
        [0, [1]],
        [0] * (editor_text.MAX_STEPS + 1),
    ],
)
def test_a_path_that_leads_nowhere_leaves_its_editor_out(path: Any) -> None:
    assert editor_text.found([[path, GOOD[1], *GOOD[2:]]]) == []
    assert editor_text.found([[GOOD[0], path, *GOOD[2:]]]) == []
    assert len(editor_text.found([[path, GOOD[1], *GOOD[2:]], GOOD])) == 1  # the others stay


def test_editors_past_the_bound_are_left_out() -> None:
    assert len(editor_text.found([GOOD] * (editor_text.MAX_EDITORS + 7))) == editor_text.MAX_EDITORS
