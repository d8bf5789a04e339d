"""Every listed tool, once, on a real page: its structured content matches the outputSchema it
declares (the MCP SDK client checks each result against it), a tool that returns structured
content declares one, and a tool marked read-only leaves the page as it found it.

Generic over the catalog: a tool added later needs a call in ``CALLS`` or this fails.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer
from support.mcp import text_of
from tabrelay.recipes.model import Recipe, Step
from tabrelay.tools.catalog import TOOLS, ToolSpec

pytestmark = E2E

Arguments = Callable[[int, Path], dict[str, Any]]
FORM, WIDGETS, DIALOGS, LONG = (
    "tools/form.html", "tools/widgets.html", "tools/dialogs.html", "tools/long.html",
)  # fmt: skip

# Each tool's call: the page it runs on and its arguments (given the tab and a folder of files).
CALLS: dict[str, tuple[str, Arguments]] = {
    "browser_status": (FORM, lambda tab, _: {}),
    "browser_list_tabs": (FORM, lambda tab, _: {}),
    "browser_new_tab": (FORM, lambda tab, _: {"url": "about:blank"}),
    "browser_close_tab": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_activate_tab": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_navigate": (FORM, lambda tab, _: {"tab_id": tab, "url": "about:blank"}),
    "browser_wait_for": (FORM, lambda tab, _: {"tab_id": tab, "text": "Place an order"}),
    "browser_snapshot": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_find": (FORM, lambda tab, _: {"tab_id": tab, "role": "button"}),
    "browser_get_content": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_screenshot": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_click": (WIDGETS, lambda tab, _: {"tab_id": tab, "selector": "#counter"}),
    "browser_type": (FORM, lambda tab, _: {"tab_id": tab, "selector": "#name", "text": "Ada"}),
    "browser_fill_form": (
        FORM,
        lambda tab, _: {"tab_id": tab, "fields": [{"selector": "#gift", "value": True}]},
    ),
    "browser_select_option": (
        FORM,
        lambda tab, _: {"tab_id": tab, "selector": "#size", "values": ["Large"]},
    ),
    "browser_hover": (WIDGETS, lambda tab, _: {"tab_id": tab, "selector": "#hover-me"}),
    "browser_press_key": (
        WIDGETS,
        lambda tab, _: {"tab_id": tab, "selector": "#keyboard", "key": "a"},
    ),
    "browser_scroll": (LONG, lambda tab, _: {"tab_id": tab, "direction": "down"}),
    "browser_drag": (
        WIDGETS,
        lambda tab, _: {"tab_id": tab, "source_selector": "#source", "target_selector": "#target"},
    ),
    "browser_upload_file": (
        WIDGETS,
        lambda tab, files: {"tab_id": tab, "selector": "#upload", "paths": [str(files / "a.txt")]},
    ),
    "browser_handle_dialog": (DIALOGS, lambda tab, _: {"tab_id": tab, "accept": True}),
    "browser_page_tool": (
        "reach/webmcp.html",
        lambda tab, _: {"tab_id": tab, "name": "search_teas", "arguments": {"q": "green"}},
    ),
    # Nobody answers in this test: the handoff ends by its timeout, the banner gone.
    "browser_handoff": (
        FORM,
        lambda tab, _: {"tab_id": tab, "reason": "check the form", "timeout": 10},
    ),
    # The person approves the plan (this module's scripted answer).
    "browser_request_access": (
        FORM,
        lambda tab, _: {"purpose": "check the form", "sites": ["https://example.com"]},
    ),
    "browser_list_recipes": (FORM, lambda tab, _: {}),
    "browser_run_recipe": (FORM, lambda tab, _: {"tab_id": tab, "name": "press escape"}),
    "browser_console_messages": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_network_requests": (FORM, lambda tab, _: {"tab_id": tab}),
    "browser_evaluate": (FORM, lambda tab, _: {"tab_id": tab, "expression": "1 + 1"}),
    "browser_cdp": (
        FORM,
        lambda tab, _: {"tab_id": tab, "method": "DOM.getDocument", "params": '{"depth": 1}'},
    ),
}

# What a person would notice changed on a page: where it is, what it shows, what is typed.
FINGERPRINT = """JSON.stringify({
  url: location.href, title: document.title, x: scrollX, y: scrollY,
  html: document.documentElement.outerHTML,
  fields: [...document.querySelectorAll('input, textarea, select')]
    .map((e) => [e.value, e.checked, e.selectedIndex]),
  focus: document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : null,
})"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def files(app: AppUnderTest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the person allowed uploads from; browser_cdp turned on by the person."""
    folder = tmp_path_factory.mktemp("uploads")
    (folder / "a.txt").write_text("hello")

    def allow(settings: Any) -> None:
        settings.upload_dirs = [str(folder)]
        settings.enable_cdp_tool = True

    await asyncio.to_thread(app.harness.core.settings_store.update, allow)
    press = Recipe(
        name="press escape", created=time.time(), origin="agent",
        steps=[Step(action="press", key="Escape")],
    )  # fmt: skip
    await asyncio.to_thread(app.harness.core.recipes.save, press)
    return folder


async def opened(agent: Agent, browser: ExtensionBrowser, url: str) -> tuple[int, Page]:
    url = f"{url}?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    return tab, await browser.attach_page(url)


async def test_every_listed_tool_has_a_call_here(agent: Agent, files: Path) -> None:
    listed = {t.name for t in (await agent.client.list_tools()).tools}
    assert listed == {s.name for s in TOOLS}  # browser_cdp too: the person turned it on
    assert listed <= CALLS.keys(), f"add a call for {sorted(listed - CALLS.keys())} to CALLS"


@pytest.mark.parametrize("spec", TOOLS, ids=lambda spec: spec.name)
async def test_each_tool_returns_what_it_declares_and_read_only_ones_change_nothing(
    spec: ToolSpec,
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    files: Path,
) -> None:
    await agent.client.list_tools()  # the client's outputSchemas, with browser_cdp on
    page_name, arguments = CALLS[spec.name]
    tab, page = await opened(agent, browser, pages.url(page_name))
    if spec.name == "browser_handle_dialog":  # something to answer
        await agent.ok("browser_click", tab_id=tab, selector="#confirm")
    before = await page.evaluate(FINGERPRINT) if spec.read_only else None
    # The SDK client validates structured content against the tool's outputSchema, and fails
    # the call if a tool with one returns none.
    result = await agent.call(spec.name, **arguments(tab, files))
    assert not result.is_error, f"{spec.name}: {text_of(result)}"
    if result.structured_content is not None:
        assert spec.output is not None, f"{spec.name} returns structured content: declare it"
    if spec.read_only:
        after = await page.evaluate(FINGERPRINT)
        assert json.loads(after) == json.loads(before), f"{spec.name} changed the page"
