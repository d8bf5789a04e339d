"""The Playwright scripts a recipe exports (recipes/export.py): Python that compiles, TypeScript
that the TypeScript compiler accepts against @playwright/test's own types, the locator each
step uses, dialogs answered before the step that opens them, and page text that can only ever
be a string literal (hostile quotes, backslashes, line breaks, ``${``, ``*/``, unicode)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabrelay.recipes.export import ROLES, env_name, export
from tabrelay.recipes.model import Locator, Param, Recipe, RecipeError, Step

ROOT = Path(__file__).resolve().parents[2]
TSCHECK = ROOT / "tests" / "typescript_check" / "node_modules"
TSC = TSCHECK / "typescript" / "bin" / "tsc"

HOSTILE = [
    "it's",
    'say "hi"',
    "back\\slash\\",
    "line\nbreak\r\nand\rreturn",
    "${process.exit(1)}",
    "`${x}`",
    "*/ process.exit(1); /*",
    "'''; import os; os._exit(1); '''",
    '"); process.exit(1); ("',
    "\u2028\u2029 separators",
    "caf\u00e9 \u00d7 \U0001f600 \u202e reversed",
    "nul\x00and\x07bell\x1b",
    "# not a comment",
    "\\u0041 \\x41 \\N{BULLET}",
    "}); process.exit(1); test(() => {",
    "{{ not a param }}",
]


def sample(text: str = "Ada", **extra: object) -> Recipe:
    """A recipe with one step of every kind."""
    fields: dict[str, object] = {
        "name": "order tea",
        "revision": 3,
        "created": 1_700_000_000.0,
        "origin": "agent",
        "steps": [
            Step(action="navigate", url="http://127.0.0.1:8000/recipes/order.html"),
            Step(
                action="type",
                target=Locator(role="textbox", name="Your name", label="Your name", css="#n"),
                text=text,
            ),
            Step(
                action="type",
                target=Locator(label="Password", css="#pw"),
                text="{{password}}",
                submit=True,
            ),
            Step(
                action="type",
                target=Locator(placeholder="Notes", css="#notes", frames=["iframe#inner"]),
                text=" and {{who}}",
                append=True,
            ),
            Step(
                action="select",
                target=Locator(role="combobox", name="Drink", css="#drink"),
                options=["tea", "coffee"],
            ),
            Step(action="check", target=Locator(test_id="gift", css="#gift"), checked=True),
            Step(action="check", target=Locator(role="checkbox", css="#news"), checked=False),
            Step(action="press", key="Tab", repeat=3),
            Step(action="press", key="Escape", target=Locator(text="Menu", css="#menu")),
            Step(action="hover", target=Locator(text="Menu", css="#menu")),
            Step(
                action="click",
                target=Locator(role="button", name="Continue", css="#go"),
                button="right",
                modifiers=["Shift", "Alt"],
            ),
            Step(action="click", target=Locator(css="div.row > span:nth-of-type(2)"), double=True),
            Step(action="navigate", history="back"),
            Step(action="navigate", history="forward"),
            Step(action="navigate", history="reload"),
            Step(action="click", target=Locator(role="button", name="Place order", css="#place")),
            Step(action="dialog", accept=True),
            Step(action="expect_text", text="Order for {{who}}"),
        ],
        "params": [
            Param(name="password", secret=True, description="the shop's password"),
            Param(name="who", default="Ada"),
        ],
        "final_url": "http://127.0.0.1:8000/recipes/done.html",
        "final_text": "Order for Ada: 2 \u00d7 tea",
    }
    fields.update(extra)
    return Recipe.model_validate(fields)


def python_literals(code: str) -> list[str]:
    """Every str constant in the module's syntax tree."""
    return [
        node.value
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def python_calls(code: str) -> list[str]:
    """Every statement in ``run()``'s body, unparsed, in order, but the ``at()`` that names
    each step for errors."""
    return [call for call in python_steps(code) if not call.startswith("at(")]


def python_steps(code: str) -> list[str]:
    tree = ast.parse(code)
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    return [ast.unparse(stmt) for stmt in run.body]


# --- Python -----------------------------------------------------------------------------------


def test_the_python_export_compiles_and_maps_every_step() -> None:
    code = export(sample(), "python")
    compile(code, "order_tea.py", "exec")

    calls = python_calls(code)
    assert calls == [
        "page.goto('http://127.0.0.1:8000/recipes/order.html')",
        "page.get_by_role('textbox', name='Your name', exact=True).fill('Ada')",
        "page.get_by_label('Password', exact=True).fill(params['password'])",
        "page.get_by_label('Password', exact=True).press('Enter')",
        "page.frame_locator('iframe#inner').get_by_placeholder('Notes', exact=True)"
        ".press('Control+End')",
        "page.frame_locator('iframe#inner').get_by_placeholder('Notes', exact=True)"
        ".press_sequentially(' and ' + params['who'])",
        "page.get_by_role('combobox', name='Drink', exact=True)"
        ".select_option(label=['tea', 'coffee'])",
        "page.get_by_test_id('gift').check()",
        "page.get_by_role('checkbox').uncheck()",
        "for _ in range(3):\n    page.keyboard.press('Tab')",
        "page.get_by_text('Menu', exact=True).press('Escape')",
        "page.get_by_text('Menu', exact=True).hover()",
        "page.get_by_role('button', name='Continue', exact=True)"
        ".click(button='right', modifiers=['Shift', 'Alt'])",
        "page.locator('div.row > span:nth-of-type(2)').dblclick()",
        "page.go_back()",
        "page.go_forward()",
        "page.reload()",
        # The dialog's handler is registered before the click that opens it.
        "page.once('dialog', lambda d: d.accept())",
        "page.get_by_role('button', name='Place order', exact=True).click()",
        "expect(page.get_by_text('Order for ' + params['who']).first).to_be_visible()",
        "expect(page).to_have_url('http://127.0.0.1:8000/recipes/done.html')",
        "expect(page.get_by_text('Order for Ada: 2 × tea').first).to_be_visible()",
    ]


def test_the_python_export_reads_parameters_from_the_environment_and_says_so() -> None:
    code = export(sample(), "python")
    header = code.split("\nfrom __future__")[0]

    assert "Recipe: 'order tea', revision 3" in header
    assert "TABRELAY_PASSWORD (secret, required): the shop's password" in header
    assert "TABRELAY_WHO (default Ada)" in header
    assert "CHROMIUM_PATH=/usr/bin/chromium TABRELAY_PASSWORD=... python order_tea.py" in header
    assert all(line.startswith("#") or not line for line in header.splitlines())
    # A secret has no default in the code; a non-secret parameter keeps its default.
    assert "param('TABRELAY_PASSWORD', what=" in code
    assert "param('TABRELAY_WHO', default='Ada', what=" in code
    assert "chromium = os.environ.get('CHROMIUM_PATH') or None" in code
    assert "executable_path=chromium," in code
    assert "SECRETS: tuple[str, ...] = ('password',)" in code
    assert "headless=not os.environ.get('TABRELAY_HEADED')" in code
    assert env_name(Param(name="otp_code", secret=True)) == "TABRELAY_OTP_CODE"


def test_each_step_is_named_before_it_runs_so_a_failure_says_which() -> None:
    steps = python_steps(export(sample(), "python"))
    assert steps[:3] == [
        "at('1. go to http://127.0.0.1:8000/recipes/order.html')",
        "page.goto('http://127.0.0.1:8000/recipes/order.html')",
        "at('2. type \\'Ada\\' into textbox \"Your name\"')",
    ]
    assert steps[-3] == "at('Where the recipe ended')"


def test_a_missing_parameter_stops_the_python_script_naming_the_variable(
    tmp_path: Path,
) -> None:
    """Run for real: parameters are read before Playwright starts, so no browser is needed."""
    script = tmp_path / "order_tea.py"
    script.write_text(export(sample(), "python"), encoding="utf-8")

    result = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Set the environment variable TABRELAY_PASSWORD: the recipe's secret parameter "
        "password (the shop's password)."
    )


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_only_ever_a_python_literal_that_reads_back(text: str) -> None:
    recipe = sample(
        text,
        final_url=f"http://x/{text}",
        final_text=text,
        params=[
            Param(name="password", secret=True, description=text),
            Param(name="who", default=text),
        ],
        steps=[
            *sample().steps[:-2],
            Step(action="click", target=Locator(role="button", name=text, css=text)),
            Step(action="dialog", accept=True, text=text),
            Step(action="select", target=Locator(label=text, css="#s"), options=[text]),
            Step(action="expect_text", text=text),
        ],
    )
    code = export(recipe, "python")

    compile(code, "hostile.py", "exec")
    literals = python_literals(code)
    assert literals.count(text) >= 6  # typed, name, dialog, option, expected, final text
    assert f"http://x/{text}" in literals
    # Each literal as emitted reads back as itself.
    assert repr(text) in code
    assert ast.literal_eval(repr(text)) == text
    # The only calls are the generated ones: nothing from the text became code.
    names = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    assert names <= {
        "annotations", "os", "sys", "Error", "Page", "expect", "sync_playwright", "RECIPE",
        "param", "run", "main", "page", "params", "str", "dict", "d", "playwright", "browser",
        "failure", "variable", "default", "what", "value", "_", "range", "print", "AssertionError",
        "__name__", "at", "STEP", "SECRETS", "tuple", "step", "message", "name", "chromium",
        "where",
    }  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_any_text_round_trips_through_a_python_literal(text: str) -> None:
    code = export(sample(text, final_text=text), "python")
    assert python_literals(code).count(text) >= 2


