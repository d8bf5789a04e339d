"""The response budget (DESIGN §5): no tool result exceeds it; longer text ends with a marker.

The marker says how much was shown and how to get the rest, so an agent can continue with a
cursor or narrow its question instead of silently losing the end of the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

TRUNCATION_MARKER = "[truncated"
_MARKER_ROOM = 300


@dataclass(frozen=True, slots=True)
class Fitted:
    text: str
    truncated: bool
    kept_bytes: int  # how many bytes of the original text are in ``text``


def fit_text(text: str, budget_bytes: int, *, continuation: Callable[[int], str]) -> Fitted:
    """``text`` cut to ``budget_bytes`` (UTF-8) on a line or character boundary, plus a marker.

    ``continuation(kept_bytes)`` says how to read on, e.g. "call again with offset=48000" or
    "pass a selector to read one part".
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= budget_bytes:
        return Fitted(text, False, len(encoded))
    room = max(0, budget_bytes - _MARKER_ROOM)
    cut = encoded[:room].decode("utf-8", errors="ignore")
    newline = cut.rfind("\n")
    if newline > room * 0.8:
        cut = cut[: newline + 1]
    kept = len(cut.encode("utf-8"))
    marker = (
        f"\n{TRUNCATION_MARKER}: showed {kept:,} of {len(encoded):,} bytes; {continuation(kept)}]"
    )
    return Fitted(cut + marker, True, kept)
