"""browser_snapshot reads the page in two scripts: the outline, in Tabrelay's own world, which
also tells secret fields apart (``tools/page/page_outline.py``), and code editors' text, through
their API in the page's world (``tools/page/editor_text.py``). The page's own scripts can break the
second (the editor is then what the outline says) but never the first: a page that breaks what a
script in its world would use still has each secret field hidden by its kind. Real Chromium, the
real extension, a real MCP client; the page is a real CodeMirror 5."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.tools.page import editor_text, page_outline
from tabrelay.tools.page.outline import EditorText

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


async def editors_of(app: AppUnderTest, tab: int) -> dict[int, EditorText]:
    """What the snapshot's editor script finds on the tab, read as the snapshot reads it."""
    ctx = await app.tool_context(tab)
    try:
        return await editor_text.read(ctx)
    finally:
        await ctx.release_objects()


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
    assert [e.text for e in editors.values()] == [await page.evaluate("window.editorText()")]
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
    assert await editors_of(app, tab) == {}
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
