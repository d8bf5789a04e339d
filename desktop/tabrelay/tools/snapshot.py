"""browser_snapshot and browser_find: the page as an outline with refs, and searching it.

The snapshot reads Chrome's accessibility tree of the page and of each same-origin frame (open
shadow roots are part of it), plus one DOM snapshot for click listeners, inline layout and
on-screen bounds, the text of code editors the tree does not hold (``editor_text``) and which
fields hold a secret whose value it leaves out (``secret_fields``), those two in one page script
(``page_looks``); it hands refs out through the tab's ``TabRefs`` so the same element keeps its
ref.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from tabrelay.errors import CommandFailed, ToolError
from tabrelay.tools import editor_text, secret_fields
from tabrelay.tools.budget import fit_text
from tabrelay.tools.context import TabParams, ToolContext, ToolResult
from tabrelay.tools.outline import EditorText, FrameTree, Outline, build_outline, search
from tabrelay.tools.page_looks import look
from tabrelay.tools.tab_state import RefTarget
from tabrelay.tools.wait import until_parsed


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


async def snapshot(ctx: ToolContext, params: SnapshotParams) -> ToolResult:
    loading = await until_parsed(ctx)  # a page still arriving is waited for, or said so
    outline = await take(ctx, viewport=params.scope == "viewport", depth=params.depth)
    tab = ctx.need_tab()
    header = f"page {tab.title!r} {tab.url}\n" + (f"{loading}\n" if loading else "")
    notes = ""
    if outline.omitted_below_depth:
        notes = (
            f"\n({outline.omitted_below_depth} nested items below depth {params.depth} left out)"
        )
    body = outline.text.encode("utf-8")[params.offset :].decode("utf-8", errors="ignore")
    fitted = fit_text(
        body + notes,
        ctx.budget_bytes - len(header),
        continuation=lambda kept: (
            f"call again with offset={params.offset + kept}, or use scope='viewport', depth, "
            "or browser_find to narrow it"
        ),
    )
    return ToolResult(
        header + fitted.text,
        data={
            "refs": len(outline.elements),
            "bytes": len(outline.text),
            "truncated": fitted.truncated,
        },
    )


async def find(ctx: ToolContext, params: FindParams) -> ToolResult:
    outline = await take(ctx, viewport=False, depth=None)
    matches = search(outline, text=params.text, role=params.role)
    wanted = " ".join(
        part for part in (params.role, repr(params.text) if params.text else None) if part
    )
    if not matches:
        return ToolResult(f"Nothing on the page matches {wanted}.", data={"matches": 0})
    lines = [f"{len(matches)} match(es) for {wanted}:", *matches]
    return ToolResult("\n".join(lines), data={"matches": len(matches)})


async def take(ctx: ToolContext, *, viewport: bool, depth: int | None) -> Outline:
    """Read the page and build its outline, assigning refs."""
    tab = ctx.need_tab()
    refs = ctx.state.refs
    # Independent reads go out together: each is a round trip through the extension.
    tree, main_nodes, layout, view, (editors, secrets) = await asyncio.gather(
        ctx.cdp("Page.getFrameTree"),
        _ax_nodes(ctx, None),
        ctx.cdp("DOMSnapshot.captureSnapshot", {"computedStyles": ["display"]}),
        _viewport(ctx) if viewport else _nothing(),
        _editors_and_secrets(ctx),
    )
    loaders: dict[str, str] = {}
    frames = await _frames(ctx, tree["frameTree"], loaders, owner=None, nodes=main_nodes)
    clickable, on_screen = _layout_facts(layout, view)

    def assign(backend: int, frame_id: str) -> str:
        return refs.assign(RefTarget(backend, frame_id, loaders.get(frame_id, "")))

    return build_outline(
        frames,
        assign_ref=assign,
        clickable=clickable,
        visible=on_screen,
        max_depth=depth,
        base_url=tab.url,
        inline=_inline(layout),
        script_focus=_script_focus(layout),
        editors=editors,
        secrets=secrets or {},
        hide_values=secrets is None,  # the look failed: fail closed
    )


async def _editors_and_secrets(
    ctx: ToolContext,
) -> tuple[dict[int, EditorText], dict[int, str] | None]:
    """Code editors' text and the secret fields holding something: one page script and one
    walk over the page, each look keeping its own failure (``page_looks``)."""
    secrets, editors = await look(ctx, secret_fields.LOOK, editor_text.LOOK)
    return editor_text.read_texts(editors), secret_fields.read_secrets(secrets)


async def _ax_nodes(ctx: ToolContext, frame_id: str | None) -> list[dict[str, Any]] | str:
    """A frame's accessibility nodes, or why they cannot be read (an out-of-process frame)."""
    try:
        params = {"frameId": frame_id} if frame_id is not None else {}
        return list((await ctx.cdp("Accessibility.getFullAXTree", params))["nodes"])
    except CommandFailed as failed:
        return failed.message


