"""browser_run_recipe and browser_list_recipes: replay a saved recipe in a tab, step by step,
through the tools agents call (the catalog's, by name), and list the saved ones.

Each step finds its element again with ``tools.page.locators.find`` (waiting for it as an acting
tool does) and runs the tool an agent would have run on it; after each step the tab must not be on a
site agents may not use. The first step that fails stops the run, with which step, what it
looked for, what the page offers nearby and what ran before it. Approval is the endpoint's (one
for the whole recipe); this module never asks. Parameter values are treated as secrets: they
are typed as secret text and masked out of every result and error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Annotated, Any, Protocol
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, ValidationError, field_validator

from tabrelay.errors import (
    CommandFailed,
    NavigationBlocked,
    TabrelayError,
    ToolError,
    validation_text,
)
from tabrelay.protocol.constants import ErrorCode
from tabrelay.recipes.model import MAX_TEXT, Recipe, Step
from tabrelay.recipes.store import RecipeStore
from tabrelay.tools.context import Params, Progress, Runner, TabParams, ToolContext, ToolResult
from tabrelay.tools.page.locators import find
from tabrelay.tools.redaction import mask, scrub
from tabrelay.tools.results import page_text

STEP_TIMEOUT = 10.0  # seconds a step waits for its element (browser_run_recipe's default)
DIALOG_POLL = 0.05  # seconds between looks for the dialog a dialog step answers
SHOWN_BEFORE = 5  # steps named in an error as what ran before the failing one
MAX_PARAMS = 100
MAX_NAME_GIVEN = 100  # a recipe name longer than this is refused before the store is read

_Value = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
_Name = Annotated[str, StringConstraints(max_length=100)]


class StepTool(Protocol):
    """A tool a step runs, as the catalog has it (``catalog.ToolSpec``)."""

    @property
    def params(self) -> type[Params]: ...

    @property
    def run(self) -> Runner: ...


Tools = Callable[[str], StepTool]  # the catalog's tools by name


class RunRecipeParams(TabParams):
    name: str = Field(description="Its name, from browser_list_recipes.")
    params: dict[_Name, _Value] = Field(
        default_factory=dict,
        max_length=MAX_PARAMS,
        description="Its parameters' values by name; give the secret ones (never stored).",
    )
    timeout: float = Field(
        default=STEP_TIMEOUT, gt=0, le=60, description="Seconds each step waits for its element."
    )

    # The bound is checked here, not stated in the schema: OpenAI's strict mode has no maxLength.
    @field_validator("name")
    @classmethod
    def _bounded(cls, name: str) -> str:
        if len(name) > MAX_NAME_GIVEN:
            raise ValueError(f"the name is {len(name)} characters; at most {MAX_NAME_GIVEN}")
        return name


async def clear_nothing(ctx: ToolContext, params: RunRecipeParams) -> frozenset[str]:
    """For the catalog's ``SecretFields({"params"}, clear_nothing)``: every value given for a
    recipe's parameters is masked where the call is shown or logged."""
    return frozenset()


class ListRecipesParams(Params):
    pass


async def run_recipe(ctx: ToolContext, params: RunRecipeParams, *, tools: Tools) -> ToolResult:
    """Run the saved recipe ``params.name`` in the tab, step by step, each through the tool
    an agent would call (``tools``: the catalog's, by name).

    Raises:
        RecipeError: no such recipe, or a parameter is missing or unknown.
        ToolError: a step failed (which, why, and what ran before it), the tab went to a site
            agents may not use (NavigationBlocked), or the final text never showed.
    """
    recipe = await asyncio.to_thread(_store(ctx).load, params.name)
    steps = recipe.filled(dict(params.params))  # RecipeError names what is missing
    hidden = frozenset(params.params.values())
    try:
        return await _run(ctx, tools, recipe, steps, params.timeout, hidden)
    except BaseException:
        await ctx.release_input()  # a step cut short may hold a key or a button down
        raise


async def list_recipes(ctx: ToolContext, params: ListRecipesParams) -> ToolResult:
    """The saved recipes: name, steps, parameters (secret or with a default), where it ends."""
    store = _store(ctx)
    recipes, problems = await asyncio.to_thread(store.scan)
    lines = [f"{len(recipes)} saved recipe(s):" if recipes else "No recipe is saved yet."]
    listed = []
    for recipe in recipes:
        params_ = [_param_text(p.name, p.secret, p.default is not None) for p in recipe.params]
        lines.append(
            f"- {recipe.name!r} (revision {recipe.revision}, {len(recipe.steps)} steps, "
            f"recorded from {'the person' if recipe.origin == 'demonstration' else 'an agent'})"
            + (f"; parameters: {', '.join(params_)}" if params_ else "")
            + (f"; ends at {page_text(recipe.final_url)}" if recipe.final_url else "")
        )
        listed.append(
            {
                "name": recipe.name,
                "revision": recipe.revision,
                "steps": len(recipe.steps),
                "origin": recipe.origin,
                "created": recipe.created,
                "params": [
                    {"name": p.name, "secret": p.secret, "required": p.default is None}
                    for p in recipe.params
                ],
                "final_url": recipe.final_url,
            }
        )
    lines += [f"Not readable: {problem}" for problem in problems]
    return ToolResult(
        "\n".join(lines), data={"recipes": listed, "problems": problems}, page_fields=("recipes",)
    )


