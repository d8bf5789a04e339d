"""What a successful agent call adds to its recording: the steps it stands for, their secret
parameters, and what to check at the end of a replay. Pure: no page, no disk.

Recorded (the catalog's ``recorded``): the calls that change a page the way a person would, and
whose effect a replay can repeat by finding the same element again: navigate (a URL, back,
forward, reload), a new tab's URL, click, type, fill_form, select_option, press_key, hover,
handle_dialog, and wait_for(text), which becomes a check (``expect_text``).

Not recorded, and why:

- reads (snapshot, find, get_content, screenshot, console, network, status, list_tabs): they
  change nothing, so replaying them does nothing; what the agent checked comes back as
  ``expect_text`` (wait_for) and ``final_text_of_call``;
- scroll: acting tools bring their element into view themselves, so a replay needs no scroll,
  and a scroll position does not survive a re-render;
- drag: a drop target is often a position, not an element a locator names;
- upload: file paths are the person's, allowed per folder and asked each time; a recipe must
  not carry them to another machine;
- evaluate and cdp: arbitrary code, which a recipe must not replay without the person reading
  it each time (they are asked for it every time already);
- tab management (close, activate): a recipe runs in one tab;
- handoff: what the person does in a tab handed to them is theirs, never recorded (the tab is
  muted meanwhile); a replay resumes wherever they left the page;
- list_recipes, a read, and run_recipe: the recipe it runs is a recording already, and its
  steps are not agent calls;
- request_access: a plan is the person's approval for one task, never part of its steps;
- wait_for(selector / text_gone / load_state / seconds): every replayed step already waits for
  its element and the page to settle.

A call acting on an element for which no locator could be captured (``locators`` lacks its key:
the element left the page, or the capture failed) adds no step for that element: a step that
guessed its target could act on the wrong one. It is a *gap* instead (``CallRecord.gap``): the
recording counts it and the dashboard and CLI show it, since a replay would skip that action.
Steps that cannot be held (text longer than a recipe allows, a secret choice in a select) are
gaps too.

Secrets: an argument ``secret(path)`` calls a secret ("text", "fields.2.value",
"prompt_text") never becomes a value in a step. Its step types ``{{name}}`` instead, with a
secret ``Param``: ``password``, ``one_time_code``, ``pin``, ``card_code`` from the field's label
or name, else the label itself, else ``secret`` (numbered when taken in the call; the recorder
renumbers across calls).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from tabrelay.errors import validation_text
from tabrelay.recipes.model import (
    MAX_TEXT,
    Locator,
    Param,
    Step,
    free_param_name,
    param_name_from,
)
from tabrelay.tools.context import Params, ToolResult

# What a secret field is, from its label or name: the parameter's name.
_SECRET_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bcv[cv]2?\b|security code|card code", re.I), "card_code"),
    (
        re.compile(r"one[- ]?time|\botp\b|2fa|two[- ]factor|verification|\bcode\b", re.I),
        "one_time_code",
    ),
    (re.compile(r"\bpin\b", re.I), "pin"),
    (re.compile(r"pass(word|phrase|code)|\bpass\b|\bpwd\b", re.I), "password"),
)


@dataclass(frozen=True)
class CallRecord:
    """What a successful call adds to its recording."""

    steps: list[Step]
    params: list[Param]  # those the steps use (secrets, with no value)
    gap: str | None  # what it did that no step stands for (``Recorder.add(..., gap=...)``)


def record_call(
    tool: str,
    params: Params,
    locators: Mapping[str, Locator],
    *,
    secret: Callable[[str], bool],
    page_url: str | None,
    result: ToolResult,
) -> CallRecord:
    """The steps a successful call of ``tool`` stands for, the parameters they use, and what
    it did that no step stands for (see the module docstring).

    ``locators`` are those ``tools.targets.capture_targets`` captured before the call ran
    (keys "ref", "element" for press_key's target, "fields.<i>"); ``secret(path)`` says
    whether an argument holds a secret; ``page_url`` is where the call ran; ``result`` is
    what it returned. A tool that is not recorded gives nothing.
    """
    made = _Made(secret=secret, page_url=page_url)
    _record(made, tool, params, locators, result)
    return CallRecord(made.steps, made.params, "; ".join(made.gaps) if made.gaps else None)


def final_text_of_call(tool: str, params: Params, result: ToolResult) -> str | None:
    """What the agent read last that a replay should find at its end, or None.

    Only ``browser_wait_for(text=…)``: the agent named a text it expected, and the page
    showed it (the same check, innerText, runs at the end of a replay). Reads are not taken:
    a snapshot or the page's content has no one text to check and holds what changes between
    runs (dates, counts); browser_find matches accessible names, which need not be visible
    text.
    """
    if tool != "browser_wait_for":
        return None
    text = getattr(params, "text", None)
    return text if isinstance(text, str) and 0 < len(text) <= MAX_TEXT else None


@dataclass
class _Made:
    secret: Callable[[str], bool]
    page_url: str | None
    steps: list[Step] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    def step(self, what: str, **fields: Any) -> None:
        try:
            self.steps.append(Step(page_url=self.page_url, **fields))
        except ValidationError as exc:
            problem = validation_text(exc, limit=1, whole="")
            self.gaps.append(f"{what} cannot be a step ({problem})")

    def text(self, path: str, text: str, target: Locator | None) -> str:
        """``text`` as a step holds it: ``{{name}}`` with a new secret parameter if secret."""
        if not self.secret(path):
            return text
        name = free_param_name(_secret_name(target), {p.name for p in self.params})
        self.params.append(Param(name=name, secret=True, description=_about(target)))
        return f"{{{{{name}}}}}"


def _record(
    made: _Made,
    tool: str,
    params: Params,
    locators: Mapping[str, Locator],
    result: ToolResult,
) -> None:
    p: Any = params  # each branch reads its tool's own parameter model
    match tool:
        case "browser_navigate":
            if p.url is not None:
                made.step(f"going to {p.url[:100]}", action="navigate", url=p.url)
            else:
                made.step(f"going {p.action}", action="navigate", history=p.action)
        case "browser_new_tab":
            if p.url:
                made.step(f"opening {p.url[:100]}", action="navigate", url=p.url)
        case "browser_click":
            if target := _target(made, locators, "ref", p, "click"):
                made.step(
                    "the click",
                    action="click",
                    target=target,
                    button=p.button,
                    double=p.double,
                    modifiers=list(p.modifiers),
                )
        case "browser_type":
            if target := _target(made, locators, "ref", p, "type into"):
                made.step(
                    "the typing",
                    action="type",
                    target=target,
                    text=made.text("text", p.text, target),
                    submit=p.submit,
                    append=p.append,
                )
        case "browser_fill_form":
            for index, item in enumerate(p.fields):
                _field(made, locators, index, item, result)
        case "browser_select_option":
            if target := _target(made, locators, "ref", p, "choose in"):
                made.step("the choice", action="select", target=target, options=list(p.values))
        case "browser_press_key":
            target = None
            if p.ref is not None or p.selector is not None:
                target = _target(made, locators, "element", p, f"press {p.key} in")
                if target is None:
                    return
            made.step(f"pressing {p.key}", action="press", key=p.key, repeat=p.repeat,
                      target=target)  # fmt: skip
        case "browser_hover":
            if target := _target(made, locators, "ref", p, "point at"):
                made.step("the pointing", action="hover", target=target)
        case "browser_handle_dialog":
            text = None
            if p.prompt_text is not None:
                text = made.text("prompt_text", p.prompt_text, None)
            made.step("the dialog's answer", action="dialog", accept=p.accept, text=text)
        case "browser_wait_for":
            if p.text:
                made.step("the text waited for", action="expect_text", text=p.text)


def _field(
    made: _Made, locators: Mapping[str, Locator], index: int, item: Any, result: ToolResult
) -> None:
    target = _target(made, locators, f"fields.{index}", item, f"fill field {index + 1}:")
    if target is None:
        return
    path = f"fields.{index}.value"
    value = item.value
    if isinstance(value, bool):
        made.step(f"field {index + 1}", action="check", target=target, checked=value)
    elif isinstance(value, list) or _chosen(item, result):
        if made.secret(path):  # a card's expiry, say: options cannot be parameters
            made.gaps.append(f"field {index + 1} ({target.describe()}): a secret choice")
            return
        options = value if isinstance(value, list) else [value]
        made.step(f"field {index + 1}", action="select", target=target, options=list(options))
    else:
        made.step(
            f"field {index + 1}", action="type", target=target, text=made.text(path, value, target)
        )


def _chosen(item: Any, result: ToolResult) -> bool:
    """fill_form chose an option for a text value (the field was a <select>): its result says
    ``<ref> = <choice>`` for such a field, ``<ref> filled`` for text."""
    name = item.ref or item.selector or ""
    return bool(name) and f"{name} = " in result.text and f"{name} filled" not in result.text


def _target(
    made: _Made, locators: Mapping[str, Locator], key: str, p: Any, what: str
) -> Locator | None:
    target = locators.get(key)
    if target is None:
        given = getattr(p, "ref", None) or getattr(p, "selector", None) or "its element"
        made.gaps.append(f"{what} {given}: its element could not be described to find it again")
    return target


def _secret_name(target: Locator | None) -> str:
    if target is None:
        return "prompt_answer"
    said = " ".join(v for v in (target.label, target.name, target.placeholder, target.test_id) if v)
    for pattern, name in _SECRET_KINDS:
        if pattern.search(said):
            return name
    return param_name_from(said, fallback="secret")


def _about(target: Locator | None) -> str:
    if target is None:
        return "the answer to a prompt that asked for a secret"
    return f"typed into {target.describe()}"[:300]
