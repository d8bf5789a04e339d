"""browser_handoff: the agent hands a tab to the person, and waits until they give it back.

``Handoffs`` (``handoffs.py``) is the one owner of the open handoffs. ``handoff`` is the tool:
it brings the tab to the front, shows a banner on the page through a ``PageWorld`` (out of the
page's scripts' reach), mutes the tab's events (nothing the person does reaches the dashboard's
live events or the tab's observer log), holds the tab's debugger session against the idle
detach, and waits for the first of: the banner's Done or Cancel, ``end()``, the timeout, the tab
or its browser going, the call being cancelled. Whatever ends it, the banner goes, the tab is
unmuted and let go, and the handoff leaves the list. It does not notify the person outside the
page: the UI listens to ``Handoffs``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from pydantic import Field, field_validator

from tabrelay.errors import BrowserError, ToolError
from tabrelay.relay.browser import Browser
from tabrelay.tools.context import TabParams, ToolContext, ToolResult
from tabrelay.tools.page.page_world import PageWorld
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import fill, script
from tabrelay.tools.state.handoffs import EndedBy, Handoffs, Outcome

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300
MIN_TIMEOUT = 10
MAX_TIMEOUT = 900
MAX_REASON = 300
PROGRESS_EVERY = 5.0  # seconds between progress notifications, so clients do not time out
CHECK_EVERY = 0.25  # seconds between looks at the tab and its browser while waiting
BANNER_ATTRIBUTE = "data-tabrelay-handoff"


class HandoffParams(TabParams):
    reason: str = Field(
        description="What they should do, in a few words shown to them, e.g. 'sign in'.",
    )
    timeout: int = Field(
        default=DEFAULT_TIMEOUT,
        ge=MIN_TIMEOUT,
        le=MAX_TIMEOUT,
        description="Seconds to wait for them.",
    )

    @field_validator("reason")
    @classmethod
    def _plain_sentence(cls, reason: str) -> str:
        reason = reason.strip()
        if not reason:
            raise ValueError("give a reason: what the person should do in the tab")
        if len(reason) > MAX_REASON:
            raise ValueError(f"the reason is {len(reason)} characters; at most {MAX_REASON}")
        if any(_hidden(c) for c in reason):
            raise ValueError("the reason must be one line of plain text (no control characters)")
        return reason


def _hidden(char: str) -> bool:
    """Control and format characters, line breaks and the bidi overrides included."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code < 0xA0 or code in _FORMAT


_FORMAT = frozenset({0x2028, 0x2029, *range(0x200B, 0x2010), *range(0x202A, 0x202F), 0xFEFF})
_FORMAT |= frozenset(range(0x2066, 0x206A))


async def run(ctx: ToolContext, params: HandoffParams) -> ToolResult:
    """browser_handoff, with the app's ``Handoffs`` from the context."""
    if ctx.handoffs is None:
        raise ToolError("handoffs are not available here")
    return await handoff(ctx, params, ctx.handoffs)


async def handoff(ctx: ToolContext, params: HandoffParams, handoffs: Handoffs) -> ToolResult:
    browser, tab = ctx.need_browser(), ctx.need_tab()
    opened, ended = handoffs.begin(
        browser.id,
        tab.id,
        reason=params.reason,
        client=ctx.client,
        timeout=params.timeout,
        url=tab.url,
        title=tab.title,
    )
    started = opened.started
    unmute = ctx.hub.mute(browser.id, tab.id)
    let_go = ctx.sessions.hold(browser.id, tab.id) if ctx.sessions is not None else _nothing
    state = ctx.state
    world: PageWorld | None = None
    outcome: tuple[Outcome, EndedBy] = ("cancelled", "agent")  # the call cancelled meanwhile
    try:
        if browser.supports("tabs.activate"):
            try:
                await browser.activate_tab(tab.id)
            except BrowserError as error:  # the banner still shows; the tray says the rest
                logger.info("could not bring tab %s to the front: %s", tab.id, error)

        def said(message: dict[str, Any]) -> None:
            if message.get("ended") in ("done", "cancelled"):
                handoffs.end(opened.id, message["ended"], "banner")

        try:
            world = await PageWorld.install(
                browser,
                tab.id,
                hub=ctx.hub,
                name="handoff",
                source=banner_source(params.reason),
                on_message=said,
            )
        except ToolError:
            # The person may close the tab before the banner is in: that ends the handoff as
            # it would a moment later. A tab still there that refused the banner is an error.
            if await _still_there(browser, tab.id):
                raise
            outcome = ("tab closed", "browser")
        else:
            outcome = await _wait(ctx, browser, tab.id, params, ended)
    finally:
        # Plain calls first: they happen even while this call is being cancelled.
        # The muted tab told nothing of the pages the person went to: refs from before are
        # no guide to what the agent finds now (the result asks for a new snapshot).
        state.refs.release_all()
        let_go()
        unmute()
        if not ended.done():
            ended.set_result(outcome)
        handoffs.drop(opened.id)
        logger.info("handoff %s of tab %s ended: %s by %s", opened.id, tab.id, *outcome)
        if world is not None:
            await world.remove()  # the banner goes with it (TABRELAY_ON_REMOVE)
    return await _result(browser, tab.id, outcome, started, fallback=(tab.url, tab.title))


