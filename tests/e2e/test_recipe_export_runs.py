"""An exported recipe runs: a recipe written by hand for the recipes app (tests/e2e/pages/recipes:
a form with a password, a select, a checkbox, a navigation, a confirm() dialog and a result page)
is exported to Python and to TypeScript and run with Playwright (the Python package, and
@playwright/test) against Debian's Chromium in a fresh profile. It reaches the same outcome;
when the page no longer shows what the recipe expects, the script fails with a message that
says which step and what it looked for."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import pytest

from e2e.conftest import CHROMIUM, requires_chromium
from e2e.harness import PageServer
from tabrelay.recipes.export import export
from tabrelay.recipes.model import Locator, Param, Recipe, Step

pytestmark = [pytest.mark.e2e, requires_chromium]

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
PASSWORD = "correct horse"  # the recipes app's password (tests/e2e/pages/recipes/order.html)
RUN_TIMEOUT = 120.0


def order_recipe(pages: PageServer, *, final_text: str = "Order for Ada: 2 × tea") -> Recipe:
    """What an agent would have recorded ordering two teas on the recipes app."""
    return Recipe(
        name="order tea",
        created=1_700_000_000.0,
        origin="agent",
        steps=[
            Step(action="navigate", url=pages.url("recipes/order.html")),
            Step(
                action="type",
                target=Locator(role="textbox", name="Your name", label="Your name", css="#name"),
                text="Ada",
            ),
            Step(
                action="type",
                target=Locator(placeholder="you@example.com", css="#email"),
                text="ada@example.com",
            ),
            # A password field has no ARIA role: its label finds it.
            Step(
                action="type",
                target=Locator(label="Password", css="#password"),
                text="{{password}}",
            ),
            Step(
                action="select",
                target=Locator(role="combobox", name="Drink", label="Drink", css="#drink"),
                options=["tea"],
            ),
            Step(
                action="type",
                target=Locator(role="spinbutton", name="Quantity", css="#quantity"),
                text="{{quantity}}",
            ),
            Step(
                action="check",
                target=Locator(role="checkbox", name="Gift wrap", css="#gift"),
                checked=True,
            ),
            Step(action="click", target=Locator(role="button", name="Continue", css="#continue")),
            Step(action="expect_text", text="{{quantity}} × tea for Ada, gift wrapped"),
            Step(action="click", target=Locator(text="Place order", css="#place")),
            Step(action="dialog", accept=True),
        ],
        params=[
            Param(name="password", secret=True, description="the shop's password"),
            Param(name="quantity", default="2"),
        ],
        final_url=pages.url("recipes/done.html"),
        final_text=final_text,
    )


def run_export(
    recipe: Recipe, folder: Path, *, password: str | None = PASSWORD
) -> subprocess.CompletedProcess[str]:
    """The Python export run as a person would: its own process, Chromium from CHROMIUM_PATH,
    the secret from the environment. The process group is ended whatever happens."""
    assert CHROMIUM is not None
    script = folder / "order_tea.py"
    script.write_text(export(recipe, "python"), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),  # nothing of the developer's profile or Playwright's cache
        "CHROMIUM_PATH": CHROMIUM,
    }
    if password is not None:
        env["TABRELAY_PASSWORD"] = password
    process = subprocess.Popen(
        [str(PYTHON), str(script)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # a Chromium left behind, if any
        process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_the_exported_python_script_places_the_order_in_a_fresh_chromium(
    pages: PageServer, tmp_path: Path
) -> None:
    recipe = order_recipe(pages)
    result = run_export(recipe, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "Recipe 'order tea' ran to the end."
    # It went through every page of the app, and the secret is in no file it was given.
    for page in ("order.html", "review.html", "done.html"):
        assert pages.hits(pages.url(f"recipes/{page}")), page
    assert PASSWORD not in (tmp_path / "order_tea.py").read_text(encoding="utf-8")


def test_a_page_that_no_longer_shows_the_final_text_fails_the_script_readably(
    pages: PageServer, tmp_path: Path
) -> None:
    recipe = order_recipe(pages, final_text="Order for Grace: 2 × tea")
    result = run_export(recipe, tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith("Recipe 'order tea' failed at step Where the recipe ended: "), (
        result.stderr
    )
    assert 'get_by_text("Order for Grace: 2 × tea")' in result.stderr
    # Playwright says what the page shows instead.
    assert 'heading "Order for Ada: 2 × tea"' in result.stderr
    assert "Traceback" not in result.stderr
    assert "ran to the end" not in result.stdout


def test_a_wrong_secret_stops_the_script_at_the_step_that_expected_the_next_page(
    pages: PageServer, tmp_path: Path
) -> None:
    """The password is really typed from TABRELAY_PASSWORD: a wrong one keeps the app on its
    form, and the check after Continue fails naming the step and what it waited for. The
    value is not in the message, though Playwright's page snapshot shows the field's value."""
    wrong = "not-the-shop-password"
    result = run_export(order_recipe(pages), tmp_path, password=wrong)

    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith(
        "Recipe 'order tea' failed at step 9. see '{{quantity}} × tea for Ada, gift wrapped': "
    ), result.stderr
    assert 'get_by_text("2 × tea for Ada, gift wrapped")' in result.stderr
    assert "alert: Wrong password." in result.stderr
    assert wrong not in result.stderr + result.stdout
    assert 'textbox "Password": [secret]' in result.stderr


TS_MODULES = ROOT / "tests" / "typescript_check" / "node_modules"


def run_typescript_export(recipe: Recipe, folder: Path) -> subprocess.CompletedProcess[str]:
    """The TypeScript export run with @playwright/test (from tests/typescript_check)."""
    assert CHROMIUM is not None
    cli = TS_MODULES / "@playwright" / "test" / "cli.js"
    assert cli.is_file(), (
        "@playwright/test is not installed (tests/typescript_check); run `make "
        "typescript-check` (make test does it)"
    )
    folder.mkdir()
    (folder / "node_modules").symlink_to(TS_MODULES, target_is_directory=True)
    (folder / "order_tea.spec.ts").write_text(export(recipe, "typescript"), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "CHROMIUM_PATH": CHROMIUM,
        "TABRELAY_PASSWORD": PASSWORD,
    }
    process = subprocess.Popen(
        ["node", str(cli), "test", "--reporter=line", "--workers=1", "order_tea.spec.ts"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=RUN_TIMEOUT)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, "")


def test_the_typescript_export_runs_with_playwright_test_too(
    pages: PageServer, tmp_path: Path
) -> None:
    passed = run_typescript_export(order_recipe(pages), tmp_path / "ok")
    assert passed.returncode == 0, passed.stdout
    assert "1 passed" in passed.stdout

    failed = run_typescript_export(
        order_recipe(pages, final_text="Order for Grace: 2 × tea"), tmp_path / "changed"
    )
    assert failed.returncode == 1, failed.stdout
    assert "1 failed" in failed.stdout
    assert "Where the recipe ended" in failed.stdout
    assert "getByText('Order for Grace: 2 × tea')" in failed.stdout
