"""A recipe: the steps an agent or the person took in a tab, kept so they can run again without a
model, or be exported as a Playwright script.

A recipe is a readable JSON file (``RecipeFile``, format ``FORMAT``). Each step names what it
acts on with a ``Locator`` that survives a re-render (role and accessible name first, then
label, placeholder, test id, text, and a CSS path last), captured when the step ran. Text a
step types may hold parameters, ``{{name}}``; a secret (what was typed into a password or
one-time-code field) is only ever a parameter, and a recipe never holds its value. No I/O here:
``store.py`` keeps the files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tabrelay.errors import TabrelayError, validation_text

FORMAT: Literal[1] = 1  # the file format; a file of a newer format is refused with a clear error
MAX_STEPS = 1_000
MAX_TEXT = 10_000
MAX_NAME = 80
PARAM = re.compile(r"\{\{([a-z][a-z0-9_]{0,39})\}\}")  # {{name}} in a step's text
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_NOT_A_NAME = re.compile(r"[^a-z0-9]+")
RECIPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,79}")

Action = Literal[
    "navigate",  # url, or history: back / forward / reload
    "click",  # target; button, double, modifiers
    "type",  # target; text (may hold {{params}}); submit (Enter after), append
    "select",  # target; options (labels as the person saw them)
    "check",  # target; checked (a checkbox or radio set on or off)
    "press",  # key (Enter, Escape, Control+a…), repeat; target optional (else the focus)
    "hover",  # target
    "dialog",  # accept; text (a prompt's answer, may hold {{params}})
    "expect_text",  # text: what the page must show (the agent waited for it or read it)
]
Strategy = Literal["role", "label", "placeholder", "test_id", "text", "css"]
# The order a locator is tried in (and exported in): the first that names one element wins.
STRATEGIES: tuple[Strategy, ...] = ("role", "label", "placeholder", "test_id", "text", "css")

_Text = Annotated[str, Field(max_length=MAX_TEXT)]
_Short = Annotated[str, Field(min_length=1, max_length=500)]


class RecipeError(TabrelayError):
    """A recipe that cannot be read, saved or filled in; the message says what to change."""

    title = "Recipe problem"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Locator(_Model):
    """How to find one element again, each way as it was when the step ran.

    Only ways that named exactly this element at capture time are kept (``css`` always is), so
    the first one present in ``STRATEGIES`` order is the best. ``frames`` are CSS selectors of
    the iframe elements from the top document down to the element's document (empty: the top
    document).
    """

    role: _Short | None = None  # an ARIA role (button, link, textbox, checkbox, combobox…)
    name: Annotated[str, Field(max_length=500)] | None = None  # its accessible name, with role
    label: _Short | None = None  # the text of its <label> or aria-label
    placeholder: _Short | None = None
    test_id: _Short | None = None  # data-testid
    text: _Short | None = None  # its visible text (not a field's value)
    css: _Short  # a CSS path from the document, always present
    frames: list[_Short] = Field(default_factory=list, max_length=10)

    @model_validator(mode="after")
    def _role_has_name(self) -> Locator:
        if self.name is not None and self.role is None:
            raise ValueError("a locator's name goes with a role")
        return self

    def strategies(self) -> list[tuple[Strategy, str]]:
        """The ways this locator offers, best first: ``("role", "button")`` with ``name``
        read separately, or ``("label", "Email")``…"""
        return [(s, v) for s in STRATEGIES if (v := getattr(self, s)) is not None]

    def describe(self) -> str:
        """How a person reads it: ``button "Save"``, ``the field labelled "Email"``…"""
        if self.role is not None:
            return f'{self.role} "{self.name}"' if self.name else self.role
        if self.label is not None:
            return f'the field labelled "{self.label}"'
        if self.placeholder is not None:
            return f'the field with placeholder "{self.placeholder}"'
        if self.test_id is not None:
            return f'the element with test id "{self.test_id}"'
        if self.text is not None:
            return f'the element showing "{self.text}"'
        return f"the element at {self.css}"


def param_name_from(words: str, *, fallback: str) -> str:
    """A parameter name made of the words a person reads (a field's label): lowercase, ``_``
    between words, at most 40 characters, starting with a letter (``fallback`` goes first when
    it would not: "2FA code" is ``text_2fa_code``); ``fallback`` when no word is left."""
    slug = _NOT_A_NAME.sub("_", words.lower()).strip("_")
    if slug and not slug[0].isalpha():
        slug = f"{fallback}_{slug}"
    return slug[:40].strip("_") or fallback


def free_param_name(name: str, taken: Collection[str]) -> str:
    """``name``, or the first of ``name_2``, ``name_3``… not in ``taken`` (cut so that it
    is still a parameter name)."""
    number, free = 2, name
    while free in taken:
        free = f"{name[:36]}_{number}"
        number += 1
    return free


class Step(_Model):
    action: Action
    target: Locator | None = None
    url: Annotated[str, Field(max_length=4_096)] | None = None  # navigate
    history: Literal["back", "forward", "reload"] | None = None  # navigate without a url
    text: _Text | None = None  # type, dialog (prompt), expect_text; may hold {{params}}
    submit: bool = False  # type: press Enter after
    append: bool = False  # type: keep what the field held
    options: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=100
    )  # select
    checked: bool | None = None  # check
    key: Annotated[str, Field(max_length=100)] | None = None  # press
    repeat: int = Field(default=1, ge=1, le=50)  # press
    button: Literal["left", "right", "middle"] = "left"  # click
    double: bool = False  # click
    modifiers: list[Literal["Alt", "Control", "Meta", "Shift"]] = Field(default_factory=list)
    accept: bool | None = None  # dialog
    page_url: Annotated[str, Field(max_length=4_096)] | None = None  # where the step ran
    by: Literal["agent", "person"] = "agent"
    # What the step was judged to do when it was recorded ("pay", "send", …; none: routine, or
    # not judged, as a person's own steps are not).
    effect: Annotated[str, Field(max_length=40, pattern=r"^[a-z_]+$")] | None = None

    @model_validator(mode="after")
    def _complete(self) -> Step:
        needs_target = {"click", "type", "select", "check", "hover"}
        if self.action in needs_target and self.target is None:
            raise ValueError(f"a {self.action} step needs a target")
        if self.action == "navigate" and (self.url is None) == (self.history is None):
            raise ValueError("a navigate step needs a url or a history move, not both")
        if self.action in ("type", "expect_text") and self.text is None:
            raise ValueError(f"a {self.action} step needs text")
        if self.action == "select" and not self.options:
            raise ValueError("a select step needs options")
        if self.action == "check" and self.checked is None:
            raise ValueError("a check step needs checked")
        if self.action == "press" and not self.key:
            raise ValueError("a press step needs a key")
        if self.action == "dialog" and self.accept is None:
            raise ValueError("a dialog step needs accept")
        return self

    def params(self) -> set[str]:
        """The parameters this step's text uses."""
        return set(PARAM.findall(self.text)) if self.text else set()

    def why_not_nameable(self) -> str | None:
        """Why this step's text cannot become a parameter, or ``None`` when it can: a step
        that types text (or answers a prompt with it) not already a parameter."""
        if self.action not in ("type", "dialog") or self.text is None:
            return "types no text to name"
        if self.params():
            return "is a parameter already"
        return None

    def describe(self) -> str:
        """One line a person reads in the dashboard, the CLI and an error."""
        on = self.target.describe() if self.target else "the page"
        match self.action:
            case "navigate":
                return f"go to {self.url}" if self.url else f"go {self.history}"
            case "click":
                return f"{'double-' if self.double else ''}click {on}"
            case "type":
                return f"type {self.text!r} into {on}" + (" and press Enter" if self.submit else "")
            case "select":
                return f"choose {', '.join(self.options)} in {on}"
            case "check":
                return f"{'check' if self.checked else 'uncheck'} {on}"
            case "press":
                return f"press {self.key}" + (f" in {on}" if self.target else "")
            case "hover":
                return f"point at {on}"
            case "dialog":
                return "accept the dialog" if self.accept else "dismiss the dialog"
            case "expect_text":
                return f"see {self.text!r}"
        raise AssertionError(self.action)  # pragma: no cover


class Param(_Model):
    name: Annotated[str, Field(pattern=f"^{PARAM_NAME.pattern}$")]
    secret: bool = False  # typed into a password or one-time-code field: never a stored value
    description: Annotated[str, Field(max_length=300)] = ""
    default: Annotated[str, Field(max_length=MAX_TEXT)] | None = None

    @model_validator(mode="after")
    def _no_secret_default(self) -> Param:
        if self.secret and self.default is not None:
            raise ValueError(f"the secret parameter {self.name!r} cannot have a stored value")
        return self


class Recipe(_Model):
    """What a recipe file holds (see the module docstring)."""

    format: Literal[1] = FORMAT
    name: Annotated[str, Field(pattern=f"^{RECIPE_NAME.pattern}$")]
    revision: int = Field(default=1, ge=1)  # counts saves under this name
    created: float  # seconds since the epoch
    origin: Literal["agent", "demonstration"]
    session: str | None = None  # the agent session or demonstration it came from
    client: str | None = None  # the MCP client whose session it was
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    params: list[Param] = Field(default_factory=list, max_length=100)
    final_url: Annotated[str, Field(max_length=4_096)] | None = None  # where the run ended
    final_text: _Text | None = None  # the text the agent read last, to check at the end

    @model_validator(mode="after")
    def _params_declared(self) -> Recipe:
        declared = [p.name for p in self.params]
        if len(set(declared)) != len(declared):
            raise ValueError("a parameter is declared twice")
        used = set().union(*(step.params() for step in self.steps))
        if missing := sorted(used - set(declared)):
            raise ValueError(f"steps use undeclared parameters: {', '.join(missing)}")
        return self

    def filled(self, values: dict[str, str]) -> list[Step]:
        """The steps with each ``{{name}}`` replaced by its value (or the parameter's default).

        Raises:
            RecipeError: a parameter has neither (all of them named), or a value is given for
                a parameter the recipe does not have.
        """
        known = {p.name: p for p in self.params}
        if unknown := sorted(set(values) - set(known)):
            raise RecipeError(
                f"recipe {self.name!r} has no parameter {', '.join(unknown)}; its parameters: "
                f"{', '.join(known) or 'none'}"
            )
        final = {n: values.get(n, p.default) for n, p in known.items()}
        if missing := sorted(n for n, v in final.items() if v is None):
            raise RecipeError(
                f"recipe {self.name!r} needs a value for {', '.join(missing)} "
                f"(--param {missing[0]}=…)"
            )

        def fill(text: str | None) -> str | None:
            if text is None:
                return None
            return PARAM.sub(lambda m: str(final[m.group(1)]), text)

        return [
            step.model_copy(update={"text": fill(step.text)}) if step.text else step
            for step in self.steps
        ]


def parse_recipe(text: str | bytes, *, source: str) -> Recipe:
    """A recipe from its file's text; ``source`` names the file in errors.

    Raises:
        RecipeError: not JSON, a newer format, or not a recipe (the first problems named).
    """
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecipeError(f"{source} is not a recipe: it is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{source} is not a recipe: it holds no JSON object")
    version = data.get("format")
    if isinstance(version, int) and version > FORMAT:
        raise RecipeError(
            f"{source} was written by a newer Tabrelay (recipe format {version}; this one reads "
            f"{FORMAT}); update Tabrelay to use it"
        )
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        problems = validation_text(exc, whole="recipe")
        raise RecipeError(f"{source} is not a valid recipe: {problems}") from None


def recipe_text(recipe: Recipe) -> str:
    """The file's text: indented JSON, its format first, other fields that hold their default
    left out."""
    data = {"format": FORMAT, **recipe.model_dump(mode="json", exclude_defaults=True)}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def check_param_name(name: str) -> str:
    """A parameter name as given by a person, or RecipeError saying what a name may be."""
    if not PARAM_NAME.fullmatch(name):
        raise RecipeError(
            f"{name[:60]!r} cannot name a parameter: use up to 40 lowercase letters, digits "
            "and '_', starting with a letter"
        )
    return name


def check_name(name: str) -> str:
    """A recipe name as given by a person, or RecipeError saying what a name may be."""
    if not RECIPE_NAME.fullmatch(name):
        raise RecipeError(
            f"{name[:100]!r} cannot name a recipe: use 1 to {MAX_NAME} letters, digits, spaces, "
            "'_', '.' or '-', starting with a letter or digit"
        )
    return name