async def _wait(
    ctx: ToolContext,
    browser: Browser,
    tab_id: int,
    params: HandoffParams,
    ended: asyncio.Future[tuple[Outcome, EndedBy]],
) -> tuple[Outcome, EndedBy]:
    """The first of: ``ended`` (the banner, ``Handoffs.end``), the timeout, the tab or its
    browser going. A tab Tabrelay can no longer use (closed, or gone to a page Tabrelay may not
    use) counts as closed."""
    message = f"waiting for the person: {params.reason}"
    begun = time.monotonic()
    deadline = begun + params.timeout
    told: float | None = None
    while True:
        waited = time.monotonic() - begun
        if told is None or waited - told >= PROGRESS_EVERY:
            told = waited
            await ctx.progress(round(waited, 1), float(params.timeout), message)
        if ended.done():
            return ended.result()
        if browser.closed or tab_id not in browser.tabs:
            return ("tab closed", "browser")
        left = deadline - time.monotonic()
        if left <= 0:
            return ("timeout", "timeout")
        await asyncio.wait([ended], timeout=min(CHECK_EVERY, left))


async def _result(
    browser: Browser,
    tab_id: int,
    outcome: tuple[Outcome, EndedBy],
    started: float,
    *,
    fallback: tuple[str, str],
) -> ToolResult:
    how, by = outcome
    url, title = ("", "") if how == "tab closed" else fallback
    if how != "tab closed":
        try:
            now = await browser.get_tab(tab_id, ask=True)
            url, title = now.url, now.title
        except BrowserError:
            how, by, url, title = "tab closed", "browser", "", ""
    waited = round(time.time() - started, 1)
    data = {"outcome": how, "ended_by": by, "url": url, "title": title, "waited_s": waited}
    said = {
        "done": "The person finished and pressed Done",
        "cancelled": "The handoff was cancelled",
        "timeout": f"The person did not finish within {waited:g} s",
        "tab closed": "The tab was closed (or its browser went) during the handoff",
    }[how]
    where = (
        f" Tab {tab_id} now shows {page_text(f'{title or url!r} ({url})')}; take a new "
        "browser_snapshot before acting on it."
        if url
        else ""
    )
    return ToolResult(
        f"{said} (ended by {by}, after {waited:g} s).{where}",
        data=data,
        page_fields=("url", "title"),
    )


async def _still_there(browser: Browser, tab_id: int) -> bool:
    if browser.closed:
        return False
    try:
        await browser.get_tab(tab_id, ask=True)
    except BrowserError:
        return False
    return True


def _nothing() -> None:
    pass


# --- the banner -----------------------------------------------------------------------------

# Runs in the handoff's isolated world on every document of the tab. The page shares the DOM but
# none of this code: the host is re-added if the page removes it and re-styled if it restyles
# it; the buttons live in a closed shadow root and act only on the person's own (trusted)
# clicks; the reason is set as text, never parsed as markup. In the top layer (a popover) where
# the browser has it, else at the highest z-index.
_BANNER = script("handoff_banner.js")


def banner_source(reason: str) -> str:
    """The banner's code for ``reason`` (agent text: carried as a JSON string, shown as text)."""
    return fill(
        _BANNER,
        REASON_TEXT=json.dumps(reason, ensure_ascii=True),
        ATTRIBUTE_NAME=json.dumps(BANNER_ATTRIBUTE),
    )
