"""Status and tab tools: browser_status, list, new, close and activate tabs.

Both browser_status and browser_list_tabs learn a browser's tabs the same way, from
``visible_tabs``: the browser's own answer, filtered by the person's tab scope. The app's copy
(``Browser.tabs``) starts empty and an extension of the seed protocol never updates it, so
counting it would disagree with the list.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from tabrelay.errors import RelayError
from tabrelay.protocol.messages import TabInfo
from tabrelay.relay.browser import Browser
from tabrelay.tools.acting.loading import open_url
from tabrelay.tools.context import BrowserParams, Params, ToolContext, ToolResult
from tabrelay.tools.results import page_text

TABRELAY_GROUP = "Tabrelay"
# browser_status answers even when a browser does not: it then says what it last knew.
STATUS_TABS_TIMEOUT = 5.0


class StatusParams(Params):
    pass


async def status(ctx: ToolContext, params: StatusParams) -> ToolResult:
    info = ctx.status()
    connected: list[Browser] = info.get("browsers", [])
    async with asyncio.TaskGroup() as group:
        described = [group.create_task(describe_browser(ctx, b)) for b in connected]
    browsers = [d.result() for d in described]
    if not browsers:
        lines = ["No browser is connected: open Chrome with the Tabrelay extension and pair it."]
    else:
        lines = [f"{len(browsers)} browser(s) connected:"]
        for b in browsers:
            lines.append(
                f"- {b['id']}: {b['name']} (extension {b['extension_version']}, "
                f"{b['tabs']} tabs, attached {b['attached_tabs'] or 'none'})"
                + (f"; {b['problem']}" if "problem" in b else "")
            )
    lines.append(f"Pending approvals: {info.get('pending_approvals', 0)}.")
    if info.get("paused"):
        lines.append("Agent access is PAUSED by the person: every call is denied until resumed.")
    mine = ctx.downloads.of(ctx.owner) if ctx.downloads else []
    if mine:
        lines.append("This session's downloads (browser_get_content download_id= reads one):")
        lines.extend(f"- {d.describe()}" for d in mine)
    listed = [{"id": d.id, "name": d.name, "size": d.size, "mime": d.mime, "url": d.url}
              for d in mine]  # fmt: skip
    return ToolResult("\n".join(lines), data={**info, "browsers": browsers, "downloads": listed},
                      page_fields=("downloads",))  # fmt: skip


async def describe_browser(ctx: ToolContext, browser: Browser) -> dict[str, Any]:
    """One browser as browser_status reports it, its tabs counted as browser_list_tabs lists
    them; from the app's copy, and saying so, if the browser does not answer."""
    described: dict[str, Any] = {
        "id": browser.id,
        "name": browser.name,
        "extension_id": browser.extension_id,
        "extension_version": browser.hello.extension if browser.hello else "seed protocol",
        "protocol": browser.hello.protocol if browser.hello else 0,
        "connected_at": browser.connected_at,
    }
    try:
        tabs = await visible_tabs(ctx, browser, timeout=STATUS_TABS_TIMEOUT)
    except RelayError as error:  # unanswered, late, or an answer that is not a tab list
        tabs = [t for t in browser.tabs.values() if ctx.in_scope(t, browser=browser)]
        described["problem"] = f"tabs as last known: the browser did not list them ({error})"
    shown = {t.id for t in tabs}
    described["tabs"] = len(tabs)
    described["attached_tabs"] = sorted(shown & browser.attached_tabs)
    return described


class ListTabsParams(BrowserParams):
    pass


def describe_tab(tab: TabInfo) -> str:
    """``[12] <the page's title — its address>  (active)``."""
    flags = [f for f, on in (("active", tab.active), ("attached", tab.attached)) if on]
    title = tab.title or "(no title)"
    shown = page_text(f"{title} — {tab.url}")
    return f"[{tab.id}] {shown}" + (f"  ({', '.join(flags)})" if flags else "")


async def list_tabs(ctx: ToolContext, params: ListTabsParams) -> ToolResult:
    browser = ctx.need_browser()
    tabs = await visible_tabs(ctx, browser)
    lines = [f"{browser.name} (browser {browser.id}): {len(tabs)} tab(s)"]
    lines += [describe_tab(t) for t in tabs]
    return ToolResult(
        "\n".join(lines),
        data={"browser": browser.id, "tabs": [t.to_wire() for t in tabs]},
        page_fields=("tabs",),
    )


async def visible_tabs(
    ctx: ToolContext, browser: Browser, *, timeout: float | None = None
) -> list[TabInfo]:
    """The tabs agents may see in ``browser``, as it reports them now.

    Raises:
        BrowserError: the browser did not answer, or not in time.
        ProtocolViolation: its answer is not a list of tabs.
    """
    return [t for t in await browser.list_tabs(timeout=timeout) if ctx.in_scope(t, browser=browser)]


class NewTabParams(BrowserParams):
    url: str | None = Field(default=None, description="Page to open; default about:blank.")
    active: bool = Field(default=True, description="Bring the new tab to the front.")


async def new_tab(ctx: ToolContext, params: NewTabParams) -> ToolResult:
    browser = ctx.need_browser()
    if params.url:
        ctx.guard.check(params.url)  # refuse before any tab opens
    # Opened behind and then brought to the front: Chrome's "started debugging" bar then
    # appears at full height at once, instead of sliding in and resizing the page a moment
    # after it loaded (under a screenshot or a scroll the agent makes at once).
    switch = params.active and browser.supports("tabs.activate")
    tab = await browser.create_tab("about:blank", active=params.active and not switch)
    ctx.adopt(tab.id, loading=True)
    if browser.supports("tabs.group"):
        await browser.group_tabs([tab.id], title=TABRELAY_GROUP)
    if switch:
        await browser.activate_tab(tab.id)
    if not params.url:
        return ToolResult(f"Opened tab {tab.id} (about:blank).", data={"tab_id": tab.id})
    ctx.tab = tab
    if ctx.sessions is not None:  # guarded before its first page, so no redirect slips by
        await ctx.sessions.prepare(browser, tab.id, guard=True)
    loaded = await open_url(ctx, params.url, wait_until="load", timeout=30.0)
    return ToolResult(
        f"Opened tab {tab.id}: {loaded.text}",
        data={"tab_id": tab.id, **(loaded.data or {})},
        page_fields=loaded.page_fields,
    )


class CloseTabParams(BrowserParams):
    tab_id: int = Field(description="The tab to close, from browser_list_tabs.")


async def close_tab(ctx: ToolContext, params: CloseTabParams) -> ToolResult:
    browser, tab = ctx.need_browser(), ctx.need_tab()
    await browser.close_tab(tab.id)
    ctx.tabs.closed(browser.id, tab.id)
    return ToolResult(f"Closed tab {tab.id} ({page_text(tab.title or tab.url)}).")


class ActivateTabParams(BrowserParams):
    tab_id: int = Field(description="The tab to bring to the front, from browser_list_tabs.")


async def activate_tab(ctx: ToolContext, params: ActivateTabParams) -> ToolResult:
    browser, tab = ctx.need_browser(), ctx.need_tab()
    await browser.activate_tab(tab.id)
    return ToolResult(f"Tab {tab.id} is now in front: {page_text(tab.title or tab.url)}")
