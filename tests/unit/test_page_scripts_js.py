"""Tabrelay's in-page code is JavaScript files (tools/scripts/*.js, read once by ``script``):
each file is used and parses, and every script a module composes from them (another script or
a value put in) parses as the page gets it, checked by node. Their pure functions have unit
tests under ``node --test`` (tests/page_scripts/); the scripts run in real Chromium in e2e."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import tabrelay
import tabrelay.tools
from support.js import type_errors, unparsable
from tabrelay.tools import scripts
from tabrelay.tools.groups.handoff import BANNER_ATTRIBUTE, banner_source
from tabrelay.tools.scripts import fill, script

FOLDER = Path(scripts.__file__).parent
FILES = sorted(path.name for path in FOLDER.glob("*.js"))
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{3,}\b")  # where a module puts something in


def marker(name: str) -> str:
    """A line of the file that its module's composing leaves as it is: its longest without a
    placeholder."""
    lines = [line.strip() for line in (FOLDER / name).read_text().splitlines()]
    return max((line for line in lines if not PLACEHOLDER.search(line)), key=len)


def composed() -> dict[str, str]:
    """Every module-level string of the tools package that holds a script file's text."""
    markers = [marker(name) for name in FILES]
    found = {}
    for info in pkgutil.walk_packages(tabrelay.tools.__path__, "tabrelay.tools."):
        module = importlib.import_module(info.name)
        for attribute, value in vars(module).items():
            if isinstance(value, str) and any(line in value for line in markers):
                found[f"{info.name}.{attribute}"] = value
    return found


def test_every_file_is_used_and_every_use_names_a_file() -> None:
    package = Path(tabrelay.__file__).parent
    used = {
        name
        for path in package.rglob("*.py")
        for name in re.findall(r'\bscript\("([^"]+)"\)', path.read_text())
    }
    assert used == set(FILES)
    assert len(FILES) >= 40


def test_a_script_is_read_once_and_a_missing_one_is_a_clear_error() -> None:
    assert script("outline.js") is script("outline.js")
    with pytest.raises(FileNotFoundError):
        script("no_such_script.js")


def test_every_file_parses_as_javascript() -> None:
    assert unparsable({name: (FOLDER / name).read_text() for name in FILES}) == {}


def test_every_script_as_composed_parses_and_every_file_is_in_one() -> None:
    found = composed()
    assert unparsable(found) == {}
    held = {name for name in FILES if any(marker(name) in value for value in found.values())}
    assert held == set(FILES)
    assert "tabrelay.tools.page.page_outline.OUTLINE" in found


def test_every_script_as_composed_type_checks(tmp_path: Path) -> None:
    """tsc, with the DOM's types: a misspelt DOM call, a name that is not there, a wrong
    argument fail here; the scripts carry JSDoc types where the DOM's are too loose."""
    assert type_errors(composed(), tmp_path) == ""


def test_the_type_check_sees_a_misspelt_dom_call(tmp_path: Path) -> None:
    said = type_errors({"wrong": "(el) => document.querySelectr('a') && missingName"}, tmp_path)
    assert "querySelectr" in said and "missingName" in said


def test_the_check_sees_a_broken_script() -> None:
    checked = {"arrow": "(a) => a", "defines": "const x = 1;\n", "broken": "function ( {"}
    assert set(unparsable(checked)) == {"broken"}


def test_values_are_put_in_once_and_one_naming_a_placeholder_stays_as_it_is() -> None:
    assert fill("a = A_B; b = C_D; A_BC;", A_B='"C_D"', C_D="2") == 'a = "C_D"; b = 2; A_BC;'
    reason = 'ATTRIBUTE_NAME REASON_TEXT %(reason)s 100%% "</script>'
    source = banner_source(reason)
    assert source.count(json.dumps(reason)) == 1
    assert f"const ATTRIBUTE = {json.dumps(BANNER_ATTRIBUTE)};" in source
    assert unparsable({"banner": source}) == {}
