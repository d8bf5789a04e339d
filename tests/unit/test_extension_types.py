"""The extension's JavaScript type-checks as its own ``jsconfig.json`` asks (checkJs, strict,
Chrome's and Node's types): its code and its tests, in ``make test`` (before, ``npm run
typecheck`` in extension/ was optional, and its tests had drifted from it)."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.js import extension_type_errors

EXTENSION = Path(__file__).parents[2] / "extension"


def test_the_extension_and_its_tests_type_check() -> None:
    assert extension_type_errors(EXTENSION) == ""


def test_a_misused_chrome_api_in_the_extension_is_found(tmp_path: Path) -> None:
    copy = tmp_path / "extension"
    for part in ("src", "test"):
        shutil.copytree(EXTENSION / part, copy / part)
    shutil.copy(EXTENSION / "jsconfig.json", copy)
    badge = copy / "src" / "background" / "badge.js"
    badge.write_text(badge.read_text() + "\nchrome.tabs.reloadEverything();\n")
    found = extension_type_errors(copy)
    assert "badge.js" in found and "reloadEverything" in found, found
