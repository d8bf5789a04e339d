"""The tool catalog: each tool's name (the contract), description, parameters and hints.

The endpoint publishes these as MCP tools; nothing else decides what agents can call. There is
no tool that changes approval policy, pairing or tokens (THREATS A2).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tabrelay.tools import content, diagnostics, navigation, screenshot, tabs
from tabrelay.tools.context import Params, Target, ToolContext, ToolResult

Runner = Callable[[ToolContext, Any], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: type[Params]
    run: Runner
    target: Target
    read_only: bool
    destructive: bool = False
    # Long tools report progress; the endpoint forwards it to the client.


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "browser_status",
        "Browser status",
        "Which browsers are connected (ids, versions, tabs, attached tabs), pending approvals, "
        "and whether the person paused agent access. Call this first.",
        tabs.StatusParams,
        tabs.status,
        target="none",
        read_only=True,
    ),
    ToolSpec(
        "browser_list_tabs",
        "List tabs",
        "The open tabs of a browser: id, title, URL, active, attached. Use the ids with other "
        "tools.",
        tabs.ListTabsParams,
        tabs.list_tabs,
        target="browser",
        read_only=True,
    ),
    ToolSpec(
        "browser_new_tab",
        "Open a new tab",
        "Open a new tab (in the 'Tabrelay' tab group) and optionally load a URL, waiting for "
        "it to load. Returns the new tab's id.",
        tabs.NewTabParams,
        tabs.new_tab,
        target="browser",
        read_only=False,
    ),
    ToolSpec(
        "browser_close_tab",
        "Close a tab",
        "Close a tab by id.",
        tabs.CloseTabParams,
        tabs.close_tab,
        target="tab",
        read_only=False,
        destructive=True,
    ),
    ToolSpec(
        "browser_activate_tab",
        "Bring a tab to the front",
        "Make a tab the active one in its window and focus the window.",
        tabs.ActivateTabParams,
        tabs.activate_tab,
        target="tab",
        read_only=False,
    ),
    ToolSpec(
        "browser_navigate",
        "Navigate",
        "Open a URL in a tab (default: the active tab), or go back, forward, or reload; waits "
        "for the page to load. Only http, https and about:blank.",
        navigation.NavigateParams,
        navigation.navigate,
        target="tab",
        read_only=False,
    ),
    ToolSpec(
        "browser_get_content",
        "Read the page",
        "The text of a tab's page, or of one part of it (a CSS selector). Long pages are cut "
        "with a marker that says how to read on.",
        content.ContentParams,
        content.get_content,
        target="tab",
        read_only=True,
    ),
    ToolSpec(
        "browser_evaluate",
        "Run JavaScript",
        "Evaluate a JavaScript expression in the page and return its JSON value. Powerful: the "
        "person is asked every time unless they allowed it for the site.",
        diagnostics.EvaluateParams,
        diagnostics.evaluate,
        target="tab",
        read_only=False,
        destructive=True,
    ),
    ToolSpec(
        "browser_screenshot",
        "Screenshot",
        "A screenshot of the visible part of a tab, scaled to at most 1280 px wide (JPEG by "
        "default).",
        screenshot.ScreenshotParams,
        screenshot.screenshot,
        target="tab",
        read_only=True,
    ),
)

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
