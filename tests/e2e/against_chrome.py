"""A tab's snapshot held against Chrome's own accessibility tree, read live (issue 24).

The outline is the one ``browser_snapshot`` builds, taken through the running app and the
extension; Chrome's tree is read over the tests' own CDP connection, before and after, and only
what both reads agree on is held against the outline (a clock, a "36s ago" may change between
them). ``support.outline_diff`` does the comparing.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from unittest import mock

from e2e.agent import Agent
from e2e.cdp import CdpError, Session
from e2e.corpus import Corpus, CorpusPage
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, wait_until
from e2e.sight import unseen_nodes
from support.outline_diff import ChromeFrame, Item, Report, chrome_items, chrome_text, compare
from tabrelay.tools.groups import snapshot
from tabrelay.tools.page import editor_text, outline, page_outline
from tabrelay.tools.scripts.editors import EDITORS_AT

HELD_ID = """function () {
  const held = globalThis.__tabrelayHeld;
  const id = held ? held.ids.get(this) : undefined;
  return id === undefined ? null : id;
}"""


async def open_tab(agent: Agent, browser: ExtensionBrowser, url: str) -> tuple[int, Page]:
    """A new tab the agent opens on ``url``, and the tests' own view of it, wherever the page
    then went (a sign-in redirect, a route added to the URL)."""
    known = {t["targetId"] for t in await browser.page_targets()}
    tab = await agent.open(url)

    async def new() -> str | None:
        fresh = [t["targetId"] for t in await browser.page_targets() if t["targetId"] not in known]
        return fresh[0] if len(fresh) == 1 else None

    target = await wait_until(new, timeout=10, message=f"the tab of {url}")
    return tab, Page(browser, await Session.attach(browser.cdp, target))


# Resolves once the page has not changed for ``quietMs`` (or after ``limitMs`` regardless).
_SETTLED = """
((quietMs, limitMs) => new Promise((resolve) => {
  let timer = setTimeout(done, quietMs);
  const limit = setTimeout(done, limitMs);
  const seen = new MutationObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(done, quietMs);
  });
  seen.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  function done() {
    seen.disconnect();
    clearTimeout(timer);
    clearTimeout(limit);
    resolve(true);
  }
}))(500, 10000)
"""


async def visit(
    agent: Agent, browser: ExtensionBrowser, corpus: Corpus, page: CorpusPage
) -> tuple[int, Page]:
    """The corpus page open in a new tab, prepared as a person would, drawn and settled."""
    tab, seen = await open_tab(agent, browser, corpus.url(page))
    if page.prepare is not None:
        await page.prepare(seen)
    await wait_until(lambda: seen.evaluate(page.ready), timeout=30, message=page.key)
    await seen.evaluate(_SETTLED, timeout=15)
    return tab, seen


async def chrome_frames(session: Session) -> list[ChromeFrame]:
    """Chrome's tree of the page and of each frame it can read in the page's process."""
    tree = await session.send("Page.getFrameTree")
    frames = [ChromeFrame((await session.send("Accessibility.getFullAXTree"))["nodes"])]
    pending = list(tree["frameTree"].get("childFrames", []))
    while pending:
        child = pending.pop(0)
        frame_id = child["frame"]["id"]
        try:
            owner = await session.send("DOM.getFrameOwner", {"frameId": frame_id})
            nodes = await session.send("Accessibility.getFullAXTree", {"frameId": frame_id})
        except CdpError:
            continue  # another process's frame (cross-origin): not read here yet
        frames.append(ChromeFrame(nodes["nodes"], int(owner["backendNodeId"])))
        pending += child.get("childFrames", [])
    return frames


@dataclass
class Dom:
    """What the tests read of the page's DOM: which elements are focusable by script only
    (``tabindex="-1"``) and each node's parent (backend node ids)."""

    script_focus: set[int] = field(default_factory=set)
    parent: dict[int, int] = field(default_factory=dict)

    def inside(self, node: int | None, boxes: set[int]) -> bool:
        while node is not None:
            if node in boxes:
                return True
            node = self.parent.get(node)
        return False


