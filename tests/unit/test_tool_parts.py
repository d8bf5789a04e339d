"""Pure parts of the tools: keys, the response budget, upload paths, markdown and text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tabrelay.errors import ToolError
from tabrelay.tools.acting.keys import key_for, parse_combo
from tabrelay.tools.budget import TRUNCATION_MARKER, fit_text
from tabrelay.tools.groups.content import to_markdown, to_text
from tabrelay.tools.groups.forms import allowed_file


@pytest.mark.parametrize(
    ("combo", "modifiers", "key", "code", "key_code", "text"),
    [
        ("Enter", 0, "Enter", "Enter", 13, "\r"),
        ("esc", 0, "Escape", "Escape", 27, ""),
        ("a", 0, "a", "KeyA", 65, "a"),
        ("Control+a", 2, "a", "KeyA", 65, "a"),
        ("Shift+Tab", 8, "Tab", "Tab", 9, ""),
        ("ctrl+shift+K", 10, "K", "KeyK", 75, "K"),
        ("Meta+Enter", 4, "Enter", "Enter", 13, "\r"),
        ("F5", 0, "F5", "F5", 116, ""),
        ("space", 0, " ", "Space", 32, " "),
        ("Control++", 2, "+", "", 0, "+"),
        ("/", 0, "/", "Slash", 191, "/"),
    ],
)
def test_key_combinations(
    combo: str, modifiers: int, key: str, code: str, key_code: int, text: str
) -> None:
    mask, parsed = parse_combo(combo)
    assert (mask, parsed.key, parsed.code, parsed.key_code, parsed.text) == (
        modifiers,
        key,
        code,
        key_code,
        text,
    )


@pytest.mark.parametrize(
    ("combo", "message"),
    [
        ("Hyper+q", "'Hyper' is not a modifier"),
        ("Frobnicate", "unknown key 'Frobnicate'"),
        ("", "say which key to press"),
    ],
)
def test_bad_keys_say_what_works(combo: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_combo(combo)


def test_unknown_single_character_still_types() -> None:
    assert key_for("é").text == "é"


def test_short_text_is_left_alone() -> None:
    fitted = fit_text("hello", 100, continuation=lambda kept: "never")
    assert (fitted.text, fitted.truncated, fitted.kept_bytes) == ("hello", False, 5)


def test_long_text_is_cut_on_a_line_within_the_budget_with_a_marker() -> None:
    text = "".join(f"line {n:04} ü\n" for n in range(5000))
    fitted = fit_text(text, 4000, continuation=lambda kept: f"offset={kept}")
    assert fitted.truncated
    assert len(fitted.text.encode()) <= 4000
    body, marker = fitted.text.split(f"\n{TRUNCATION_MARKER}")
    assert body.endswith("\n") and body.splitlines()[-1].startswith("line ")
    assert (
        f"showed {fitted.kept_bytes:,} of {len(text.encode()):,} bytes; offset={fitted.kept_bytes}]"
        in marker
    )
    assert text.encode()[: fitted.kept_bytes].decode() == body


def test_uploads_come_only_from_allowed_folders(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    good = allowed / "sub" / "a.txt"
    good.write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    os.symlink(tmp_path / "outside.txt", allowed / "link.txt")
    assert allowed_file(str(good), [str(allowed)]) == good.resolve()
    cases = {
        str(allowed / ".." / "outside.txt"): "outside the folders",
        str(allowed / "link.txt"): "outside the folders",  # a symlink out is still out
        "a.txt": "not an absolute path",
        str(allowed / "sub"): "is not a file",
    }
    for path, reason in cases.items():
        with pytest.raises(ToolError, match=reason):
            allowed_file(path, [str(allowed)])
    with pytest.raises(ToolError, match="no folder is allowed"):
        allowed_file(str(good), [])


HTML = (
    "<h1>Title</h1><p>Some <strong>bold</strong> and <a href='https://x.test/a'>a link</a>.</p>"
    "<ul><li>one</li><li>two</li></ul><table><tr><th>A</th><th>B</th></tr>"
    "<tr><td>1</td><td>2</td></tr></table><p>Line<br>break</p><img src='p.png' alt='A cat'>"
)


def test_markdown_keeps_structure() -> None:
    assert to_markdown(HTML) == (
        "# Title\n\nSome **bold** and [a link](https://x.test/a).\n\n- one\n- two\n\n"
        "| A | B |\n| --- | --- |\n| 1 | 2 |\n\nLine\nbreak\n\n![A cat](p.png)\n"
    )


def test_text_is_plain_with_one_block_per_line() -> None:
    assert to_text(HTML) == (
        "Title\n\nSome bold and a link.\n\none\n\ntwo\n\nA B\n\n1 2\n\nLine\nbreak\n"
        "[image: A cat]\n"
    )
