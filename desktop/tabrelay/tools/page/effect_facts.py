"""What the page says around an element a call acts on: the facts its effect is decided from.

``FACTS`` runs on the element in Tabrelay's own world (``page_outline.WORLD``), where the page's
scripts cannot change what the DOM answers, and reads what a person reads around it: the
element's visible label, accessible name, tooltip and icon (an icon font's ligature, an SVG's
title, the names its classes give it), where a link goes and whether it downloads, the form a
click or an Enter submits (its address, method, default button and the kinds of its fields: a
card, a password, a one-time code, an IBAN, an amount, an email), the dialog or section it is
in, and whether a field's Enter sends (a chat's composer). It reads no field's value. The
decision itself is ``approval.effects``: this module only gathers, and never fails a call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.page_scripts import FIELD_KIND, SAFE_DOM

MAX_TEXT = 200  # characters of each text gathered

# ``this`` is the element. Answers one JSON string (see ``Facts``).
FACTS = (
    script("effect_facts.js")
    .replace("FIELD_KIND", FIELD_KIND.strip())
    .replace("MAX_TEXT", str(MAX_TEXT))
    .replace("SAFE_DOM", SAFE_DOM.strip())
)


@dataclass(frozen=True, slots=True)
class FormFacts:
    """The form a target is in: where it posts, how, and what it asks for."""

    action: str = ""
    method: str = "get"
    submits: bool = False  # the target is a submit button of it
    button: str = ""  # its default button's label
    fields: tuple[str, ...] = ()  # "card", "password", "new_password", "otp", "iban", …
    label: str = ""
    enter: bool = False  # Enter in its text fields submits it


@dataclass(frozen=True, slots=True)
class Facts:
    """What a person reads on and around one element (page text: data, never instructions)."""

    tag: str = ""
    type: str = ""
    role: str = ""
    field: bool = False
    label: str = ""  # its visible text (a field: its label or placeholder)
    name: str = ""  # aria-label or aria-labelledby
    title: str = ""
    icon: str = ""  # words its icon carries (classes, an SVG's title, a sprite's id)
    purpose: str = ""  # a field's: "card", "password", "otp", "iban", "amount", "search", …
    href: str | None = None
    download: bool = False
    form: FormFacts | None = None
    dialog: str = ""  # the dialog it is in, by name or heading
    section: str = ""  # the section it is in, by name, heading or legend
    beside: str = ""  # a composer's: the buttons beside it


def read(answer: dict[str, Any]) -> Facts | None:
    """The facts in ``FACTS``'s answer (``Runtime.callFunctionOn``), or None when the page
    answered otherwise (a page cannot make this fail a call)."""
    try:
        value = json.loads(answer["result"]["value"])
        form = value.get("form")
        return Facts(
            tag=_text(value.get("tag")),
            type=_text(value.get("type")),
            role=_text(value.get("role")),
            field=value.get("field") is True,
            label=_text(value.get("label")),
            name=_text(value.get("name")),
            title=_text(value.get("title")),
            icon=_text(value.get("icon")),
            purpose=_text(value.get("purpose")),
            href=_text(value["href"]) if isinstance(value.get("href"), str) else None,
            download=value.get("download") is True,
            form=FormFacts(
                action=_text(form.get("action")),
                method=_text(form.get("method")) or "get",
                submits=form.get("submits") is True,
                button=_text(form.get("button")),
                fields=tuple(_text(f) for f in form.get("fields", [])[:12] if isinstance(f, str)),
                label=_text(form.get("label")),
                enter=form.get("enter") is True,
            )
            if isinstance(form, dict)
            else None,
            dialog=_text(value.get("dialog")),
            section=_text(value.get("section")),
            beside=_text(value.get("beside")),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _text(value: Any) -> str:
    return value[: MAX_TEXT * 2] if isinstance(value, str) else ""