async def read_dom(session: Session) -> Dom:
    document = await session.send("DOM.getDocument", {"depth": -1, "pierce": True})
    dom = Dom()
    stack = [document["root"]]
    while stack:
        node = stack.pop()
        backend = int(node["backendNodeId"])
        attributes = node.get("attributes", [])
        pairs = dict(zip(attributes[::2], attributes[1::2], strict=True))
        if pairs.get("tabindex", "").strip() == "-1":
            dom.script_focus.add(backend)
        below = [*node.get("children", []), *node.get("shadowRoots", [])]
        if "contentDocument" in node:
            below.append(node["contentDocument"])
        for child in below:
            dom.parent[int(child["backendNodeId"])] = backend
        stack += below
    return dom


async def box_nodes(session: Session, editors: list[editor_text.CodeEditor]) -> set[int]:
    """The backend node ids of the editors' boxes (found as Tabrelay's world finds them, here
    in the page's world, which sees the same elements)."""
    found: set[int] = set()
    for paths in editor_text.paths(editors):
        box = await session.send(
            "Runtime.evaluate",
            {"expression": f"(({EDITORS_AT})({json.dumps([paths])})[0] || {{}}).box"},
        )
        object_id = box.get("result", {}).get("objectId")
        if object_id:
            described = await session.send("DOM.describeNode", {"objectId": object_id})
            found.add(int(described["node"]["backendNodeId"]))
    return found


async def held_ids(session: Session, backends: list[int]) -> dict[int, int]:
    """The id Tabrelay's world in the page holds each of ``backends`` by, where it holds one."""
    tree = await session.send("Page.getFrameTree")
    made = await session.send(
        "Page.createIsolatedWorld",
        {"frameId": tree["frameTree"]["frame"]["id"], "worldName": page_outline.WORLD},
    )
    found: dict[int, int] = {}
    for backend in backends:
        try:
            resolved = await session.send(
                "DOM.resolveNode",
                {"backendNodeId": backend, "executionContextId": made["executionContextId"]},
            )
        except CdpError:
            continue
        answer = await session.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": HELD_ID,
                "objectId": resolved["object"]["objectId"],
                "returnByValue": True,
            },
        )
        value = answer.get("result", {}).get("value")
        if isinstance(value, int):
            found[backend] = value
    return found


def whole_lines() -> contextlib.AbstractContextManager[object]:
    """The outline built without shortening long names, texts and values (a deliberate cut,
    with its own tests, that would hide what the comparison looks for)."""
    endless = 10**9
    return mock.patch.multiple(
        outline, MAX_NAME=endless, MAX_TEXT=endless, MAX_VALUE=endless, MAX_LINES=endless
    )


def _stable(before: list[Item], after: list[Item]) -> list[Item]:
    seen = {(i.text, i.role) for i in before}
    return [i for i in after if (i.text, i.role) in seen]


async def hold_against_chrome(app: AppUnderTest, session: Session, tab_id: int) -> Report:
    """The snapshot of ``tab_id`` (``session`` is the tests' own view of the same tab).

    A code editor shows its text as its input's value, not its drawing: Chrome's texts inside
    an editor's box count only when they are part of that text (a gutter's line number is not).
    """
    dom = await read_dom(session)
    unseen = await unseen_nodes(session)
    before, _ = chrome_items(
        await chrome_frames(session), script_focus=dom.script_focus, unseen=unseen
    )
    ctx = await app.tool_context(tab_id)
    editors = await editor_text.read(ctx)
    with whole_lines():
        built = await snapshot.take(ctx, viewport=False, depth=None)
    frames = await chrome_frames(session)
    after, lines = chrome_items(frames, script_focus=dom.script_focus, unseen=unseen)
    boxes = await box_nodes(session, editors)
    code = "".join("".join(e.text.split()) for e in editors).casefold()
    items = [
        i
        for i in _stable(before, after)
        if not dom.inside(i.backend, boxes) or "".join(i.text.split()) in code
    ]
    wanted = sorted({i.backend for i in items if i.needs_ref and i.backend is not None})
    held = await held_ids(session, wanted)
    refs = {e.backend_node_id: e.ref for e in built.elements if "[" + e.ref + "]" in e.line}
    ref_of = {b: refs[h] for b, h in held.items() if h in refs}
    return compare(items, lines, built.lines, ref_of, chrome_text=chrome_text(frames))
