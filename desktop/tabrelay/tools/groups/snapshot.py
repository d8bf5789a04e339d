"""browser_snapshot and browser_find: the page as an outline with refs, and searching it.

The snapshot reads the page where it is: one script in Tabrelay's own world computes the
accessibility nodes of the document, its shadow roots (open and closed) and same-origin frames, and
which fields hold a secret, whose value never leaves the page (``page_outline``); the text of code
editors comes from their own API in the page's world (``editor_text``). Refs go out through the
tab's ``TabRefs``, each naming an element the world holds, so the same element keeps its ref.
"""

from __future__ import annotations

import asyncio
import time
from typing import Literal

from pydantic import Field, model_validator

from tabrelay.errors import CommandFailed, CommandTimeout, ToolError
from tabrelay.protocol.messages import uncollected
from tabrelay.tools.acting.loading import PARSE_WAIT, PARSED, STILL_LOADING, until_parsed
from tabrelay.tools.context import Reading, TabParams, ToolContext, ToolResult
from tabrelay.tools.page import editor_text, page_outline, webmcp
from tabrelay.tools.page.outline import Outline, build_outline, search
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts.page_scripts import withheld_note
from tabrelay.tools.state.tab_state import RefTarget


class SnapshotParams(TabParams):
    scope: Literal["full", "viewport"] = Field(
        default="full", description="The whole page, or only what is on screen now."
    )
    depth: int | None = Field(
        default=None, ge=1, le=100, description="Cut the outline below this nesting depth."
    )
    offset: int = Field(default=0, ge=0, description="Skip this many bytes (to continue).")


class FindParams(TabParams):
    text: str | None = Field(default=None, description="Text to look for (case-insensitive).")
    role: str | None = Field(
        default=None, description="A role such as button, link, textbox, checkbox, heading."
    )

    @model_validator(mode="after")
    def _something(self) -> FindParams:
        if not self.text and not self.role:
            raise ValueError("give 'text', 'role', or both")
        return self


RENDER_WAIT = 3.0  # seconds a snapshot waits for a page that shows nothing yet to draw itself
QUIET = 0.5  # seconds without a change after which a page showing nothing is taken as drawn
STILL_RENDERING = (
    "(The page is still drawing itself and shows nothing to read yet: take another snapshot in "
    "a moment, or browser_wait_for the text you expect.)"
)
NOTHING_TO_READ = "(The page shows nothing to read.)"
BETWEEN_READS = 0.05  # seconds before a page caught between documents is read again


async def snapshot(ctx: ToolContext, params: SnapshotParams) -> ToolResult:
    viewport = params.scope == "viewport"
    loading = ""
    # A document still being parsed when read is read again once it is (waited for at most
    # ``PARSE_WAIT``), or said to be: its parsing is heard from before the first read.
    async with ctx.events(PARSED) as parsed:
        outline, drawing = await drawn(ctx, viewport=viewport, depth=params.depth, tools=True)
        if outline.parsing:
            try:
                await parsed.until(lambda e: True, timeout=PARSE_WAIT)
            except CommandTimeout:
                loading = STILL_LOADING  # what has arrived by now, said to be so
            outline, drawing = await drawn(ctx, viewport=viewport, depth=params.depth, tools=True)
    tools = outline.tools
    tab = ctx.need_tab()
    # Tabrelay's notes first, then the page's words in one boundary: the page, then its outline.
    said = "".join(f"{note}\n" for note in (loading, drawing) if note)
    # The document read names itself: the tab's own title and address can lag a navigation.
    url = outline.url or tab.url
    title = outline.title or (tab.title if url == tab.url else "")
    header = f"page {title!r} {url}\n"
    notes = ""
    if outline.omitted_below_depth:
        notes = (
            f"\n({outline.omitted_below_depth} nested items below depth {params.depth} left out)"
        )
    if outline.withheld:
        notes += "\n" + withheld_note(outline.withheld)
    if tools:
        notes += webmcp.listing(tools)
    body = outline.text.encode("utf-8")[params.offset :].decode("utf-8", errors="ignore")
    return ToolResult(
        said,
        data={"refs": len(outline.elements), "bytes": len(outline.text)},
        reading=Reading(
            body,
            lambda kept: (
                f"call again with offset={params.offset + kept}, or use scope='viewport', depth, "
                "or browser_find to narrow it"
            ),
            head=header,
            after=notes,
        ),
    )


