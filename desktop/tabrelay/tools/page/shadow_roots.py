"""Closed shadow roots, opened to Tabrelay's world and to nothing else (issue 26).

A design system's widget that attaches a *closed* shadow root hides what it holds from scripts
(``el.shadowRoot`` is null), not from a person or a screen reader. CDP still knows the root
(``DOM.describeNode`` lists it with its backend node id), so ``open_closed_roots`` asks it about
each element that may host one, has ``DOM.resolveNode`` give the root to Tabrelay's world
(``page_outline.WORLD``), and records it there: in that world only, ``el.shadowRoot`` answers
with the closed root too, for the life of the document. Every script of the world (the outline,
the content reader, locators, targets, effect facts) then walks closed roots as it walks open
ones; the readers open the roots first (``open_closed_roots``: the content reader's read,
``page_outline.opened_world`` for the others; the outline looks for new ones in its own call,
``CANDIDATES`` put in, and has them opened only when it finds some). The page's own scripts, in
their own world, see nothing change.

Which elements may host one: a defined custom element that shows no shadow root, and an element
of a kind that may host a shadow root that has no children but takes up room (a ``div`` filled
only by its root); each is asked about once. Up to ``MAX_CANDIDATES`` new ones are asked about
one by one, a root inside a closed root in the next round (at most ``MAX_ROUNDS``); past that,
one description of the whole page finds every closed root at once, within ``WHOLE_PAGE_TIMEOUT``
(a page too large to describe in time keeps its closed roots to itself, and is not asked
again).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

from tabrelay.errors import CommandFailed, CommandTimeout
from tabrelay.tools.context import ToolContext
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.page_scripts import SAFE_DOM

MAX_ROUNDS = 8  # closed roots inside closed roots, this deep
MAX_CANDIDATES = 100  # asked one by one in a round; past that, the whole page at once
WHOLE_PAGE_TIMEOUT = 5.0  # seconds for the whole page's description

# The world's record of closed roots, and ``shadowRoot`` that reads it: installed once per
# window that has one (a same-origin frame's elements take their prototype from their own
# window; a page without closed roots keeps the native getter).
_CLOSED = script("closed_roots.js")

# The elements that may host a closed root and were not asked about yet (pending for ``token``): an
# array of them, their number when there are more than ``max`` (the whole page is then asked at
# once), or null for none. Walks the document, its shadow roots (closed ones already
# known too) and same-origin frames.
CANDIDATES = (
    script("closed_candidates.js")
    .replace("CLOSED\n", _CLOSED)
    .replace("SAFE_DOM", SAFE_DOM.strip())
)

# Records closed roots (arguments: the read's token, then host, root, host, root, …) and that
# the read's candidates were asked about.
REMEMBER = script("remember_closed.js").replace("CLOSED\n", _CLOSED)


async def open_closed_roots(ctx: ToolContext, context: int, session: str | None = None) -> int:
    """Gives Tabrelay's world (execution context ``context``, of the child ``session`` if
    given: a frame in another process) the closed shadow roots of the page it has not seen yet;
    how many it found.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    opened = 0
    token = secrets.token_hex(8)
    for _ in range(MAX_ROUNDS):
        listing = await ctx.cdp(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": CANDIDATES,
                "executionContextId": context,
                "arguments": [{"value": MAX_CANDIDATES}, {"value": token}],
                "objectGroup": ctx.objects,
            },
            session=session,
        )
        result = listing.get("result", {})
        if listing.get("exceptionDetails"):
            return opened
        if result.get("type") == "number":
            pairs = await _whole_page(ctx, context, session)
        elif result.get("objectId"):
            pairs = await _asked_one_by_one(ctx, str(result["objectId"]), context, session)
        else:
            return opened  # none
        await ctx.cdp(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": REMEMBER,
                "executionContextId": context,
                "arguments": [
                    {"value": token},
                    *({"objectId": o} for pair in pairs for o in pair),
                ],
            },
            session=session,
        )
        if not pairs:
            return opened
        opened += len(pairs)
    return opened


async def _asked_one_by_one(
    ctx: ToolContext, array: str, context: int, session: str | None
) -> list[tuple[str, str]]:
    """(host, closed root) in the world ``context`` of each element of the page's ``array``
    that has a closed root."""
    listed = await ctx.cdp("Runtime.getProperties", {"objectId": array, "ownProperties": True})
    hosts = [
        str(p["value"]["objectId"])
        for p in listed.get("result", [])
        if p.get("name", "").isdigit() and p.get("value", {}).get("objectId")
    ]
    found = await asyncio.gather(*(_closed_root(ctx, host, context, session) for host in hosts))
    return [(host, root) for host, root in zip(hosts, found, strict=True) if root]


async def _closed_root(
    ctx: ToolContext, host: str, context: int, session: str | None
) -> str | None:
    with contextlib.suppress(CommandFailed):  # the element went away meanwhile
        described = await ctx.cdp(
            "DOM.describeNode", {"objectId": host, "depth": 0, "pierce": True}
        )
        for root in _closed(described.get("node", {})):
            return await ctx.resolve(root, context, session)
    return None


async def _whole_page(ctx: ToolContext, context: int, session: str | None) -> list[tuple[str, str]]:
    """(host, closed root) in the world ``context`` of every closed root of the page, closed
    roots in closed roots too: one description of the whole document (``DOM.describeNode``
    tracks no node, so the page's changes after it send nothing)."""
    document = await ctx.cdp(
        "Runtime.evaluate",
        {"expression": "document", "contextId": context, "objectGroup": ctx.objects},
        session=session,
    )
    found = document.get("result", {}).get("objectId")
    if not found:
        return []
    try:
        whole = await ctx.cdp(
            "DOM.describeNode",
            {"objectId": found, "depth": -1, "pierce": True},
            timeout=WHOLE_PAGE_TIMEOUT,
        )
    except (CommandFailed, CommandTimeout):  # too large to describe in time (or gone)
        return []
    backends: list[tuple[int, int]] = []
    stack = [whole.get("node", {})]
    while stack:
        node = stack.pop()
        host = node.get("backendNodeId")
        if isinstance(host, int):
            backends += [(host, root) for root in _closed(node)]
        for key in ("children", "shadowRoots"):
            stack += node.get(key, [])
        if "contentDocument" in node:
            stack.append(node["contentDocument"])
    objects = await asyncio.gather(
        *(ctx.resolve(backend, context, session) for pair in backends for backend in pair)
    )
    pairs = zip(objects[::2], objects[1::2], strict=True)
    return [(host, root) for host, root in pairs if host and root]


def _closed(node: dict[str, Any]) -> list[int]:
    """The backend node ids of a described node's closed shadow roots."""
    return [
        root["backendNodeId"]
        for root in node.get("shadowRoots", [])
        if root.get("shadowRootType") == "closed" and isinstance(root.get("backendNodeId"), int)
    ]