def test_the_first_two_lines_are_fixed_so_no_text_becomes_a_coding_declaration() -> None:
    recipe = sample(
        params=[
            Param(name="password", secret=True, description="# -*- coding: latin-1 -*-"),
            Param(name="who", default="vim: set fileencoding=latin-1"),
        ]
    )
    first, second = export(recipe, "python").splitlines()[:2]
    assert "coding" not in first + second
    assert first.startswith("# Exported by Tabrelay ")


# --- locators ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("locator", "python"),
    [
        (Locator(role="link", name="Home", text="Home", css="a"), "get_by_role('link', name="),
        (Locator(role="button", css="b"), "get_by_role('button').click()"),
        (Locator(role="button", name="", css="b"), "get_by_role('button').click()"),
        (Locator(role="mystery", name="X", label="L", css="b"), "get_by_label('L', exact=True)"),
        (Locator(role="generic", name="X", css="b"), "locator('b')"),
        (Locator(placeholder="P", test_id="t", css="b"), "get_by_placeholder('P', exact=True)"),
        (Locator(test_id="t", text="T", css="b"), "get_by_test_id('t')"),
        (Locator(text="T", css="b"), "get_by_text('T', exact=True)"),
        (Locator(css="b", frames=["#a", "iframe[name='b']"]), ".frame_locator('#a')"),
    ],
)
def test_each_locator_uses_the_first_way_it_has_in_strategy_order(
    locator: Locator, python: str
) -> None:
    recipe = sample(steps=[Step(action="click", target=locator)])
    line = python_calls(export(recipe, "python"))[0]
    assert python in line
    assert line.count("page.") == 1  # one locator, one chain


