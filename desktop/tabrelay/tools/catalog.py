"""The tool catalog: each tool's name (the contract), description, parameters and hints.

The endpoint publishes these as MCP tools; nothing else decides what agents can call. There is
no tool that changes approval policy, pairing or tokens (THREATS A2). ``browser_cdp`` is listed
only while the person has turned it on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tabrelay.tools import (
    actions,
    content,
    diagnostics,
    expert,
    forms,
    navigation,
    screenshot,
    snapshot,
    tabs,
    wait,
)
from tabrelay.tools.context import Params, TargetKind, ToolContext, ToolResult
from tabrelay.tools.redaction import SecretFields

Runner = Callable[[ToolContext, Any], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: type[Params]
    run: Runner
    target: TargetKind
    read_only: bool
    destructive: bool = False
    expert: bool = False  # listed only when the person enabled expert tools
    secrets: SecretFields | None = None  # arguments that may carry typed secrets


def _spec(
    name: str, title: str, description: str, params: type[Params], run: Runner, *,
    target: TargetKind = "tab", read_only: bool = False, destructive: bool = False,
    expert: bool = False, secrets: SecretFields | None = None,
) -> ToolSpec:  # fmt: skip
    return ToolSpec(
        name, title, description, params, run, target, read_only, destructive, expert, secrets
    )


TOOLS: tuple[ToolSpec, ...] = (
    # --- status and tabs ----------------------------------------------------------------------
    _spec("browser_status", "Browser status",
          "Which browsers are connected (ids, versions, tabs, attached tabs), pending approvals, "
          "and whether the person paused agent access. Call this first.",
          tabs.StatusParams, tabs.status, target="none", read_only=True),
    _spec("browser_list_tabs", "List tabs",
          "The open tabs of a browser: id, title, URL, active, attached. Use the ids with other "
          "tools.",
          tabs.ListTabsParams, tabs.list_tabs, target="browser", read_only=True),
    _spec("browser_new_tab", "Open a new tab",
          "Open a new tab (in the 'Tabrelay' tab group) and optionally load a URL, waiting for "
          "it to load. Returns the new tab's id.",
          tabs.NewTabParams, tabs.new_tab, target="browser"),
    _spec("browser_close_tab", "Close a tab", "Close a tab by id.",
          tabs.CloseTabParams, tabs.close_tab, destructive=True),
    _spec("browser_activate_tab", "Bring a tab to the front",
          "Make a tab the active one in its window and focus the window.",
          tabs.ActivateTabParams, tabs.activate_tab),
    # --- navigation ---------------------------------------------------------------------------
    _spec("browser_navigate", "Navigate",
          "Open a URL in a tab (default: the active tab), or go back, forward, or reload; waits "
          "for the page to load. Only http, https and about:blank.",
          navigation.NavigateParams, navigation.navigate),
    _spec("browser_wait_for", "Wait",
          "Wait until some text appears or disappears, an element is shown, the page reaches a "
          "load state (load, domcontentloaded, networkidle), or for a number of seconds.",
          wait.WaitParams, wait.wait_for, read_only=True),
    # --- reading ------------------------------------------------------------------------------
    _spec("browser_snapshot", "Snapshot the page",
          "The page as an outline of roles, names, values and states, with a ref (e.g. e12) for "
          "every element you can act on; frames and shadow DOM included. Use the refs with the "
          "acting tools. scope='viewport' for what is on screen only.",
          snapshot.SnapshotParams, snapshot.snapshot, read_only=True),
    _spec("browser_find", "Find on the page",
          "Search the page's outline by text and/or role (button, link, textbox…) and get the "
          "matching elements with their refs.",
          snapshot.FindParams, snapshot.find, read_only=True),
    _spec("browser_get_content", "Read the page",
          "The page, or one part of it (CSS selector), as markdown (default), plain text or raw "
          "HTML. Navigation, footers, ads and cookie banners are left out of text and markdown. "
          "Long pages end with a marker that says how to read on.",
          content.ContentParams, content.get_content, read_only=True),
    _spec("browser_screenshot", "Screenshot",
          "A screenshot of the visible part of a tab, the full page, or one element (ref or "
          "selector); scaled to at most 1280 px wide, JPEG by default.",
          screenshot.ScreenshotParams, screenshot.screenshot, read_only=True),
    # --- acting -------------------------------------------------------------------------------
    _spec("browser_click", "Click",
          "Click an element (ref from browser_snapshot, or a CSS selector) with real mouse "
          "input; right or middle button, double-click and held modifier keys are possible.",
          actions.ClickParams, actions.click, destructive=True),
    _spec("browser_type", "Type text",
          "Type into a text field (replacing what it holds unless append=true), optionally "
          "pressing Enter after; slowly=true types key by key with human-like pauses.",
          forms.TypeParams, forms.type_text, destructive=True,
          secrets=SecretFields(frozenset({"text"}), forms.clear_type)),
    _spec("browser_fill_form", "Fill a form",
          "Fill several fields at once: text for text fields, true/false for checkboxes and "
          "radios, an option (or several) for selects.",
          forms.FillFormParams, forms.fill_form, destructive=True,
          secrets=SecretFields(frozenset({"value"}), forms.clear_form)),
    _spec("browser_select_option", "Choose an option",
          "Choose one or more options of a <select> by value or visible label.",
          forms.SelectParams, forms.select_option),
    _spec("browser_hover", "Hover", "Move the mouse pointer over an element.",
          actions.HoverParams, actions.hover),
    _spec("browser_press_key", "Press a key",
          "Press a key or combination (Enter, Escape, ArrowDown, Control+a…), optionally after "
          "focusing an element.",
          actions.PressKeyParams, actions.press_key, destructive=True),
    _spec("browser_scroll", "Scroll",
          "Scroll up or down about a screen, to the top or bottom, to an element, or to some "
          "text.",
          actions.ScrollParams, actions.scroll),
    _spec("browser_drag", "Drag and drop",
          "Drag one element onto another (mouse drags and HTML5 drag and drop).",
          actions.DragParams, actions.drag, destructive=True),
    _spec("browser_upload_file", "Upload a file",
          "Put files into a file input. Only files in folders the person allowed in Tabrelay's "
          "settings; the person is asked every time.",
          forms.UploadParams, forms.upload_file, destructive=True),
    _spec("browser_handle_dialog", "Answer a dialog",
          "Answer the page's alert, confirm or prompt dialog (OK or Cancel, and the text for a "
          "prompt). Other tools refuse to run while one is open.",
          actions.DialogParams, actions.handle_dialog, destructive=True,
          secrets=SecretFields(frozenset({"prompt_text"}), actions.clear_dialog)),
    # --- diagnostics --------------------------------------------------------------------------
    _spec("browser_console_messages", "Console messages",
          "The tab's recent console messages and uncaught errors.",
          diagnostics.ConsoleParams, diagnostics.console_messages, read_only=True),
    _spec("browser_network_requests", "Network requests",
          "The tab's recent network requests: method, status, type, size, URL; filter by URL, "
          "type or failures.",
          diagnostics.NetworkParams, diagnostics.network_requests, read_only=True),
    _spec("browser_evaluate", "Run JavaScript",
          "Evaluate a JavaScript expression in the page and return its JSON value. Powerful: the "
          "person is asked every time unless they allowed it for the site.",
          diagnostics.EvaluateParams, diagnostics.evaluate, destructive=True),
    _spec("browser_cdp", "Raw CDP command (expert)",
          "Send one Chrome DevTools Protocol command to a tab. Enabled only by the person, asked "
          "every time; cookie, download, permission and target methods stay blocked.",
          expert.CdpParams, expert.cdp, destructive=True, expert=True,
          secrets=SecretFields(frozenset({"text", "unmodifiedText"}), expert.clear_nothing)),
)  # fmt: skip

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
# Tools that still work while a JavaScript dialog blocks the page.
DIALOG_SAFE = frozenset(
    {"browser_handle_dialog", "browser_close_tab", "browser_activate_tab", "browser_list_tabs"}
)
# Tools that read and touch nothing of the page, so they work on a tab showing a blocked site:
# they take it away from there (navigate checks its own destinations).
LEAVES_PAGE = frozenset({"browser_navigate", "browser_close_tab", "browser_activate_tab"})