def _param_text(name: str, secret: bool, has_default: bool) -> str:
    if secret:
        return f"{name} (secret, required)"
    return name if has_default else f"{name} (required)"


def _store(ctx: ToolContext) -> RecipeStore:
    if ctx.recipes is None:
        raise ToolError("recipes are not available in this Tabrelay")
    return ctx.recipes


async def _run(
    ctx: ToolContext,
    tools: Tools,
    recipe: Recipe,
    steps: list[Step],
    timeout: float,
    hidden: frozenset[str],
) -> ToolResult:
    started = time.monotonic()
    total = len(steps)
    units = total + (recipe.final_text is not None)  # the final check counts as one more
    report = ctx.progress
    for number, (shown, step) in enumerate(zip(recipe.steps, steps, strict=True), start=1):
        what = shown.describe()  # the recipe's own step: {{params}}, never their values
        message = f"step {number}/{total}: {what}"[:300]
        await report(number - 1, units, message)  # MCP progress counts what is done
        ctx.progress = _StepProgress(report, number - 1, units, message)
        try:
            await _prepare(ctx)
            await _step(ctx, tools, step, timeout, secret=bool(shown.params()))
            await _guard(ctx)
        except asyncio.CancelledError:
            raise
        except TabrelayError as exc:
            raise _failed(exc, number, recipe, hidden) from None
        finally:
            ctx.progress = report
            # Refs the step minted hold no page objects; what it asked for is let go here, so a
            # long recipe does not pile up objects in the page until its end.
            await ctx.release_objects()
    tab = ctx.need_tab()
    at = page_text(f"{tab.url} ({tab.title or 'no title'})")
    lines = [
        f"Ran recipe {recipe.name!r}: {total} step(s) in {time.monotonic() - started:.1f} s.",
        f"Tab {tab.id} is at {at}.",
    ]
    url_matched = None
    if recipe.final_url is not None:
        url_matched = tab.url == recipe.final_url
        if url_matched:
            lines.append("It ends where the recording did.")
        elif _same_page(tab.url, recipe.final_url):
            lines.append(
                f"It ends on the recording's page, {page_text(recipe.final_url)}, apart from "
                "its query."
            )
        else:
            lines.append(f"The recording ended at {page_text(recipe.final_url)} instead.")
    text_found = None
    if recipe.final_text is not None:
        message = f"checking the page shows {recipe.final_text!r}"[:300]
        await report(total, units, message)
        ctx.progress = _StepProgress(report, total, units, message)
        try:
            await _call(ctx, tools, "browser_wait_for", text=recipe.final_text, timeout=timeout)
        except asyncio.CancelledError:
            raise
        except TabrelayError as exc:
            raise ToolError(
                _hide(
                    f"all {total} step(s) of {recipe.name!r} ran, but the page does not show "
                    f"{page_text(repr(recipe.final_text))}, the text the recording ended on "
                    f"({exc.message}); tab {tab.id} is at {page_text(tab.url)}",
                    hidden,
                )
            ) from None
        finally:
            ctx.progress = report
        text_found = True
        lines.append(
            f"The page shows {page_text(repr(recipe.final_text))}, as the recording's end did."
        )
    await report(units, units, f"all {total} steps ran")
    return ToolResult(
        _hide("\n".join(lines), hidden),
        data={
            "steps": total,
            "url": _hide(tab.url, hidden),
            "title": _hide(tab.title or "", hidden),
            "final_url_matched": url_matched,
            "final_text_found": text_found,
        },
        page_fields=("url", "title"),
    )


class _StepProgress:
    """A step's tool reporting its own progress (a navigation's load, a wait): told to the
    client as part of the step, with the step's message (the tool's own may quote a
    parameter's value, and counts from 0 again)."""

    def __init__(self, report: Progress, done: int, total: int, message: str) -> None:
        self._report, self._done, self._total, self._message = report, done, total, message

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        part = min(done / total, 1.0) if total else 0.5
        await self._report(self._done + 0.9 * part, self._total, self._message)


async def _prepare(ctx: ToolContext) -> None:
    """The tab's domains, as the endpoint prepares them before each agent call (a step may
    have opened a new document since)."""
    if ctx.sessions is not None:
        await ctx.sessions.prepare(ctx.need_browser(), ctx.need_tab().id, guard=True)


