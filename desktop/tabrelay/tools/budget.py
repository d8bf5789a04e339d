"""The response budget (DESIGN §5): no tool result exceeds it; longer text ends with a marker.

The marker says how much was shown and how to get the rest, so an agent can continue with a
cursor or narrow its question instead of silently losing the end of the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tabrelay.tools.results import page_text

TRUNCATION_MARKER = "[truncated"
_MARKER_ROOM = 300
BOUNDARY_BYTES = 64  # the page text's boundary (``results.render``: two tags and an id)


@dataclass(frozen=True, slots=True)
class Fitted:
    kept: str  # the part of the text that fits
    truncated: bool
    kept_bytes: int  # how many bytes of the original text are in ``kept``
    marker: str = ""  # how much was shown and how to read on (Tabrelay's words)

    @property
    def text(self) -> str:
        return self.kept + self.marker

    def as_page(self, head: str = "") -> str:
        """``head`` and the part that fits as the page's words (``results.page_text``), then
        the marker as Tabrelay's."""
        return page_text(head + self.kept) + self.marker


def fit_text(text: str, budget_bytes: int, *, continuation: Callable[[int], str]) -> Fitted:
    """``text`` cut to ``budget_bytes`` (UTF-8) on a line or character boundary, plus a marker;
    room is kept for the boundary the page's words go in.

    ``continuation(kept_bytes)`` says how to read on, e.g. "call again with offset=48000" or
    "pass a selector to read one part".
    """
    encoded = text.encode("utf-8")
    budget_bytes -= BOUNDARY_BYTES
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
    return Fitted(cut, True, kept, marker)
