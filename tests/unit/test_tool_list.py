"""The tool list clients pay for: no larger than Playwright MCP's, every tool and argument kept,
and hints that follow one rule (tools/catalog.py)."""

from __future__ import annotations

import json

from tabrelay.approval.policy import NEVER_ALWAYS_TOOLS, READ_ONLY_TOOLS
from tabrelay.config.settings import Settings
from tabrelay.endpoint.server import listed, listed_json, tool_schema
from tabrelay.tools.catalog import TOOLS

# @playwright/mcp 0.0.83's tools/list result as compact JSON, measured by `make bench`
# (tests/bench/bench_tools_list.py, which measures ours over the wire the same way).
PLAYWRIGHT_MCP_TOOLS_LIST_BYTES = 20_296

# What each tool that is not read-only does to what the page or the person had.
DESTRUCTIVE = {
    "browser_close_tab": "the page and what was typed into it go",
    "browser_navigate": "leaves (or reloads) the page and what was typed into it",
    "browser_click": "may submit, delete, buy",
    "browser_type": "replaces the field's text, may press Enter",
    "browser_fill_form": "replaces the fields' values",
    "browser_select_option": "replaces the choice",
    "browser_press_key": "Enter submits, Backspace deletes",
    "browser_drag": "moves things (a card to another list, a file to a drop zone)",
    "browser_upload_file": "hands the person's files to the site",
    "browser_handle_dialog": "answers confirm() for the person",
    "browser_page_tool": "runs the page's own code, whatever it says it does",
    "browser_evaluate": "any script",
    "browser_cdp": "any command",
    "browser_run_recipe": "acts for the person: clicks, types and submits as the recipe says",
}
NOT_DESTRUCTIVE = {
    "browser_new_tab": "a new tab, nothing replaced",
    "browser_activate_tab": "only which tab is in front",
    "browser_hover": "only where the pointer is",
    "browser_scroll": "only what is in view",
}
IDEMPOTENT = {
    "browser_close_tab",  # a closed tab stays closed
    "browser_activate_tab",
    "browser_fill_form",  # the same values again
    "browser_select_option",
    "browser_hover",
}


def test_the_default_tool_list_is_no_larger_than_playwright_mcps() -> None:
    size = len(listed_json(Settings()).encode("utf-8"))
    assert size <= PLAYWRIGHT_MCP_TOOLS_LIST_BYTES, (
        f"tools/list is {size:,} bytes, over Playwright MCP's "
        f"{PLAYWRIGHT_MCP_TOOLS_LIST_BYTES:,}: shorten descriptions (tools/catalog.py) or "
        "the parameters' own"
    )


def test_every_tool_and_every_argument_is_listed() -> None:
    default = json.loads(listed_json(Settings()))["tools"]
    assert [t["name"] for t in default] == [s.name for s in TOOLS if not s.expert]
    expert = Settings(enable_cdp_tool=True)
    assert [s.name for s in listed(expert)] == [s.name for s in TOOLS]
    for spec in TOOLS:
        fields = {info.alias or name for name, info in spec.params.model_fields.items()}
        assert set(tool_schema(spec).schema["properties"]) == fields, spec.name


def test_read_only_tools_are_exactly_those_allowed_without_asking() -> None:
    # The catalog's read_only is the one truth the policy reads; this list pins it, so that
    # marking a tool read-only (allowed without asking by default) is a visible decision here.
    pinned = {
        "browser_status", "browser_list_tabs", "browser_snapshot", "browser_find",
        "browser_get_content", "browser_screenshot", "browser_console_messages",
        "browser_network_requests", "browser_wait_for",
        "browser_list_recipes",  # reads the saved recipes
        "browser_handoff",  # changes nothing itself: the person acts, then ends it; no approval
        "browser_request_access",  # changes nothing itself: its own dialog is the approval
    }  # fmt: skip
    assert pinned == READ_ONLY_TOOLS
    for spec in TOOLS:
        if spec.read_only:  # MCP: the other hints mean nothing on a read-only tool
            assert not spec.destructive and not spec.idempotent, spec.name


def test_destructive_where_it_loses_data_or_acts_for_the_person_and_nowhere_else() -> None:
    acting = {s.name for s in TOOLS if not s.read_only}
    assert acting == DESTRUCTIVE.keys() | NOT_DESTRUCTIVE.keys()
    assert {s.name for s in TOOLS if s.destructive} == DESTRUCTIVE.keys()
    typed = {s.name for s in TOOLS if s.secrets is not None}
    assert typed | NEVER_ALWAYS_TOOLS <= DESTRUCTIVE.keys()
    assert {s.name for s in TOOLS if s.idempotent} == IDEMPOTENT


def test_hints_go_out_without_the_ones_at_mcps_defaults() -> None:
    tools = {t["name"]: t for t in json.loads(listed_json(Settings(enable_cdp_tool=True)))["tools"]}
    assert tools["browser_snapshot"]["annotations"] == {"readOnlyHint": True}
    assert tools["browser_hover"]["annotations"] == {
        "destructiveHint": False,
        "idempotentHint": True,
    }
    assert tools["browser_click"]["annotations"] == {"destructiveHint": True}
    assert (
        tools["browser_select_option"]["annotations"] == tools["browser_fill_form"]["annotations"]
    )
    assert all("title" not in t["annotations"] for t in tools.values())
