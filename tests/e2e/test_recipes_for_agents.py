"""Recipes end to end, as agents and the person use them: an agent's calls recorded as steps,
kept with `tabrelay recipe save`, replayed through MCP and the command line (one approval for the
whole recipe, the same guard), a page changed under step 3, and the export run with Playwright.
Real Chromium, the real extension, a real MCP client, the real CLI in its own process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer
from support.cli import run_cli
from tabrelay.config.paths import Paths
from tabrelay.recipes.model import Recipe

pytestmark = E2E

PASSWORD = "correct horse"  # the shop's password (tests/e2e/pages/recipes/order.html)


def cli_env(paths: Paths, **extra: str) -> dict[str, str]:
    return {
        "TABRELAY_HOME": str(paths.config_dir.parent),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": "/usr/bin:/bin",
        **extra,
    }


async def cli(paths: Paths, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``tabrelay ARGS`` in its own process, while this loop keeps serving the app."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "tabrelay", *args],
        env=cli_env(paths, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def place_an_order(agent: Agent, pages: PageServer, name: str = "Ada") -> int:
    """An agent orders two teas on the local shop, the way it would on any site."""
    tab = await agent.open(pages.url(f"recipes/order.html?run={uuid.uuid4().hex[:6]}"))
    snapshot = await agent.snapshot(tab)
    await agent.ok(
        "browser_fill_form",
        tab_id=tab,
        fields=[
            {"ref": ref(snapshot, "textbox", "Your name"), "value": name},
            {"ref": ref(snapshot, "textbox", "Password"), "value": PASSWORD},
            {"ref": ref(snapshot, "combobox", "Drink"), "value": "tea"},
            {"ref": ref(snapshot, "checkbox", "Gift wrap"), "value": True},
        ],
    )
    await agent.ok(
        "browser_type", tab_id=tab, ref=ref(snapshot, "spinbutton", "Quantity"), text="2"
    )
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Continue"))
    review = await agent.snapshot(tab)
    await agent.ok("browser_click", tab_id=tab, ref=ref(review, "button", "Place order"))
    await agent.ok("browser_handle_dialog", tab_id=tab, accept=True)
    await agent.ok("browser_wait_for", tab_id=tab, text=f"Order for {name}: 2 × tea")
    return tab


def files_under(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


async def test_an_agents_calls_become_a_recipe_saved_from_the_command_line(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    await place_an_order(agent, pages)
    recorder = app.harness.core.recorder
    latest = recorder.latest("agent")
    assert latest is not None and latest.client == "e2e-agent"
    steps, params = recorder.steps(latest.id)
    assert [s.action for s in steps] == [
        "navigate", "type", "type", "select", "check", "type", "click", "click", "dialog",
        "expect_text",
    ]  # fmt: skip
    assert steps[1].target is not None and (steps[1].target.role, steps[1].target.name) == (
        "textbox",
        "Your name",
    )
    assert steps[2].text == "{{password}}" and [p.name for p in params if p.secret] == ["password"]
    assert steps[6].target is not None and steps[6].target.name == "Continue"
    # Each step keeps what its call was judged to do (issue 25): the form filled with the
    # password and Continue (which submits it) use a credential, "Place order" pays; routine
    # steps say nothing.
    assert [s.effect for s in steps] == [
        None, "credential", "credential", "credential", "credential", None, "credential", "pay",
        None, None,
    ]  # fmt: skip
    # The password is in no file Tabrelay wrote: recordings, settings, logs, the command log.
    for path, data in files_under(module_paths.config_dir.parent).items():
        assert PASSWORD.encode() not in data, path

    listed = await cli(module_paths, "recipe", "list")
    assert listed.returncode == 0, listed.stderr
    assert latest.id in listed.stdout
    saved = await cli(module_paths, "recipe", "save", "order tea")
    assert saved.returncode == 0, saved.stderr
    assert 'click button "Place order"' in saved.stdout
    file = module_paths.recipes_dir / "order tea.json"
    assert file.stat().st_mode & 0o777 == 0o600
    recipe = Recipe.model_validate(json.loads(file.read_text()))
    assert recipe.final_text == "Order for Ada: 2 × tea"
    assert PASSWORD not in file.read_text()


async def test_a_saved_recipe_replays_through_mcp_with_one_approval(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    listed = await agent.ok("browser_list_recipes")
    assert "order tea" in listed and "password" in listed
    tab = await agent.open("about:blank")
    approvals = app.harness.tool_approver.requests
    before = len(approvals)
    result = await agent.ok(
        "browser_run_recipe", tab_id=tab, name="order tea", params={"password": PASSWORD}
    )
    assert "Order for Ada: 2 × tea" in result
    assert PASSWORD not in result
    asked = [r.tool for r in approvals[before:]]
    assert asked == ["browser_run_recipe"], asked  # once, not per step
    page = await browser.attach_page(pages.url("recipes/done.html"))
    assert await page.text_of("#result") == "Order for Ada: 2 × tea"
    log = app.harness.core.command_log
    assert log is not None
    rows = [r for r in log.recent(50) if r.tool == "browser_run_recipe"]
    assert rows and PASSWORD not in rows[0].arguments


async def test_a_wrong_secret_or_a_missing_one_fails_clearly(agent: Agent) -> None:
    tab = await agent.open("about:blank")
    missing = await agent.fails("browser_run_recipe", tab_id=tab, name="order tea")
    assert "needs a value for password" in missing
    wrong = await agent.fails(
        "browser_run_recipe",
        tab_id=tab,
        name="order tea",
        params={"password": "not-the-password-42"},
    )
    assert "not-the-password-42" not in wrong
    assert "step" in wrong


async def test_a_page_changed_under_step_3_stops_the_run_saying_which_step_and_what_is_near(
    agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    recipe = Recipe.model_validate(
        json.loads((module_paths.recipes_dir / "order tea.json").read_text())
    )
    changed = recipe.model_copy(
        update={
            "name": "order tea renamed",
            "steps": [
                recipe.steps[0].model_copy(
                    update={"url": pages.url("recipes/order.html?renamed=1")}
                ),
                *recipe.steps[1:],
            ],
        }
    )
    # The shop renamed "Password" to "Passphrase" and changed its id: step 3 cannot find it.
    (module_paths.recipes_dir / "order tea renamed.json").write_text(
        changed.model_dump_json(), encoding="utf-8"
    )
    tab = await agent.open("about:blank")
    await agent.ok("browser_navigate", tab_id=tab, url="about:blank")
    error = await agent.fails(
        "browser_run_recipe",
        tab_id=tab,
        name="order tea renamed",
        params={"password": PASSWORD},
        timeout=2,
    )
    assert "step 3 of 10" in error, error
    assert 'textbox "Password"' in error  # what it looked for
    assert "Passphrase" in error  # what the page offers near it
    assert PASSWORD not in error


async def test_the_command_line_runs_a_recipe_in_the_browser(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    tab = await agent.open("about:blank")
    done = await cli(
        module_paths,
        "recipe", "run", "order tea", "--tab", str(tab),
        TABRELAY_PASSWORD=PASSWORD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Order for Ada: 2 × tea" in done.stdout
    assert "step 1/" in done.stderr  # progress, as it ran
    # A secret on the command line, where other processes read it, is refused.
    refused = await cli(
        module_paths, "recipe", "run", "order tea", "--param", f"password={PASSWORD}"
    )
    assert refused.returncode == 2 and "never on the command line" in refused.stderr


async def test_the_exported_script_runs_with_playwright_in_a_fresh_profile(
    module_paths: Paths, tmp_path: Path
) -> None:
    script = tmp_path / "order_tea.py"
    run_cli(module_paths, "recipe", "export", "order tea", "--lang", "python", "-o", str(script))
    assert script.stat().st_mode & 0o777 == 0o600
    text = script.read_text()
    assert "get_by_role" in text and PASSWORD not in text
    env = {**os.environ, "CHROMIUM_PATH": "/usr/bin/chromium", "TABRELAY_PASSWORD": PASSWORD}
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("lang", ["python", "typescript"])
async def test_an_export_of_a_missing_recipe_says_what_is_saved(
    module_paths: Paths, lang: str
) -> None:
    done = await cli(module_paths, "recipe", "export", "no such", "--lang", lang)
    assert done.returncode == 1
    assert "no recipe named 'no such'" in done.stderr and "order tea" in done.stderr