async def _step(
    ctx: ToolContext, tools: Tools, step: Step, timeout: float, *, secret: bool
) -> None:
    """Run one filled step through the tool an agent would call.

    Raises:
        TabrelayError: the step could not run (its element missing: TargetMissing).
    """
    if step.action != "dialog" and (dialog := ctx.state.log.dialog) is not None:
        raise ToolError(
            f"a {dialog.kind} dialog is open ({page_text(repr(dialog.message[:100]))}) and the "
            "recipe does not "
            "answer it here"
        )
    ref = await find(ctx, step.target, timeout=timeout) if step.target is not None else None
    match step.action:
        case "navigate":
            await _call(ctx, tools, "browser_navigate", url=step.url, action=step.history)
        case "click":
            await _call(
                ctx, tools, "browser_click",
                ref=ref, button=step.button, double=step.double, modifiers=step.modifiers,
            )  # fmt: skip
        case "type":
            await _call(
                ctx, tools, "browser_type",
                ref=ref, text=step.text or "", submit=step.submit, append=step.append,
                secret=secret,
            )  # fmt: skip
        case "select":
            await _call(ctx, tools, "browser_select_option", ref=ref, values=step.options)
        case "check":
            field = {"ref": ref, "value": bool(step.checked)}
            await _call(ctx, tools, "browser_fill_form", fields=[field])
        case "press":
            await _call(
                ctx, tools, "browser_press_key", key=step.key or "", repeat=step.repeat, ref=ref
            )
        case "hover":
            await _call(ctx, tools, "browser_hover", ref=ref)
        case "dialog":
            await _dialog_shown(ctx, timeout)
            await _call(
                ctx, tools, "browser_handle_dialog",
                accept=bool(step.accept), prompt_text=step.text, secret=secret,
            )  # fmt: skip
        case "expect_text":
            await _call(ctx, tools, "browser_wait_for", text=step.text, timeout=timeout)


async def _call(ctx: ToolContext, tools: Tools, name: str, **arguments: Any) -> None:
    """Run the tool ``name`` with ``arguments``, validated as an agent's call of it is.

    Raises:
        ToolError: the tool refuses the arguments (a recipe file edited by hand, a parameter's
            value too long for the field), saying why.
    """
    tool = tools(name)
    try:
        params = tool.params.model_validate(arguments)
    except ValidationError as exc:
        raise ToolError(f"{name} refuses the step's arguments: {validation_text(exc)}") from None
    await tool.run(ctx, params)


async def _dialog_shown(ctx: ToolContext, timeout: float) -> None:
    """Wait (bounded) for the dialog the step answers: its event may trail the click."""
    deadline = time.monotonic() + timeout
    while ctx.state.log.dialog is None:
        if time.monotonic() >= deadline:
            raise ToolError(f"no dialog opened within {timeout:g} s")
        await asyncio.sleep(DIALOG_POLL)


async def _guard(ctx: ToolContext) -> None:
    """The tab now, which must not show a site agents may not use.

    Raises:
        ToolError: the tab was closed, or could not be looked at (fail closed).
        NavigationBlocked: it shows a blocked site.
    """
    browser, tab = ctx.need_browser(), ctx.need_tab()
    try:
        now = await browser.get_tab(tab.id)
    except CommandFailed as failed:
        if failed.code == ErrorCode.NO_TAB:
            raise ToolError(f"tab {tab.id} was closed") from None
        raise ToolError(
            f"could not look at tab {tab.id} after the step ({failed.message}), so the run "
            "stops (it may be on a site agents may not use)"
        ) from None
    ctx.tab = now
    try:
        ctx.guard.check(now.url)
    except NavigationBlocked as blocked:
        raise NavigationBlocked(
            f"the tab went to a site agents may not use ({blocked.message})"
        ) from None


def _failed(exc: TabrelayError, number: int, recipe: Recipe, hidden: frozenset[str]) -> ToolError:
    """The run's error: which step, why, and what ran before it; no parameter value in it."""
    total = len(recipe.steps)
    before = recipe.steps[max(0, number - 1 - SHOWN_BEFORE) : number - 1]
    first = number - len(before)
    ran = "; ".join(f"{first + i}. {s.describe()}" for i, s in enumerate(before))
    if number == 1:
        history = "Nothing ran before it."
    elif len(before) < number - 1:
        history = f"Steps 1 to {number - 1} ran before it, the last of them: {ran}."
    else:
        history = f"Ran before it: {ran}."
    message = (
        f"step {number} of {total} ({recipe.steps[number - 1].describe()}) of recipe "
        f"{recipe.name!r} failed: {exc.message} {history}"
    )
    kind = NavigationBlocked if isinstance(exc, NavigationBlocked) else ToolError
    return kind(_hide(message, hidden))


def _hide(text: str, hidden: frozenset[str]) -> str:
    """``scrub``, and values too short for it (it leaves those under 3 characters): a
    parameter's value is masked wherever it appears whole, as a quoted word."""
    text = scrub(text, hidden)
    for value in hidden:
        if value and len(value) < 3:
            text = text.replace(repr(value), mask(value))
    return text


def _same_page(url: str, other: str) -> bool:
    a, b = urlsplit(url), urlsplit(other)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)
