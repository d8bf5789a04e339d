"""Text shown to the person from untrusted sources (agents, pages), made safe to read.

Agents choose tool arguments and pages choose their titles: either may hide what they are with
bidi overrides, zero-width or control characters, or odd spaces (THREATS A3). Everything such
a source wrote is shown through ``visible`` or ``arguments_text``, which spell those characters
out as ``\\uXXXX`` so what the person reads is what the agent sent.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

# Control, format (bidi controls, zero-width), surrogates, private use, unassigned, and line
# or paragraph separators. Ordinary spaces stay; other space characters are spelled out.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return category in _HIDDEN_CATEGORIES or (category == "Zs" and char != " ")


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every invisible or direction-changing character written as ``\\uXXXX``."""
    return "".join(
        char if (keep_newlines and char == "\n") or not _hidden(char) else _escape(char)
        for char in text
    )


def arguments_text(arguments: Any) -> str:
    """Tool arguments as indented JSON, every string in full, hidden characters spelled out.

    JSON already escapes C0 controls and newlines inside strings, so each value stays on its
    own lines and cannot push another out of view; the rest is spelled out by ``visible``.
    """
    text = json.dumps(arguments, indent=2, ensure_ascii=False, default=str, sort_keys=False)
    return visible(text, keep_newlines=True)


def one_line(text: str, limit: int = 200) -> str:
    """A short single-line form for table cells: hidden characters spelled out, then cut."""
    shown = visible(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