def test_frames_are_walked_from_the_top_document_down() -> None:
    locator = Locator(label="Card", css="#c", frames=["#outer", "iframe.inner"])
    recipe = sample(steps=[Step(action="check", target=locator, checked=True)])
    assert python_calls(export(recipe, "python"))[0] == (
        "page.frame_locator('#outer').frame_locator('iframe.inner')"
        ".get_by_label('Card', exact=True).check()"
    )
    assert (
        'await page.frameLocator("#outer").frameLocator("iframe.inner")'
        '.getByLabel("Card", { exact: true }).check();'
    ) in export(recipe, "typescript")


def test_playwright_knows_every_role_the_export_hands_it() -> None:
    import typing

    from playwright.sync_api import Page

    hints = typing.get_type_hints(Page.get_by_role)
    known = set(typing.get_args(hints["role"]))
    assert known >= ROLES
    assert known - ROLES == {"generic", "none", "presentation"}


# --- dialogs ----------------------------------------------------------------------------------


def test_dialogs_after_one_step_are_answered_in_order_from_one_registration() -> None:
    click = Step(action="click", target=Locator(role="button", name="Ask", css="#ask"))
    recipe = sample(
        steps=[
            Step(action="navigate", url="http://x/"),
            click,
            Step(action="dialog", accept=True, text="a {{who}}"),
            Step(action="dialog", accept=False),
            Step(action="navigate", history="reload"),
            Step(action="dialog", accept=True),
        ],
        final_url=None,
        final_text=None,
    )
    calls = python_calls(export(recipe, "python"))
    assert calls == [
        "page.goto('http://x/')",
        "page.once('dialog', lambda d: (page.once('dialog', lambda d: d.dismiss()), "
        "d.accept('a ' + params['who'])))",
        "page.get_by_role('button', name='Ask', exact=True).click()",
        "page.once('dialog', lambda d: d.accept())",
        "page.reload()",
    ]


def test_a_dialog_first_is_registered_first() -> None:
    recipe = sample(
        steps=[Step(action="dialog", accept=False), Step(action="navigate", url="http://x/")],
        final_url=None,
        final_text=None,
    )
    assert python_calls(export(recipe, "python")) == [
        "page.once('dialog', lambda d: d.dismiss())",
        "page.goto('http://x/')",
    ]