async def find(ctx: ToolContext, params: FindParams) -> ToolResult:
    outline, _ = await drawn(ctx, viewport=False, depth=None)
    matches = search(outline, text=params.text, role=params.role)
    wanted = " ".join(
        part for part in (params.role, repr(params.text) if params.text else None) if part
    )
    if not matches:
        return ToolResult(f"Nothing on the page matches {wanted}.", data={"matches": 0})
    found = f"{len(matches)} match(es) for {wanted}:\n" + page_text("\n".join(matches))
    return ToolResult(found, data={"matches": len(matches)})


async def drawn(
    ctx: ToolContext, *, viewport: bool, depth: int | None, tools: bool = False
) -> tuple[Outline, str]:
    """The outline (with the tools the page declares, if ``tools``: browser_snapshot's), and a
    note when it says nothing: a page that shows nothing while it keeps
    changing (an app drawing itself behind a splash) is read again as it changes, for about
    ``RENDER_WAIT`` seconds; then ``STILL_RENDERING``, or ``NOTHING_TO_READ`` once it has not
    changed for ``QUIET`` seconds.
    """
    deadline = time.monotonic() + RENDER_WAIT
    outline = await _readable(ctx, viewport, depth, deadline, tools)
    while outline.says_nothing:
        if time.monotonic() >= deadline:
            return outline, STILL_RENDERING
        try:
            changed = await page_outline.changes(ctx, within=QUIET)
        except CommandFailed:
            changed = True  # between documents: the next one is read
        # Read again either way: the page may have drawn itself between the read and the
        # start of the watch.
        outline = await _readable(ctx, viewport, depth, deadline, tools)
        if not changed and outline.says_nothing:
            return outline, NOTHING_TO_READ
    return outline, ""


async def _readable(
    ctx: ToolContext, viewport: bool, depth: int | None, deadline: float, tools: bool
) -> Outline:
    """The outline; a page caught between two documents (a redirect, an app that reloads as
    it starts) is read again once the next one is parsed, until ``deadline``.

    Raises:
        ToolError: the page still could not be read at ``deadline``.
    """
    while True:
        try:
            return await take(ctx, viewport=viewport, depth=depth, tools=tools)
        except CommandFailed as failed:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolError(
                    f"the page cannot be read yet ({failed.message}); wait for it"
                ) from None
            await until_parsed(ctx, timeout=left)
            await asyncio.sleep(min(BETWEEN_READS, max(0.0, left)))


async def take(
    ctx: ToolContext, *, viewport: bool, depth: int | None, tools: bool = False
) -> Outline:
    """Read the page and build its outline, assigning refs; with the tools the page declares,
    if ``tools``.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    tab = ctx.need_tab()
    refs = ctx.state.refs
    # A document whose last read needed nothing but Tabrelay's world is read at once: one round
    # trip through the extension.
    again = await page_outline.read_again(ctx, viewport=viewport, tools=tools)
    editors: list[editor_text.CodeEditor] = []
    if again is not None:
        page, loaders = again.page, {again.frame_id: again.loader}
    else:
        # Independent reads go out together: each is a round trip through the extension.
        tree, editors = await asyncio.gather(ctx.cdp("Page.getFrameTree"), editor_text.read(ctx))
        top = tree["frameTree"]["frame"]
        page = await page_outline.read(
            ctx,
            top["id"],
            loader=str(top.get("loaderId", "")),
            viewport=viewport,
            tools=tools,
            refused=page_outline.refused_under(ctx, tree["frameTree"]),
            editors=editor_text.paths(editors),
        )
        loaders = page_outline.loaders_of(tree["frameTree"]) | page.loaders

    def assign(node: int, frame_id: str) -> str:
        return refs.assign(RefTarget(node, frame_id, loaders.get(frame_id, "")))

    with uncollected():
        outline = build_outline(
            page.frames,
            assign_ref=assign,
            clickable=frozenset(page.clickable),
            visible=frozenset(page.visible) if viewport else None,
            max_depth=depth,
            base_url=page.frames[0].url if page.frames else tab.url,  # the document read
            inline=frozenset(page.inline),
            script_focus=frozenset(page.script_focus),
            pointer=frozenset(page.pointer),
            editors=dict(e.held(*ids) for e, ids in zip(editors, page.editors, strict=True) if ids),
            secrets=page.secrets,
        )
    outline.withheld = page.withheld
    outline.parsing, outline.tools = page.parsing, page.tools
    if page.frames and page.frames[0].nodes:  # the main document, which names itself first
        outline.title = str(page.frames[0].nodes[0].get("name", {}).get("value", ""))
        outline.url = page.frames[0].url
    return outline
