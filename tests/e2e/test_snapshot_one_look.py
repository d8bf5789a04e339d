"""browser_snapshot reads the page in two scripts: the outline, in Tabrelay's own world, which
also tells secret fields apart (``tools/page/page_outline.py``), and code editors' text, through
their API in the page's world (``tools/page/editor_text.py``). The page's own scripts can break the
second (the editor is then what the outline says) but never the first: a page that breaks what a
script in its world would use still has each secret field hidden by its kind. Real Chromium, the
real extension, a real MCP client; the page is a real CodeMirror 5."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.tools.page import editor_text, page_outline
from tabrelay.tools.scripts.editors import EDITORS_AT
from tabrelay.tools.scripts.page_scripts import PATH_OF

pytestmark = E2E

PAGE = "editors/secrets_beside_code.html"
SQL = "select * from deploys where id > 7"


async def opened(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, broken: str
) -> tuple[int, Page]:
    url = pages.url(f"{PAGE}?break={broken}&t={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    await wait_until(
        lambda: page.evaluate("window.editorReady === true"), timeout=20, message="the editor"
    )
    return tab, page


async def editors_of(app: AppUnderTest, tab: int) -> list[editor_text.CodeEditor]:
    """What the snapshot's editor script finds on the tab, read as the snapshot reads it."""
    return await editor_text.read(await app.tool_context(tab))


def line(snapshot: str, start: str) -> str:
    found = [s.strip() for s in snapshot.splitlines() if s.strip().startswith(start)]
    assert len(found) == 1, f"{len(found)} lines start with {start!r}:\n{snapshot}"
    return found[0]


