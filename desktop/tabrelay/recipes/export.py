"""A recipe as a runnable Playwright script: Python (``playwright.sync_api``) or TypeScript
(``@playwright/test``, one ``test``).

Every piece of text from a recipe (URLs, typed text, names, keys, selectors, descriptions) was
on a web page or typed by someone, so it enters the code only as a string literal escaped for
the language, or in a comment with every line break and control character escaped: page text
can never become code. Only the text is built here; writing the file is the caller's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from tabrelay import __version__
from tabrelay.recipes.model import PARAM, Locator, Param, Recipe, RecipeError, Step

Lang = Literal["python", "typescript"]
ENV_PREFIX = "TABRELAY_"
# Playwright's getByRole takes these (its AriaRole type); another role goes to the next way.
# "generic", "none" and "presentation" name no element a person would point at.
ROLES = frozenset(
    {
        "alert",
        "alertdialog",
        "application",
        "article",
        "banner",
        "blockquote",
        "button",
        "caption",
        "cell",
        "checkbox",
        "code",
        "columnheader",
        "combobox",
        "complementary",
        "contentinfo",
        "definition",
        "deletion",
        "dialog",
        "directory",
        "document",
        "emphasis",
        "feed",
        "figure",
        "form",
        "grid",
        "gridcell",
        "group",
        "heading",
        "img",
        "insertion",
        "link",
        "list",
        "listbox",
        "listitem",
        "log",
        "main",
        "marquee",
        "math",
        "menu",
        "menubar",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "meter",
        "navigation",
        "note",
        "option",
        "paragraph",
        "progressbar",
        "radio",
        "radiogroup",
        "region",
        "row",
        "rowgroup",
        "rowheader",
        "scrollbar",
        "search",
        "searchbox",
        "separator",
        "slider",
        "spinbutton",
        "status",
        "strong",
        "subscript",
        "superscript",
        "switch",
        "tab",
        "table",
        "tablist",
        "tabpanel",
        "term",
        "textbox",
        "time",
        "timer",
        "toolbar",
        "tooltip",
        "tree",
        "treegrid",
        "treeitem",
    }
)
COMMENT_WIDTH = 100


def env_name(param: Param) -> str:
    """The environment variable a script reads ``param`` from: ``TABRELAY_PASSWORD``."""
    return ENV_PREFIX + param.name.upper()


def export(recipe: Recipe, lang: Lang) -> str:
    """The script's text.

    Raises:
        RecipeError: ``lang`` is neither "python" nor "typescript".
    """
    if lang == "python":
        return _Script(recipe, _PYTHON).text()
    if lang == "typescript":
        return _Script(recipe, _TYPESCRIPT).text()
    raise RecipeError(f"cannot export to {lang!r}: choose python or typescript")


# --- what differs between the languages -----------------------------------------------------


@dataclass(frozen=True)
class _Lang:
    name: str
    comment: str  # the line-comment mark
    literal: Callable[[str], str]  # a string literal that reads back as the same text
    indent: str
    statement: Callable[[str], str]  # an awaited call in TypeScript, a plain one in Python
    param: Callable[[str], str]  # the expression of a parameter's value
    call: Callable[[str, str], str]  # a method call: (receiver.method, arguments)
    kwargs: Callable[[Sequence[tuple[str, str]]], str]  # options: [(python name, code)]


def _py_kwargs(options: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{k}={v}" for k, v in options)


def _ts_kwargs(options: Sequence[tuple[str, str]]) -> str:
    if not options:
        return ""
    return "{ " + ", ".join(f"{_camel(k)}: {v}" for k, v in options) + " }"


def _camel(name: str) -> str:
    if name == "to_have_url":
        return "toHaveURL"
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _args(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


_PYTHON = _Lang(
    name="python",
    comment="#",
    literal=repr,  # Python's own repr of a str is a literal that ast.literal_eval reads back
    indent="    ",
    statement=lambda code: code,
    param=lambda name: f"params[{name!r}]",
    call=lambda method, args: f"{method}({args})",
    kwargs=_py_kwargs,
)
_TYPESCRIPT = _Lang(
    name="typescript",
    comment="//",
    # ASCII-only JSON is a JavaScript string literal: U+2028/2029 and every non-ASCII character
    # escaped, surrogate pairs as UTF-16 (what a JavaScript string is).
    literal=lambda text: json.dumps(text, ensure_ascii=True),
    indent="  ",
    statement=lambda code: f"await {code};",
    param=lambda name: f"params.{name}",
    call=lambda method, args: f"{_camel_method(method)}({args})",
    kwargs=_ts_kwargs,
)


def _camel_method(chain: str) -> str:
    """``page.frame_locator(...).get_by_role`` style chains are built with Python's names; the
    last method is renamed here (the earlier ones were renamed when they were built)."""
    receiver, dot, method = chain.rpartition(".")
    return f"{receiver}{dot}{_camel(method)}"


def _comment_text(text: str, width: int = COMMENT_WIDTH) -> str:
    """Text fit for one line comment: line breaks and other unprintable characters escaped."""
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return out if len(out) <= width else out[: width - 1] + "…"


# --- the script -----------------------------------------------------------------------------


class _Script:
    def __init__(self, recipe: Recipe, lang: _Lang) -> None:
        self.recipe = recipe
        self.lang = lang

    def text(self) -> str:
        body = self._steps() + self._final()
        if self.lang is _PYTHON:
            return self._python(body)
        return self._typescript(body)

    # The parts both share.

    def _header(self) -> list[str]:
        r = self.recipe
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        # The first two lines are fixed: Python reads a coding declaration there.
        lines = [
            f"Exported by Tabrelay {__version__} from a recipe: a Playwright script.",
            "Generated code; every text from the recipe is a quoted literal.",
            f"Recipe: {r.name!r}, revision {r.revision}, recorded from "
            + ("an agent session" if r.origin == "agent" else "a demonstration")
            + f", {len(r.steps)} steps; exported {when}.",
            "",
            "Run it:",
        ]
        env = " ".join(f"{env_name(p)}=..." for p in r.params if p.default is None)
        env = f"{env} " if env else ""
        if self.lang is _PYTHON:
            lines += [
                "  pip install playwright",
                f"  CHROMIUM_PATH=/usr/bin/chromium {env}python {_file_name(r.name)}.py",
            ]
        else:
            lines += [
                "  npm install --save-dev @playwright/test",
                f"  CHROMIUM_PATH=/usr/bin/chromium {env}npx playwright test "
                f"{_file_name(r.name)}.spec.ts",
            ]
        lines += [
            "CHROMIUM_PATH: the Chromium to run (unset: Playwright's own, from "
            "`playwright install chromium`).",
            "TABRELAY_HEADED=1 shows the browser window; by default it runs headless.",
            "",
        ]
        if r.params:
            lines.append("Parameters, read from environment variables:")
            for p in r.params:
                if p.secret:
                    how = "secret, required"
                elif p.default is None:
                    how = "required"
                else:
                    how = f"default {_comment_text(p.default, 40)}"
                about = f": {_comment_text(p.description, 60)}" if p.description else ""
                lines.append(f"  {env_name(p)} ({how}){about}")
        else:
            lines.append("Parameters: none.")
        return [f"{self.lang.comment} {line}".rstrip() for line in lines]

    def _steps(self) -> list[list[str]]:
        """Each step's statements, a comment first; a dialog's handler goes before the step
        that opens it (Playwright dismisses a dialog nobody listens for)."""
        out: list[list[str]] = []
        steps = self.recipe.steps
        i = 0
        total = len(steps)
        while i < total:
            step = steps[i]
            if step.action == "dialog":
                # Dialogs right after a step: registered before that step, answered in order.
                j = i
                while j < total and steps[j].action == "dialog":
                    j += 1
                group = steps[i:j]
                numbers = ", ".join(str(n + 1) for n in range(i, j))
                what = "; ".join(s.describe() for s in group)
                listen = f'page.once("dialog", {self._dialog(group)})'
                code = [
                    self._comment(f"{numbers}. {what} (answered when it opens)"),
                    listen if self.lang is _PYTHON else f"{listen};",
                ]
                if out and i > 0:
                    out.insert(len(out) - 1, code)
                else:
                    out.append(code)
                i = j
                continue
            out.append([self._comment(f"{i + 1}. {step.describe()}"), *self._step(step)])
            i += 1
        return out

    def _final(self) -> list[list[str]]:
        r = self.recipe
        code: list[str] = []
        if r.final_url is not None:
            code.append(self._expect("page", "to_have_url", self.lang.literal(r.final_url)))
        if r.final_text is not None:
            code.append(self._expect_text(self.lang.literal(r.final_text), r.final_text))
        if not code:
            return []
        return [[self._comment("Where the recipe ended"), *code]]

    def _comment(self, text: str) -> str:
        return f"{self.lang.comment} {_comment_text(text)}"

    def _text(self, text: str) -> str:
        """``text`` as an expression: literals joined with the parameters it uses."""
        parts: list[str] = []
        at = 0
        for match in PARAM.finditer(text):
            if match.start() > at:
                parts.append(self.lang.literal(text[at : match.start()]))
            parts.append(self.lang.param(match.group(1)))
            at = match.end()
        if at < len(text) or not parts:
            parts.append(self.lang.literal(text[at:]))
        return " + ".join(parts)

    def _locator(self, loc: Locator) -> str:
        lit = self.lang.literal
        py = self.lang is _PYTHON
        code = "page"
        for frame in loc.frames:
            code += f".{'frame_locator' if py else 'frameLocator'}({lit(frame)})"
        exact = ("exact", "True" if py else "true")
        for strategy, value in loc.strategies():
            if strategy == "role" and value in ROLES:
                options = [("name", lit(loc.name)), exact] if loc.name else []
                method = "get_by_role"
                args = _args(lit(value), self.lang.kwargs(options))
            elif strategy in ("label", "placeholder", "text"):
                method = f"get_by_{strategy}"
                args = _args(lit(value), self.lang.kwargs([exact]))
            elif strategy == "test_id":
                method, args = "get_by_test_id", lit(value)
            elif strategy == "css":
                method, args = "locator", lit(value)
            else:
                continue  # a role Playwright does not know
            return self.lang.call(f"{code}.{method}", args)
        raise AssertionError("a locator always has css")  # pragma: no cover

    def _act(self, receiver: str, method: str, *args: str) -> str:
        return self.lang.statement(self.lang.call(f"{receiver}.{method}", _args(*args)))

    def _step(self, step: Step) -> list[str]:
        lit = self.lang.literal
        py = self.lang is _PYTHON
        target = self._locator(step.target) if step.target is not None else None
        match step.action:
            case "navigate":
                if step.url is not None:
                    return [self._act("page", "goto", lit(step.url))]
                moves = {"back": "go_back", "forward": "go_forward", "reload": "reload"}
                return [self._act("page", moves[str(step.history)])]
            case "click":
                assert target is not None
                options: list[tuple[str, str]] = []
                if step.button != "left":
                    options.append(("button", lit(step.button)))
                if step.modifiers:
                    listed = ", ".join(lit(m) for m in step.modifiers)
                    options.append(("modifiers", f"[{listed}]"))
                method = "dblclick" if step.double else "click"
                return [self._act(target, method, self.lang.kwargs(options))]
            case "type":
                assert target is not None
                assert step.text is not None
                text = self._text(step.text)
                if step.append:
                    # The caret to the end first: what the field held stays, as it did.
                    code = [
                        self._act(target, "press", lit("Control+End")),
                        self._act(target, "press_sequentially", text),
                    ]
                else:
                    code = [self._act(target, "fill", text)]
                if step.submit:
                    code.append(self._act(target, "press", lit("Enter")))
                return code
            case "select":
                assert target is not None
                if py:
                    labels = ", ".join(lit(o) for o in step.options)
                    return [self._act(target, "select_option", f"label=[{labels}]")]
                labels = ", ".join(f"{{ label: {lit(o)} }}" for o in step.options)
                return [self._act(target, "select_option", f"[{labels}]")]
            case "check":
                assert target is not None
                return [self._act(target, "check" if step.checked else "uncheck")]
            case "press":
                assert step.key is not None
                receiver = target if target is not None else "page.keyboard"
                press = self._act(receiver, "press", lit(step.key))
                if step.repeat == 1:
                    return [press]
                if py:
                    return [f"for _ in range({step.repeat}):", f"{self.lang.indent}{press}"]
                return [f"for (let i = 0; i < {step.repeat}; i++) {press}"]
            case "hover":
                assert target is not None
                return [self._act(target, "hover")]
            case "expect_text":
                assert step.text is not None
                return [self._expect_text(self._text(step.text), step.text)]
            case "dialog":  # pragma: no cover - grouped in _steps
                raise AssertionError("dialogs are registered before the step that opens them")
        raise AssertionError(step.action)  # pragma: no cover

    def _expect(self, subject: str, matcher: str, *args: str) -> str:
        return self._act(f"expect({subject})", matcher, *args)

    def _expect_text(self, code: str, text: str) -> str:
        if "\n" in text.strip():
            # Text over several lines spans elements: the page as a whole must contain it.
            body = self.lang.call("page.locator", self.lang.literal("body"))
            return self._expect(body, "to_contain_text", code)
        found = self.lang.call("page.get_by_text", code)
        first = f"{found}.first" if self.lang is _PYTHON else f"{found}.first()"
        return self._expect(first, "to_be_visible")

    def _dialog(self, group: Sequence[Step]) -> str:
        """A handler answering the first dialog of ``group`` that, before it answers, listens
        for the next (so a dialog opened right after another is never missed)."""
        step, rest = group[0], group[1:]
        py = self.lang is _PYTHON
        if step.accept:
            answer = f"d.accept({self._text(step.text) if step.text is not None else ''})"
        else:
            answer = "d.dismiss()"
        if not rest:
            return f"lambda d: {answer}" if py else f"(d) => {answer}"
        then = f'page.once("dialog", {self._dialog(rest)})'
        if py:
            return f"lambda d: ({then}, {answer})"
        return f"(d) => {{ {then}; void {answer}; }}"

    # Each language's frame.

    def _python(self, body: list[list[str]]) -> str:
        r = self.recipe
        ind = self.lang.indent
        params = [
            f"{ind}{ind}{p.name!r}: param({env_name(p)!r}, "
            + (f"default={self.lang.literal(p.default)}, " if p.default is not None else "")
            + f"what={self.lang.literal(_what(p))}),"
            for p in r.params
        ]
        steps = []
        for block in body:
            # The comment's text, named again when the step fails.
            title = block[0].removeprefix("# ").strip()
            steps += [f"{ind}at({self.lang.literal(title)})", *(f"{ind}{x}" for x in block[1:]), ""]
        secrets = ", ".join(repr(p.name) for p in r.params if p.secret)
        return "\n".join(
            [
                *self._header(),
                "",
                "from __future__ import annotations",
                "",
                "import os",
                "import sys",
                "",
                "from playwright.sync_api import Error, Page, expect, sync_playwright",
                "",
                f"RECIPE = {r.name!r}",
                f"SECRETS: tuple[str, ...] = ({secrets}{',' if secrets else ''})"
                "  # never printed, even in Playwright's errors",
                "STEP = ['']  # the step running, named when it fails",
                "",
                "",
                "def param(variable: str, default: str | None = None, what: str = '') -> str:",
                f"{ind}value = os.environ.get(variable, default)",
                f"{ind}if value is None:",
                f"{ind}{ind}sys.exit(f'Set the environment variable {{variable}}: {{what}}.')",
                f"{ind}return value",
                "",
                "",
                "def at(step: str) -> None:",
                f"{ind}STEP[0] = step",
                "",
                "",
                "def run(page: Page, params: dict[str, str]) -> None:",
                *steps,
                "",
                "def main() -> None:",
                f"{ind}# Every parameter first: a missing one stops the script before Chromium.",
                f"{ind}params: dict[str, str] = {{",
                *params,
                f"{ind}}}",
                f"{ind}chromium = os.environ.get('CHROMIUM_PATH') or None",
                f"{ind}with sync_playwright() as playwright:",
                f"{ind}{ind}try:",
                f"{ind}{ind}{ind}browser = playwright.chromium.launch(",
                f"{ind}{ind}{ind}{ind}executable_path=chromium,",
                f"{ind}{ind}{ind}{ind}headless=not os.environ.get('TABRELAY_HEADED'),",
                f"{ind}{ind}{ind})",
                f"{ind}{ind}except Error as failure:",
                f"{ind}{ind}{ind}where = chromium or 'the one Playwright installed'",
                f"{ind}{ind}{ind}sys.exit(f'Could not start Chromium ({{where}}): {{failure}}')",
                f"{ind}{ind}try:",
                f"{ind}{ind}{ind}run(browser.new_page(), params)",
                f"{ind}{ind}except (Error, AssertionError) as failure:",
                f"{ind}{ind}{ind}message = str(failure)",
                f"{ind}{ind}{ind}for name in SECRETS:",
                f"{ind}{ind}{ind}{ind}if params[name]:",
                f"{ind}{ind}{ind}{ind}{ind}message = message.replace(params[name], '[secret]')",
                f"{ind}{ind}{ind}sys.exit("
                "f'Recipe {RECIPE!r} failed at step {STEP[0]}: {message}')",
                f"{ind}{ind}finally:",
                f"{ind}{ind}{ind}browser.close()",
                f"{ind}print(f'Recipe {{RECIPE!r}} ran to the end.')",
                "",
                "",
                "if __name__ == '__main__':",
                f"{ind}main()",
                "",
            ]
        )

    def _typescript(self, body: list[list[str]]) -> str:
        r = self.recipe
        ind = self.lang.indent
        lit = self.lang.literal
        params = [
            f"{ind}{ind}{p.name}: param({lit(env_name(p))}"
            + (f", {lit(p.default)}" if p.default is not None else ", undefined")
            + f", {lit(_what(p))}),"
            for p in r.params
        ]
        steps = []
        for number, block in enumerate(body, 1):
            title = block[0].removeprefix("// ").strip()
            steps.append(f"{ind}await test.step({lit(title or str(number))}, async () => {{")
            steps += [f"{ind}{ind}{line}" for line in block[1:]]
            steps.append(f"{ind}}});")
        return "\n".join(
            [
                *self._header(),
                "",
                'import { expect, test } from "@playwright/test";',
                "",
                "function param(variable: string, fallback: string | undefined, what: string)"
                ": string {",
                f"{ind}const value = process.env[variable] ?? fallback;",
                f"{ind}if (value === undefined) {{",
                f'{ind}{ind}throw new Error("Set the environment variable " + variable + ": "'
                ' + what + ".");',
                f"{ind}}}",
                f"{ind}return value;",
                "}",
                "",
                "test.use({",
                f"{ind}headless: !process.env.TABRELAY_HEADED,",
                f"{ind}launchOptions: {{",
                f"{ind}{ind}executablePath: process.env.CHROMIUM_PATH || undefined,",
                f"{ind}}},",
                "});",
                "",
                f"test({lit('recipe ' + r.name)}, async ({{ page }}) => {{",
                f"{ind}const params = {{",
                *params,
                f"{ind}}};",
                f"{ind}void params;" if not r.params else "",
                *steps,
                "});",
                "",
            ]
        )


def _what(param: Param) -> str:
    """How a missing parameter's message names it."""
    kind = "the recipe's secret parameter" if param.secret else "the recipe's parameter"
    return f"{kind} {param.name}" + (f" ({param.description})" if param.description else "")


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_").lower() or "recipe"
