"""The tool catalog: each tool's name (the contract), description, parameters, results and hints.

The endpoint publishes these as MCP tools; nothing else decides what agents can call. There is
no tool that changes approval policy, pairing or tokens (THREATS A2). ``browser_cdp`` is listed
only while the person has turned it on.

Every client pays for this list in every conversation, so descriptions say what a model needs
to choose and call a tool, once; the endpoint's budget test holds the whole list under
Playwright MCP's. The hints (MCP ``ToolAnnotations``) follow one rule each:

- ``read_only``: the call changes nothing in the page or the browser (it may wait or read);
- ``destructive``: it may lose what the page or the person had (a field's text, the page it
  leaves or closes, a choice replaced) or act for the person (submit, answer a dialog, run
  code, send files);
- ``idempotent``: calling it again with the same arguments changes nothing more.

``output`` is the JSON schema of the structured content a tool returns (MCP ``outputSchema``):
open objects, so a result may carry more than they name, and a tool with one always returns
structured content (``{}`` when it has nothing to add, see ``endpoint/server.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from tabrelay.tools.context import Action, Params, Runner, TargetKind
from tabrelay.tools.groups import (
    access,
    actions,
    content,
    diagnostics,
    expert,
    forms,
    handoff,
    navigation,
    page_tools,
    recipes,
    screenshot,
    snapshot,
    tabs,
    wait,
)
from tabrelay.tools.redaction import SecretFields
from tabrelay.tools.results import HOW_TO_READ

Schema = dict[str, Any]


# How the approval judges what a call of the tool does (``approval.effects.decide``): from the
# element it clicks, the field it types into or fills, the option it chooses, the key, the
# dialog's answer, the files it puts in, the recipe's steps, the page's own tool; "nothing":
# the tool is all there is to judge (a read, a move, and code the person is asked for itself).
Judged = Literal[
    "nothing", "click", "typing", "filling", "choice", "key", "dialog", "upload", "recipe",
    "page_tool",
]  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)  # one object per tool: compared and hashed by id
class ToolSpec:
    """A tool: what agents see of it (name, title, description, parameters, output, hints) and
    the gates a call of it passes, which the endpoint reads from here and nowhere else:

    - ``read_only``: it changes nothing of the page or the browser (the default policy allows
      it; its MCP annotation says so);
    - ``while_dialog``: it works while a JavaScript dialog blocks its tab (other tab tools are
      refused until the dialog is answered);
    - ``leaves_page``: it reads and touches nothing of the page, so it works on a tab showing a
      blocked site, and takes the tab away from it;
    - ``judged``: how the effect of a call is judged before it is asked about (``Judged``);
    - ``touches``: what it does to an element it names (ref, selector, a form's fields), as the
      label in the page says it while the person is asked ("click", "read"), None when it names
      no element to act on or read (a selector it waits for is a condition);
    - ``recorded``: a recipe repeats it (``tools.recorders.recording``);
    - ``plan``: the kind of action a task's plan names for it (``browser_request_access``), None
      when no plan covers it (reads need none; code, uploads, dialogs and recipes ask);
    - ``always``: the person may allow it for good on a site from its question (not for code
      and files, whose power is too broad).
    """

    name: str
    title: str
    description: str
    params: type[Params]
    run: Runner
    target: TargetKind
    read_only: bool
    while_dialog: bool
    leaves_page: bool
    judged: Judged
    touches: str | None
    recorded: bool
    plan: Action | None
    always: bool
    destructive: bool = False
    idempotent: bool = False
    output: Schema | None = None  # the structured content's schema
    expert: bool = False  # listed only when the person enabled expert tools
    secrets: SecretFields | None = None  # arguments that may carry typed secrets


def _spec(
    name: str, title: str, description: str, params: type[Params], run: Runner, *,
    read_only: bool, while_dialog: bool, leaves_page: bool, judged: Judged,
    touches: str | None, recorded: bool, plan: Action | None, always: bool,
    target: TargetKind = "tab", destructive: bool = False, idempotent: bool = False,
    output: Schema | None = None, expert: bool = False, secrets: SecretFields | None = None,
) -> ToolSpec:  # fmt: skip
    """A tool's spec; each gate is named by every tool (none has a default)."""
    return ToolSpec(
        name, title, description, params, run, target, read_only, while_dialog, leaves_page,
        judged, touches, recorded, plan, always, destructive, idempotent, output, expert,
        secrets,
    )  # fmt: skip


def _of(kind: str | Schema) -> Schema:
    return {"type": kind} if isinstance(kind, str) else kind


def _object(**properties: str | Schema) -> Schema:
    """An open object schema: ``_object(url="string", tabs=_list(...))``."""
    return {"type": "object", "properties": {k: _of(v) for k, v in properties.items()}}


def _list(item: str | Schema) -> Schema:
    return {"type": "array", "items": _of(item)}


# Where a tool left its tab: navigate and new_tab; the acting tools once the page settled.
PAGE = _object(tab_id="integer", url="string", title="string")
# The acting tools answer an object (navigated, url, new tabs, a dialog…), declared bare: each
# property named would cost every client's tools/list ~60 bytes a tool.
AFTER_ACTION: Schema = {"type": "object"}


def _tool(name: str) -> ToolSpec:
    """A tool by name, for a recipe's steps (each runs the tool an agent would call)."""
    return BY_NAME[name]


TOOLS: tuple[ToolSpec, ...] = (
    # --- status and tabs ----------------------------------------------------------------------
    _spec("browser_status", "Browser status",
          "Connected browsers and tabs, pending approvals, whether agents are paused. Call this "
          "first. A tool without tab_id uses the active tab.",
          tabs.StatusParams, tabs.status, target="none", read_only=True,
          output=_object(browsers=_list(_object(id="string", name="string")), paused="boolean"),
          while_dialog=True, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_list_tabs", "List tabs",
          "A browser's open tabs: id, title, URL, active, attached.",
          tabs.ListTabsParams, tabs.list_tabs, target="browser", read_only=True,
          output=_object(browser="string", tabs=_list(_object(
              id="integer", url="string", title="string", active="boolean"))),
          while_dialog=True, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_new_tab", "Open a new tab",
          "Open a tab in the 'Tabrelay' group, optionally at a URL; returns its id.",
          tabs.NewTabParams, tabs.new_tab, target="browser", output=PAGE,
          read_only=False, while_dialog=True, leaves_page=False, judged="nothing",
          touches=None, recorded=True, plan="navigate", always=True),
    _spec("browser_close_tab", "Close a tab", "Close a tab.",
          tabs.CloseTabParams, tabs.close_tab, destructive=True, idempotent=True,
          read_only=False, while_dialog=True, leaves_page=True, judged="nothing",
          touches=None, recorded=False, plan="navigate", always=True),
    _spec("browser_activate_tab", "Bring a tab to the front",
          "Bring a tab and its window to the front.",
          tabs.ActivateTabParams, tabs.activate_tab, idempotent=True,
          read_only=False, while_dialog=True, leaves_page=True, judged="nothing",
          touches=None, recorded=False, plan="navigate", always=True),
    # --- navigation ---------------------------------------------------------------------------
    _spec("browser_navigate", "Navigate",
          "Load an http(s) URL or about:blank, or go back, forward or reload; waits for the load.",
          navigation.NavigateParams, navigation.navigate, destructive=True, output=PAGE,
          read_only=False, while_dialog=False, leaves_page=True, judged="nothing",
          touches=None, recorded=True, plan="navigate", always=True),
    _spec("browser_wait_for", "Wait",
          "Wait for text to appear or go, an element to show, a load state, or some seconds.",
          wait.WaitParams, wait.wait_for, read_only=True,
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=True, plan=None, always=True),
    # --- reading ------------------------------------------------------------------------------
    _spec("browser_snapshot", "Snapshot the page",
          "The page as an outline: roles, names, values, states, a ref (e.g. e12) per element "
          "to act on. " + HOW_TO_READ,
          snapshot.SnapshotParams, snapshot.snapshot, read_only=True,
          output=_object(refs="integer", bytes="integer", truncated="boolean"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_find", "Find on the page",
          "Search the page's outline by text and/or role; returns the matching elements' refs.",
          snapshot.FindParams, snapshot.find, read_only=True,
          output=_object(matches="integer"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_get_content", "Read the page",
          "The page or a part (ref or selector) as markdown, text or HTML, without "
          "navigation, footers, ads, cookie banners; PDFs; downloads.",
          content.ContentParams, content.get_content, read_only=True,
          output=_object(url="string", title="string", bytes="integer", truncated="boolean"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches="read", recorded=False, plan=None, always=True),
    _spec("browser_screenshot", "Screenshot",
          "The viewport, full page or one element as an image, at most 1280 px wide unless "
          "asked.",
          screenshot.ScreenshotParams, screenshot.screenshot, read_only=True,
          output=_object(width="integer", height="integer", mime_type="string"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches="take a picture of", recorded=False, plan=None, always=True),
    # --- acting -------------------------------------------------------------------------------
    _spec("browser_click", "Click",
          "Click an element with real mouse input.",
          actions.ClickParams, actions.click, destructive=True, output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="click",
          touches="click", recorded=True, plan="click", always=True),
    _spec("browser_type", "Type text",
          "Type into a field or editor, replacing its text unless append=true; optionally "
          "press Enter after.",
          forms.TypeParams, forms.type_text, destructive=True, output=AFTER_ACTION,
          secrets=SecretFields(frozenset({"text"}), forms.clear_type),
          read_only=False, while_dialog=False, leaves_page=False, judged="typing",
          touches="type into", recorded=True, plan="type", always=True),
    _spec("browser_fill_form", "Fill a form",
          "Fill several fields at once: text, true/false for checkboxes and radios, options "
          "for selects.",
          forms.FillFormParams, forms.fill_form, destructive=True, idempotent=True,
          output=AFTER_ACTION, secrets=SecretFields(frozenset({"value"}), forms.clear_form),
          read_only=False, while_dialog=False, leaves_page=False, judged="filling",
          touches="fill in", recorded=True, plan="type", always=True),
    _spec("browser_select_option", "Choose an option",
          "Choose options of a <select> by value or visible label.",
          forms.SelectParams, forms.select_option, destructive=True, idempotent=True,
          output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="choice",
          touches="choose an option in", recorded=True, plan="select", always=True),
    _spec("browser_hover", "Hover", "Move the mouse pointer over an element.",
          actions.HoverParams, actions.hover, idempotent=True, output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="nothing",
          touches="point at", recorded=True, plan="hover", always=True),
    _spec("browser_press_key", "Press a key",
          "Press a key or combination, optionally on an element.",
          actions.PressKeyParams, actions.press_key, destructive=True, output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="key",
          touches="press a key in", recorded=True, plan="press_key", always=True),
    _spec("browser_scroll", "Scroll",
          "Scroll up or down about a screen, to the top or bottom, to an element or to text.",
          actions.ScrollParams, actions.scroll,
          output=_object(scroll_y="number", page_height="number"),
          read_only=False, while_dialog=False, leaves_page=False, judged="nothing",
          touches="scroll to", recorded=False, plan="scroll", always=True),
    _spec("browser_page_tool", "Page tool",
          "Call a tool the page declares (browser_snapshot lists them).",
          page_tools.PageToolParams, page_tools.call, destructive=True, output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="page_tool",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_drag", "Drag and drop",
          "Drag one element onto another (mouse and HTML5 drag and drop).",
          actions.DragParams, actions.drag, destructive=True, output=AFTER_ACTION,
          read_only=False, while_dialog=False, leaves_page=False, judged="nothing",
          touches="drag", recorded=False, plan="drag", always=True),
    _spec("browser_upload_file", "Upload a file",
          "Set a file input's files, from folders the person allowed; they are asked each time.",
          forms.UploadParams, forms.upload_file, destructive=True,
          read_only=False, while_dialog=False, leaves_page=False, judged="upload",
          touches="put files into", recorded=False, plan=None, always=False),
    _spec("browser_handle_dialog", "Answer a dialog",
          "Answer the page's alert, confirm or prompt: OK or Cancel, and a prompt's text. Other "
          "tools refuse while one is open.",
          actions.DialogParams, actions.handle_dialog, destructive=True, output=AFTER_ACTION,
          secrets=SecretFields(frozenset({"prompt_text"}), actions.clear_dialog),
          read_only=False, while_dialog=True, leaves_page=False, judged="dialog",
          touches=None, recorded=True, plan=None, always=True),
    # --- the person and recipes ----------------------------------------------------------------
    # Asking is the tool itself (the person answers the plan's dialog): no approval before it.
    _spec("browser_request_access", "Ask once for a task",
          "Ask the person once for a task's sites and actions; routine actions there then run "
          "unasked (paying, sending, deleting still ask).",
          access.RequestAccessParams, access.request_access, target="none", read_only=True,
          while_dialog=True, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    # A handoff changes nothing itself: it asks the person, who ends it (so it asks no approval).
    _spec("browser_handoff", "Hand the tab to the person",
          "Let the person do what only they can (sign in, CAPTCHA, 2FA, payment); waits for "
          "their Done or Cancel, then says how it ended and where the tab is.",
          handoff.HandoffParams, handoff.run, read_only=True,
          output=_object(outcome="string", url="string"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_list_recipes", "List recipes",
          "Saved recipes: steps, parameters, where each ends.",
          recipes.ListRecipesParams, recipes.list_recipes, target="none", read_only=True,
          output=_object(recipes=_list(_object(name="string"))),
          while_dialog=True, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_run_recipe", "Run a recipe",
          "Replay a recipe the person saved instead of doing its steps yourself; stops at the "
          "first step that fails, saying why.",
          recipes.RunRecipeParams, partial(recipes.run_recipe, tools=_tool), destructive=True,
          output=_object(steps="integer", url="string"),
          secrets=SecretFields(frozenset({"params"}), recipes.clear_nothing),
          read_only=False, while_dialog=False, leaves_page=False, judged="recipe",
          touches=None, recorded=False, plan=None, always=True),
    # --- diagnostics --------------------------------------------------------------------------
    _spec("browser_console_messages", "Console messages",
          "The tab's recent console messages and uncaught errors.",
          diagnostics.ConsoleParams, diagnostics.console_messages, read_only=True,
          output=_object(count="integer"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_network_requests", "Network requests",
          "The tab's recent requests: method, status, type, size, URL.",
          diagnostics.NetworkParams, diagnostics.network_requests, read_only=True,
          output=_object(count="integer"),
          while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=True),
    _spec("browser_evaluate", "Run JavaScript",
          "Run JavaScript in the page; returns its JSON value. Asks the person unless they "
          "allowed it for the site.",
          diagnostics.EvaluateParams, diagnostics.evaluate, destructive=True,
          output=_object(type="string", truncated="boolean"),
          read_only=False, while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=False),
    _spec("browser_cdp", "Raw CDP command (expert)",
          "Send one Chrome DevTools Protocol command to a tab. Enabled only by the person, asked "
          "every time; cookie, download, permission and target methods stay blocked.",
          expert.CdpParams, expert.cdp, destructive=True, expert=True,
          output=_object(truncated="boolean"),
          secrets=SecretFields(frozenset({"text", "unmodifiedText"}), expert.clear_nothing),
          read_only=False, while_dialog=False, leaves_page=False, judged="nothing",
          touches=None, recorded=False, plan=None, always=False),
)  # fmt: skip

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
