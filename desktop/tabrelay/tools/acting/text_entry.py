"""Text into a field or an editor, exactly: focus, choose what the text replaces, type it, and
read it back.

A field's text is replaced (or added to at its end) through what takes the keys: a plain field
or a contenteditable host has its selection set directly; a code editor gets its own select-all
or go-to-end shortcut, so its model — not its hidden input — is what the text replaces. What
the field holds afterwards is read back (for code editors through their own interface) and must
be what was asked; a code editor that reshaped typed text (indents, closed brackets) has it set
through its interface instead, and anything else that differs is an error that says what the
field holds now (never a secret's text). Date, time, colour and range inputs take their value
at once. Focus is what typing needs: an element that cannot take it says why (a modal dialog,
an inert region) instead of blaming what covers it.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from tabrelay.errors import ToolError
from tabrelay.tools.acting.input_events import focus, press
from tabrelay.tools.acting.keys import MODIFIERS, Key, key_for
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page.refs import Located
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import EDITOR

SHOWN_TEXT = 80  # characters of a field's text an error quotes
# Editors whose text is rich (paragraphs, not lines): compared with whitespace collapsed.
RICH = frozenset({"ProseMirror", "contenteditable"})

_FACTS = script("field_facts.js").replace("EDITOR", EDITOR.strip())
_WRITE = script("write_text.js").replace("EDITOR", EDITOR.strip())
# A plain field's or contenteditable host's selection: all of it, or the caret at its end.
_PLACE = script("place_caret.js")
# Date, time, colour, range: the value at once, as the page's own picker would set it.
_SET_VALUE = script("set_value.js")


async def enter_text(
    ctx: ToolContext,
    target: Located,
    text: str,
    *,
    append: bool,
    slowly: bool,
    what: str,
    secret: bool = False,
) -> str:
    """Put ``text`` into the field or editor ``target`` (replacing what it holds unless
    ``append``) and check that it holds exactly that; a note for the answer ("" for none).
    Neither the note nor an error quotes the text of a secret field or of ``secret`` text.

    Raises:
        ToolError: it is read-only, cannot take the focus, or holds something else afterwards.
    """
    named = f"{what} ({target.description})"
    facts = await call_on_element(ctx, target.object_id, _FACTS)
    if not isinstance(facts, dict):
        raise ToolError(f"{named} is not a text field or an editor")
    kind = str(facts.get("kind"))
    if facts.get("readOnly"):
        raise ToolError(f"{named} is read-only: it takes no text")
    before = facts.get("text")
    wanted = (str(before) + text if append else text) if isinstance(before, str) else None
    if kind == "value":
        if append:
            raise ToolError(f"{named} takes one value ({target.input_type}); append does not apply")
        if not await call_on_element(ctx, target.object_id, _SET_VALUE, text):
            given = "the value given" if secret or target.secret else repr(text)
            raise ToolError(
                f"{named} did not take {given}: a {target.input_type} field takes values such "
                f"as {_EXAMPLES.get(target.input_type, 'its own format')}"
            )
        return ""
    await focus(ctx, target, what)
    await _choose(ctx, target, code=bool(facts.get("code")), append=append, mac=bool(facts["mac"]))
    if not append and not text:
        await press(ctx, key_for("Delete"))
    elif slowly:
        await _type_slowly(ctx, text)
    else:
        await ctx.cdp("Input.insertText", {"text": text})
    if wanted is None:
        return f" ({kind}: what it holds now could not be read back to check)"
    held = await _read(ctx, target)
    single = bool(facts.get("single"))
    if held is not None and same_text(held, wanted, kind=kind, single=single):
        return " (a one-line field: line breaks became spaces)" if single and "\n" in text else ""
    if facts.get("writable"):
        await call_on_element(ctx, target.object_id, _WRITE, wanted)
        held = await _read(ctx, target)
        if held is not None and same_text(held, wanted, kind=kind, single=False):
            return (
                f" {kind} changed the text as it was typed (indentation, closing brackets), so "
                "it was set through the editor's own interface"
            )
    hidden = target.secret or ("secret" if secret else None)
    raise ToolError(mismatch(named, held, wanted, secret=hidden, max_length=facts.get("maxLength")))


async def _choose(
    ctx: ToolContext, target: Located, *, code: bool, append: bool, mac: bool
) -> None:
    """Select what the text replaces, or put the caret at the end to append."""
    if not code and await call_on_element(ctx, target.object_id, _PLACE, append):
        return
    # A code editor's own shortcut (its model, not the lines it draws), or a field's End key.
    modifier = MODIFIERS["Meta" if mac else "Control"]
    await press(ctx, key_for("End" if append else "a"), modifier if code or not append else 0)


async def _type_slowly(ctx: ToolContext, text: str) -> None:
    for index, char in enumerate(text):
        if char == "\n":
            await press(ctx, key_for("Enter"))
        elif char.isprintable() and len(char.encode("utf-16-le")) == 2:
            await press(ctx, key_for(char) if char.isascii() else Key(char, "", 0, char))
        else:
            await ctx.cdp("Input.insertText", {"text": char})
        if index % 10 == 0:
            await ctx.progress(index, len(text), "typing")
        await asyncio.sleep(random.uniform(0.04, 0.14))  # noqa: S311 - pacing, not security


async def _read(ctx: ToolContext, target: Located) -> str | None:
    facts = await call_on_element(ctx, target.object_id, _FACTS)
    text = facts.get("text") if isinstance(facts, dict) else None
    return text if isinstance(text, str) else None


def same_text(held: str, wanted: str, *, kind: str, single: bool) -> bool:
    """Whether a field holding ``held`` holds what was asked (``wanted``).

    Line ends count as one; a one-line input has a space for each line break, as the browser
    types it; rich text (paragraphs) is compared with its whitespace collapsed.
    """
    held, wanted = _lines(held), _lines(wanted)
    if kind in RICH:
        return " ".join(held.split()) == " ".join(wanted.split())
    if single:  # the browser puts a space for each line break typed into a one-line input
        wanted = wanted.replace("\n", " ")
    return held == wanted


def mismatch(
    named: str, held: str | None, wanted: str, *, secret: str | None, max_length: object
) -> str:
    """The error for a field that holds something else than asked, without a secret's text."""
    limit = ""
    if isinstance(max_length, int) and 0 <= max_length < len(wanted):
        limit = f"; it takes at most {max_length} characters"
    if held is None:
        return f"{named} could not be read back after typing{limit}; look at it with a snapshot"
    if secret:
        return (
            f"{named} holds {len(held)} characters after typing, not the {len(wanted)} asked "
            f"for{limit}"
        )
    return (
        f"{named} holds {page_text(_quoted(held))} after typing, not {_quoted(wanted)}{limit}; the "
        "page "
        "changed or refused part of it"
    )


def _quoted(text: str) -> str:
    return repr(text if len(text) <= SHOWN_TEXT else text[: SHOWN_TEXT - 1] + "…")


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")


_EXAMPLES = {
    "date": "2025-01-31",
    "datetime-local": "2025-01-31T09:30",
    "month": "2025-01",
    "time": "09:30",
    "week": "2025-W05",
    "color": "#ff8800",
    "range": "a number between its min and max",
}


async def call_on_element(ctx: ToolContext, object_id: str, function: str, *args: Any) -> Any:
    """Run ``function`` on the element; what it returns. A script error is the page's refusal."""
    result = await ctx.call_on(object_id, function, *args)
    if result.get("exceptionDetails"):
        raise ToolError("the page's element refused the action (a script error)")
    return result.get("result", {}).get("value")
