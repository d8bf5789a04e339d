"""The one place a tool's result is put together (issue 27; Playwright's ``response.ts`` does
the same for its tools).

A tool says what happened (``ToolResult``): its own sentence, and what the response adds to it —
the page's words it read (``Reading``), where an acting call left the tab (``Outcome``), or the
dialog the call opened. ``respond`` writes them in a fixed order (the tool's sentence; the words
it read, fitted to the response budget with how to read on; then the dialog or where the tab
went), and applies the budget once to the whole: a result that would still be longer (a long
list of tabs) is cut there, its marked page words closed where the cut falls so they stay the
page's. ``results.render`` then turns the marks into the boundary the model reads.

The endpoint runs every call's result through ``respond`` (``endpoint.calls``); a tool never
fits its own text.
"""

from __future__ import annotations

from typing import Any

from tabrelay.tools.budget import TRUNCATION_MARKER, fit_text
from tabrelay.tools.context import Reading, ToolResult
from tabrelay.tools.results import CLOSE, OPEN, page_text, rendered_size

# The fields of an acting call's structured content that hold the page's words.
AFTER_ACTION_FIELDS = ("url", "title", "new_tabs", "frames", "dialog")
_MARKER_ROOM = 160  # the marker of a cut ``_within`` makes, and a closing mark


def respond(result: ToolResult, budget_bytes: int) -> ToolResult:
    """``result`` as the client reads it (the page's words still marked), within
    ``budget_bytes``."""
    text, data, fields = result.text, result.data, result.page_fields
    if result.reading is not None:
        text, truncated = _read(text, result.reading, budget_bytes)
        data = {**(data or {}), "truncated": truncated}
    if result.dialog is not None:
        text += dialog_note(result.dialog)
        opened = {
            "kind": str(result.dialog.get("type", "")),
            "message": str(result.dialog.get("message", "")),
        }
        data = {**(data or {}), "navigated": False, "dialog": opened}
        fields = _with(fields, AFTER_ACTION_FIELDS)
    elif result.followed is not None:
        note = result.followed.note()
        text = f"{text} {note}" if note else text
        data = {**result.followed.data(), **(data or {})}
        fields = _with(fields, AFTER_ACTION_FIELDS)
    return ToolResult(_within(text, budget_bytes), result.image, data, fields)


def dialog_note(dialog: dict[str, Any]) -> str:
    """What the response says of a dialog the call opened (``Page.javascriptDialogOpening``)."""
    kind, message = dialog.get("type", "dialog"), dialog.get("message", "")
    return (
        f" The page opened a {kind} dialog: {page_text(repr(message))}. Answer it with "
        "browser_handle_dialog before anything else."
    )


def _read(before: str, reading: Reading, budget_bytes: int) -> tuple[str, bool]:
    """``before``, then the words read as the page's, cut to what the budget leaves them."""
    room = budget_bytes - rendered_size(f"{before}{reading.head}{reading.after}")
    fitted = fit_text(reading.words, room, continuation=reading.read_on)
    return before + fitted.as_page(reading.head) + reading.after, fitted.truncated


def _within(text: str, budget_bytes: int) -> str:
    """``text`` cut when it would be longer than ``budget_bytes`` as the model reads it (each
    span of the page's words with its tags), with a marker saying so; page words the cut falls
    in are closed there (an open mark would leave them unmarked)."""
    if rendered_size(text) <= budget_bytes:
        return text
    room = max(0, budget_bytes - _MARKER_ROOM)
    kept = text
    while (over := rendered_size(_closed(kept)) - room) > 0:
        encoded = kept.encode("utf-8")
        kept = encoded[: len(encoded) - over].decode("utf-8", errors="ignore")
    shown, whole = len(kept.encode("utf-8")), len(text.encode("utf-8"))
    return (
        f"{_closed(kept)}\n{TRUNCATION_MARKER}: showed {shown:,} of {whole:,} bytes; this answer "
        "is longer than the response budget: ask for less]"
    )


def _closed(text: str) -> str:
    """``text`` with the page's words it ends in closed."""
    return text + CLOSE if text.rfind(OPEN) > text.rfind(CLOSE) else text


def _with(fields: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fields + more))
