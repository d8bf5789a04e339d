"""``page_looks`` hands each look its own share of the one answer, and a reshaped answer (which
only the page's own code can cause) fails the looks: the secret fields' look then fails closed.
The scripts themselves run in real pages in tests/e2e/test_snapshot_one_look.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tabrelay.tools import editor_text, page_looks, secret_fields
from tabrelay.tools.context import PageElements
from tabrelay.tools.outline import EditorText

LOOKS = 2  # secret fields, then code editors, as the snapshot asks


def shares(nodes: dict[int, int], facts: object) -> list[PageElements]:
    return page_looks._shares(PageElements(nodes, facts), LOOKS)


def test_each_look_gets_its_own_elements_indexed_from_zero_and_its_own_facts() -> None:
    secrets, editors = shares(
        {0: 11, 1: 12, 2: 21, 3: 22},
        [
            {"count": 2, "facts": ["password", "card detail"]},
            {"count": 2, "facts": [["select 1", True, "SQL"]]},
        ],
    )
    assert secret_fields.read_secrets(secrets) == {11: "password", 12: "card detail"}
    assert editor_text.read_texts(editors) == {21: EditorText("select 1", True, 22, "SQL")}


def test_a_look_that_threw_fails_alone() -> None:
    secrets, editors = shares(
        {0: 21, 1: 22}, [{"failed": "Error: not for you"}, {"count": 2, "facts": [["x", 1, ""]]}]
    )
    assert secrets.failed == "Error: not for you"
    assert secret_fields.read_secrets(secrets) is None  # fail closed
    assert editor_text.read_texts(editors) == {21: EditorText("x", True, 22, "")}
    secrets, editors = shares({0: 11}, [{"count": 1, "facts": ["password"]}, {"failed": "no"}])
    assert secret_fields.read_secrets(secrets) == {11: "password"}
    assert editor_text.read_texts(editors) == {}


@pytest.mark.parametrize(
    ("nodes", "facts"),
    [
        ({}, "not a list"),
        ({}, [{"count": 0, "facts": []}]),  # one answer for two looks
        ({0: 11}, [{"count": "1", "facts": ["password"]}, {"count": 0, "facts": []}]),
        ({0: 11}, [{"count": True, "facts": ["password"]}, {"count": 0, "facts": []}]),
        ({0: 11, 5: 12}, [{"count": 1, "facts": ["password"]}, {"count": 0, "facts": []}]),
        ({0: 11}, [["password"], {"count": 0, "facts": []}]),
    ],
)
def test_a_reshaped_answer_hides_every_value_and_reads_no_editor(
    nodes: dict[int, int], facts: object
) -> None:
    secrets, editors = shares(nodes, facts)
    assert secret_fields.read_secrets(secrets) is None
    assert editor_text.read_texts(editors) == {}


def test_secret_kinds_that_do_not_match_their_fields_hide_every_value() -> None:
    secrets, _ = shares(
        {0: 11, 1: 12}, [{"count": 2, "facts": ["password"]}, {"count": 0, "facts": []}]
    )
    assert secret_fields.read_secrets(secrets) is None
    assert secret_fields.read_secrets(PageElements({}, None)) == {}
    assert secret_fields.read_secrets(PageElements({}, ["password"])) is None


def test_the_looks_and_the_script_that_runs_them_together_parse(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "node is not installed; make test installs it"
    together = page_looks.script(secret_fields.LOOK, editor_text.LOOK)
    for index, script in enumerate((secret_fields.LOOK, editor_text.LOOK, together)):
        source = tmp_path / f"script{index}.js"
        source.write_text(f"const f = ({script.strip()});\n")
        checked = subprocess.run(
            [node, "--check", str(source)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stderr