async def _frames(
    ctx: ToolContext,
    node: dict[str, Any],
    loaders: dict[str, str],
    *,
    owner: int | None,
    nodes: list[dict[str, Any]] | str | _Refused,
) -> list[FrameTree]:
    frame = node["frame"]
    loaders[frame["id"]] = frame.get("loaderId", "")
    if isinstance(nodes, _Refused):
        return [FrameTree(frame["id"], [], frame.get("url", ""), owner, refused=nodes.reason)]
    if isinstance(nodes, str):
        if owner is None:
            raise ToolError(f"the page cannot be read yet ({nodes}); wait for it")
        # A frame that cannot (or may not) be read: nor can the frames inside it.
        return [FrameTree(frame["id"], [], frame.get("url", ""), owner, error=nodes)]
    found = [FrameTree(frame["id"], nodes, frame.get("url", ""), owner)]
    children = node.get("childFrames", [])
    owners = await asyncio.gather(*(_owner(ctx, c["frame"]["id"]) for c in children))
    child_nodes = await asyncio.gather(*(_frame_nodes(ctx, c["frame"]) for c in children))
    for child, owner_id, child_ax in zip(children, owners, child_nodes, strict=True):
        if owner_id is not None:  # None: the frame went away meanwhile
            found += await _frames(ctx, child, loaders, owner=owner_id, nodes=child_ax)
    return found


@dataclass(frozen=True, slots=True)
class _Refused:
    reason: str


async def _frame_nodes(
    ctx: ToolContext, frame: dict[str, Any]
) -> list[dict[str, Any]] | str | _Refused:
    """A child frame's nodes; never those of a site agents may not use (a frame the page
    loaded before an agent first used the tab, when its loads were not yet guarded)."""
    refusal = ctx.guard.refusal(str(frame.get("url", "")))
    if refusal is not None:
        return _Refused(f"agents may not use it ({refusal})")
    return await _ax_nodes(ctx, frame["id"])


async def _owner(ctx: ToolContext, frame_id: str) -> int | None:
    try:
        return int((await ctx.cdp("DOM.getFrameOwner", {"frameId": frame_id}))["backendNodeId"])
    except CommandFailed:
        return None


async def _nothing() -> None:
    return None


async def _viewport(ctx: ToolContext) -> tuple[float, float, float, float]:
    css = (await ctx.cdp("Page.getLayoutMetrics"))["cssVisualViewport"]
    return (css["pageX"], css["pageY"], css["clientWidth"], css["clientHeight"])


def _inline(layout: dict[str, Any]) -> frozenset[int]:
    """Backend ids of elements laid out inline (``display: inline``): their text reads on."""
    strings: list[str] = layout.get("strings", [])
    inline = {i for i, s in enumerate(strings) if s == "inline"}
    found: set[int] = set()
    for document in layout.get("documents", []):
        ids: list[int] = document["nodes"]["backendNodeId"]
        styles: list[list[int]] = document["layout"].get("styles", [])
        for node_index, style in zip(document["layout"]["nodeIndex"], styles, strict=False):
            if style and style[0] in inline:
                found.add(ids[node_index])
    return frozenset(found)


def _script_focus(layout: dict[str, Any]) -> frozenset[int]:
    """Backend ids of elements with ``tabindex="-1"``: focusable by script, not by a person's Tab
    key (a scroller, an app's focus target)."""
    strings: list[str] = layout.get("strings", [])
    names = {i for i, s in enumerate(strings) if s == "tabindex"}
    minus_one = {i for i, s in enumerate(strings) if s.strip() == "-1"}
    found: set[int] = set()
    for document in layout.get("documents", []):
        ids: list[int] = document["nodes"]["backendNodeId"]
        for index, attributes in enumerate(document["nodes"].get("attributes", [])):
            pairs = zip(attributes[::2], attributes[1::2], strict=False)
            if any(name in names and value in minus_one for name, value in pairs):
                found.add(ids[index])
    return frozenset(found)


def _layout_facts(
    layout: dict[str, Any], viewport: tuple[float, float, float, float] | None
) -> tuple[frozenset[int], frozenset[int] | None]:
    """Backend ids of clickable nodes and, given a viewport, of nodes inside it."""
    clickable: set[int] = set()
    visible: set[int] | None = set() if viewport is not None else None
    for index, document in enumerate(layout.get("documents", [])):
        ids: list[int] = document["nodes"]["backendNodeId"]
        clickable.update(ids[i] for i in document["nodes"].get("isClickable", {}).get("index", []))
        if visible is None or viewport is None or index > 0:
            continue  # frames: their bounds are in their own coordinates; keep them whole
        left, top, width, height = viewport
        parents: list[int] = document["nodes"]["parentIndex"]
        for node_index, (x, y, w, h) in zip(
            document["layout"]["nodeIndex"], document["layout"]["bounds"], strict=False
        ):
            if (
                w > 0
                and h > 0
                and x < left + width
                and x + w > left
                and y < top + height
                and y + h > top
            ):
                visible.add(ids[node_index])
                parent = parents[node_index]
                if parent >= 0:
                    visible.add(ids[parent])  # text runs' element
    if visible is not None:
        for document in layout.get("documents", [])[1:]:
            visible.update(document["nodes"]["backendNodeId"])
    return frozenset(clickable), frozenset(visible) if visible is not None else None
