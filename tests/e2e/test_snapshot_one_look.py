"""browser_snapshot looks for secret fields and code editors' text in one page script, one walk
over the page (``tools/page_looks.py``), and each look still fails on its own: a page that
breaks the secret fields' look shows no value at all (fail closed) while its editor is still
read; a page that breaks the editor's look still has each secret field hidden by its kind.
Real Chromium, the real extension, a real MCP client; the page is a real CodeMirror 5."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.tools import editor_text, secret_fields
from tabrelay.tools.outline import EditorText
from tabrelay.tools.page_looks import look

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


async def both_looks(
    app: AppUnderTest, tab: int
) -> tuple[dict[int, str] | None, dict[int, EditorText]]:
    """What the snapshot's one look finds on the tab, read as the snapshot reads it."""
    ctx = await app.tool_context(tab)
    try:
        secrets, editors = await look(ctx, secret_fields.LOOK, editor_text.LOOK)
    finally:
        await ctx.release_objects()
    return secret_fields.read_secrets(secrets), editor_text.read_texts(editors)


def line(snapshot: str, start: str) -> str:
    found = [s.strip() for s in snapshot.splitlines() if s.strip().startswith(start)]
    assert len(found) == 1, f"{len(found)} lines start with {start!r}:\n{snapshot}"
    return found[0]


async def test_a_snapshot_of_secrets_beside_a_code_editor_runs_one_page_script_besides_ready_state(
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

    # Both looks answered: the secret is hidden by its kind, the editor shows what it holds.
    assert "SECRET" not in snapshot, snapshot
    assert line(snapshot, 'textbox "Code"').endswith(
        "(a one-time code field: its value is not shown)"
    )
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    assert f'value="{SQL}"' in line(snapshot, 'textbox "SQL query"')
    scripts = [p["expression"] for m, p in sent if m == "Runtime.evaluate"]
    assert len(scripts) == 2, scripts
    assert scripts[0] == "document.readyState", scripts
    assert "eachRoot(document" in scripts[1] and scripts[1].count("eachRoot(document") == 1


async def test_a_page_that_breaks_the_secret_fields_look_shows_no_value_but_its_editor_is_read(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page = await opened(agent, browser, pages, "secrets")
    secrets, editors = await both_looks(app, tab)
    assert secrets is None  # fail closed
    assert [e.text for e in editors.values()] == [await page.evaluate("window.editorText()")]
    assert [e.label for e in editors.values()] == ["SQL query"]
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot and "PLAIN" not in snapshot and SQL not in snapshot, snapshot
    for name in ("Host", "Code", "SQL query"):  # the editor's name is its look's answer
        assert "the page kept Tabrelay from checking it for secrets" in line(
            snapshot, f'textbox "{name}"'
        )


async def test_a_page_that_breaks_the_editor_look_still_has_each_secret_hidden_by_its_kind(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, _ = await opened(agent, browser, pages, "editor")
    secrets, editors = await both_looks(app, tab)
    assert editors == {}
    assert secrets is not None and list(secrets.values()) == ["one-time code"]
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot, snapshot
    assert line(snapshot, 'textbox "Code"').endswith(
        "(a one-time code field: its value is not shown)"
    )
    assert 'value="db.example.org-PLAIN"' in line(snapshot, 'textbox "Host"')
    # Without its look the editor is what Chrome's tree says: a nameless box and its drawing.
    assert not re.search(r'textbox "SQL query"', snapshot), snapshot
