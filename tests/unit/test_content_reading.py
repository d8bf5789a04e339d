"""browser_get_content's conversions and parameters: what an agent reads of code and names."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tabrelay.tools.groups.content import ContentParams, to_markdown, to_text

CODE = "<pre><code>def copy(src, dst):\n    if src:\n\n        return dst\n</code></pre>"


def test_markdown_keeps_identifiers_as_they_are_written() -> None:
    markdown = to_markdown("<dt>shutil.copytree(src, ignore_dangling_symlinks=False)</dt>")
    assert markdown == "shutil.copytree(src, ignore_dangling_symlinks=False)\n"


def test_code_keeps_its_indentation_and_blank_lines_in_markdown_and_text() -> None:
    page = f"<p>Before   it.</p>{CODE}<p>After.</p>"
    assert to_markdown(page) == (
        "Before it.\n\n```\ndef copy(src, dst):\n    if src:\n\n        return dst\n```\n\nAfter.\n"
    )
    assert (
        to_text(page)
        == "Before it.\n\ndef copy(src, dst):\n    if src:\n\n        return dst\n\nAfter.\n"
    )


def test_a_part_is_a_ref_or_a_selector_never_both() -> None:
    assert ContentParams(ref="e12").ref == "e12"
    with pytest.raises(ValidationError, match="give 'ref' or 'selector'"):
        ContentParams(ref="e12", selector="main")