# --- TypeScript -------------------------------------------------------------------------------


def tsc(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    """The TypeScript compiler on ``code`` as a spec file, with @playwright/test's types."""
    assert TSC.is_file(), (
        "the TypeScript checker is not installed (tests/typescript_check); run "
        "`make typescript-check` (make test does it)"
    )
    (tmp_path / "node_modules").symlink_to(TSCHECK, target_is_directory=True)
    (tmp_path / "recipe.spec.ts").write_text(code, encoding="utf-8")
    options = {
        "strict": True,
        "noEmit": True,
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "types": ["node"],
        "skipLibCheck": True,
        "noImplicitReturns": True,
        "noFallthroughCasesInSwitch": True,
    }
    config = {"compilerOptions": options, "files": ["recipe.spec.ts"]}
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    return subprocess.run(
        ["node", str(TSC), "-p", str(tmp_path / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )


def test_the_typescript_export_type_checks_against_playwright_test(tmp_path: Path) -> None:
    code = export(sample(), "typescript")
    result = tsc(tmp_path, code)
    assert result.returncode == 0, result.stdout + result.stderr

    assert 'import { expect, test } from "@playwright/test";' in code
    assert code.count("\ntest(") == 1
    for line in [
        'await page.getByRole("textbox", { name: "Your name", exact: true }).fill("Ada");',
        'await page.getByLabel("Password", { exact: true }).fill(params.password);',
        'await page.getByRole("combobox", { name: "Drink", exact: true })'
        '.selectOption([{ label: "tea" }, { label: "coffee" }]);',
        'for (let i = 0; i < 3; i++) await page.keyboard.press("Tab");',
        'page.once("dialog", (d) => d.accept());',
        'await expect(page).toHaveURL("http://127.0.0.1:8000/recipes/done.html");',
        'await expect(page.getByText("Order for Ada: 2 \\u00d7 tea").first()).toBeVisible();',
        "executablePath: process.env.CHROMIUM_PATH || undefined,",
        "headless: !process.env.TABRELAY_HEADED,",
        'password: param("TABRELAY_PASSWORD", undefined, ',
        'who: param("TABRELAY_WHO", "Ada", ',
    ]:
        assert line in code, line
    assert code.index('page.once("dialog"') < code.index('name: "Place order"')


def test_the_typescript_check_rejects_code_that_is_wrong(tmp_path: Path) -> None:
    """The check can fail: a method @playwright/test does not have is refused."""
    code = export(sample(), "typescript").replace(".getByLabel(", ".getByLabelled(", 1)
    result = tsc(tmp_path, code)
    assert result.returncode != 0
    assert "getByLabelled" in result.stdout


def test_hostile_text_type_checks_and_is_only_ever_a_typescript_literal(tmp_path: Path) -> None:
    steps = list(sample().steps[:-2])
    for text in HOSTILE:
        steps += [
            Step(action="type", target=Locator(label=text, css=text), text=text),
            Step(action="click", target=Locator(role="button", name=text, css="#b")),
            Step(action="dialog", accept=True, text=text),
            Step(action="expect_text", text=text),
        ]
    recipe = sample(
        steps=steps,
        final_text=HOSTILE[3],
        params=[Param(name="password", secret=True, description=HOSTILE[4]), *sample().params[1:]],
    )
    code = export(recipe, "typescript")

    result = tsc(tmp_path, code)
    assert result.returncode == 0, result.stdout + result.stderr
    for text in HOSTILE:
        literal = json.dumps(text)
        assert literal in code
        assert json.loads(literal) == text
    # Outside string literals and comments, no text from the page is left.
    stripped = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', code)
    stripped = re.sub(r"//[^\n]*", "", stripped)
    assert "process.exit" not in stripped
    assert "${" not in stripped
    assert all(ord(c) < 128 for c in stripped)


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(RecipeError, match="choose python or typescript"):
        export(sample(), "ruby")  # type: ignore[arg-type]


def test_a_recipe_without_parameters_or_final_check_exports_in_both(tmp_path: Path) -> None:
    recipe = sample(
        steps=[Step(action="navigate", url="http://x/")], params=[], final_url=None, final_text=None
    )
    python = export(recipe, "python")
    compile(python, "plain.py", "exec")
    assert "Parameters: none." in python
    assert python_calls(python) == ["page.goto('http://x/')"]
    result = tsc(tmp_path, export(recipe, "typescript"))
    assert result.returncode == 0, result.stdout + result.stderr