async def test_a_snapshot_runs_one_script_in_its_own_world_and_one_in_the_page_s(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tab, _ = await opened(agent, browser, pages, "none")
    relay = await app.browser()
    sent: list[tuple[str, dict[str, Any]]] = []
    send = relay.send_command

    async def recording(method: str, params: Any = None, *, timeout: Any = None) -> Any:
        if method == "cdp.send":
            sent.append((params["method"], params.get("params", {})))
        return await send(method, params, timeout=timeout)

    monkeypatch.setattr(relay, "send_command", recording)
    snapshot = await agent.snapshot(tab)
    monkeypatch.undo()

    # The secret is hidden by its kind, the editor shows what it holds.
    assert "SECRET" not in snapshot, snapshot
    assert line(snapshot, 'textbox "Code"').endswith(
        "(a one-time code field: its value is not shown)"
    )
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    assert f'value="{SQL}"' in line(snapshot, 'textbox "SQL query"')
    in_page = [p["expression"] for m, p in sent if m == "Runtime.evaluate" and "contextId" not in p]
    # Nothing else runs in the page's world: no listeners are asked for (issue 24), and whether
    # the document is still being parsed comes with the outline (issue 27).
    assert in_page == [editor_text.SCRIPT], in_page
    outlines = [
        p for m, p in sent if page_outline.OUTLINE.strip() in p.get("functionDeclaration", "")
    ]
    assert len(outlines) == 1 and outlines[0]["executionContextId"], outlines
    # The world keeps the outline's code: a second read of the document sends only a call of it.
    sent.clear()
    monkeypatch.setattr(relay, "send_command", recording)
    again = await agent.snapshot(tab)
    monkeypatch.undo()
    assert again.split("\n", 1)[1] == snapshot.split("\n", 1)[1]
    # The editors' texts and where they are come back by value: two relay round trips, the
    # first two commands at once, whatever the number of editors (no element handed from the
    # page's world to Tabrelay's one by one, no objects left to let go).
    methods = [m for m, _ in sent]
    assert sorted(methods[:2]) == ["Page.getFrameTree", "Runtime.evaluate"], methods
    assert methods[2:] == ["Runtime.callFunctionOn"], methods
    declared = [p.get("functionDeclaration", "") for m, p in sent if m == "Runtime.callFunctionOn"]
    assert not any(page_outline.OUTLINE.strip() in d for d in declared), declared
    assert sum(len(d) for d in declared) < 10_000, [len(d) for d in declared]
    # Chrome's own tree, DOM snapshot and listeners are not asked for: they grow faster than
    # the page (every listener of every kind: 15,000 on a JupyterLab notebook).
    asked = [
        m for m, _ in sent if m.split(".")[0] in ("Accessibility", "DOMSnapshot", "DOMDebugger")
    ]
    assert not asked, sent


async def test_a_page_that_breaks_what_its_world_would_use_still_has_each_secret_hidden(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    """The page makes querySelectorAll throw for form fields in its own world: the outline
    runs in Tabrelay's, where the page's changes are not seen."""
    tab, page = await opened(agent, browser, pages, "secrets")
    editors = await editors_of(app, tab)
    assert [e.text for e in editors] == [await page.evaluate("window.editorText()")]
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot, snapshot
    assert line(snapshot, 'textbox "Code"').endswith(
        "(a one-time code field: its value is not shown)"
    )
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    assert f'value="{SQL}"' in line(snapshot, 'textbox "SQL query"')


async def test_a_page_that_breaks_the_editor_script_still_has_each_secret_hidden_by_its_kind(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, _ = await opened(agent, browser, pages, "editor")
    assert await editors_of(app, tab) == []
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot, snapshot
    assert line(snapshot, 'textbox "Code"').endswith(
        "(a one-time code field: its value is not shown)"
    )
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    # Without its script the editor is what the outline says: a nameless box and its drawing.
    assert not re.search(r'textbox "SQL query"', snapshot), snapshot


async def test_elements_named_as_the_worlds_own_globals_change_nothing(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The page names elements after the globals Tabrelay's world keeps (its held ids, the
    closed roots it opened, the outline's code): a named element shows on every world's window,
    but the world reads its own properties only, so the page is read as before, twice."""
    tab, page = await opened(agent, browser, pages, "none")
    names = ["__tabrelayHeld", "__tabrelayClosed", page_outline._KEPT]
    await page.evaluate(
        f"for (const name of {names!r}) {{ const el = document.createElement('div');"
        " el.id = name; document.body.append(el); }"
    )
    assert await page.evaluate(f"typeof window[{names[0]!r}]") == "object"  # named, as meant
    first = await agent.snapshot(tab)
    again = await agent.snapshot(tab)
    for snapshot in (first, again):
        assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"'), snapshot
        assert "SECRET" not in snapshot


async def test_an_editor_the_page_moves_between_the_two_reads_is_read_as_the_tree_says(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page's world says where each editor is; Tabrelay's world follows that back in the
    outline, a round trip later. A page that moves the editor meanwhile (or says it is
    elsewhere) gets no text put on another element: where the path leads is no editor's box,
    or holds no editor's input, and the editor is read as the outline alone reads it."""
    tab, page = await opened(agent, browser, pages, "none")
    read = editor_text.read

    async def then_moved(ctx: Any) -> list[editor_text.CodeEditor]:
        found = await read(ctx)
        await page.evaluate(
            "const box = document.querySelector('.CodeMirror');"
            " document.querySelector('form').prepend(box); 1"
        )
        return found

    monkeypatch.setattr(editor_text, "read", then_moved)
    snapshot = await agent.snapshot(tab)
    # Its text given to no element (the path led elsewhere): its drawing is what is read.
    assert f'value="{SQL}"' not in snapshot, snapshot
    assert "textbox [e" in snapshot and f'clickable "{SQL}"' in snapshot, snapshot
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    monkeypatch.undo()
    assert f'value="{SQL}"' in line(await agent.snapshot(tab), 'textbox "SQL query"')

    # Where a path may lead, as Tabrelay's world follows it: only to an editor's box that holds
    # the editor's input.
    (editor,) = await editors_of(app, tab)
    ctx = await app.tool_context(tab)
    tree = await ctx.cdp("Page.getFrameTree")
    world = await page_outline.world(ctx, tree["frameTree"]["frame"]["id"])
    form = await page.evaluate(f"JSON.stringify(({PATH_OF})(document.querySelector('form')))")
    host = await page.evaluate(f"JSON.stringify(({PATH_OF})(document.getElementById('host')))")
    tries = [
        [editor.input, editor.box],
        [editor.input, json.loads(form)],  # no editor's box
        [json.loads(host), editor.box],  # not in the box
        [editor.input, [*editor.box, 99]],  # no such child
        [editor.input, [*editor.box, "f", 0]],  # no frame there
        [editor.input, [*editor.box, "s", 0]],  # no shadow root there
    ]
    answer = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({EDITORS_AT})({json.dumps(tries)}).map((e) => e && e.box.className)",
            "contextId": world,
            "returnByValue": True,
        },
    )
    placed = answer["result"]["value"]
    assert "CodeMirror" in placed[0] and placed[1:] == [None] * 5, placed
