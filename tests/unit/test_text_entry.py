"""When a field holds what was asked, and what the error says when it does not
(tools/acting/text_entry.py). The scripts are checked with the others (test_page_scripts_js.py)."""

from __future__ import annotations

import pytest

from tabrelay.tools.acting.text_entry import mismatch, same_text
from tabrelay.tools.results import plain


@pytest.mark.parametrize(
    ("held", "wanted", "kind", "single", "same"),
    [
        ("select 1\nfrom t", "select 1\nfrom t", "CodeMirror 5", False, True),
        ("select 1\r\nfrom t", "select 1\nfrom t", "Monaco", False, True),
        ("select 1\n    from t", "select 1\nfrom t", "CodeMirror 6", False, False),
        ("select 1", "select 1 ", "field", False, False),
        ("one line", "one\nline", "field", True, True),
        ("Dear Ada,\n\nthe engine", "Dear Ada,\nthe engine", "ProseMirror", False, True),
        ("Looks\u00a0right", "Looks right", "contenteditable", False, True),
        ("Looks right", "Looks left", "contenteditable", False, False),
    ],
)
def test_what_counts_as_holding_the_text(
    held: str, wanted: str, kind: str, single: bool, same: bool
) -> None:
    assert same_text(held, wanted, kind=kind, single=single) is same


def test_a_field_holding_something_else_says_what_and_why() -> None:
    said = plain(mismatch("e5 (input#zip)", "12345", "1234567", secret=None, max_length=5))
    assert said == (  # what the field holds is the page's (marked as such, taken off here)
        "e5 (input#zip) holds '12345' after typing, not '1234567'; it takes at most 5 "
        "characters; the page changed or refused part of it"
    )


def test_a_secret_field_holding_something_else_never_shows_its_text() -> None:
    said = mismatch("e2 (input#pw)", "hunter", "hunter2-pw", secret="password", max_length=6)
    assert "hunter" not in said
    assert said == (
        "e2 (input#pw) holds 6 characters after typing, not the 10 asked for; it takes at most "
        "6 characters"
    )


def test_long_texts_are_quoted_short() -> None:
    said = mismatch("e1 (textarea)", "x" * 500, "y" * 500, secret=None, max_length=-1)
    assert len(said) < 300 and "…" in said
