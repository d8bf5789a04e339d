"""An agent types into the editors real sites use: CodeMirror 5 and 6, Monaco, Ace, ProseMirror,
a contenteditable and plain fields (tests/e2e/pages/editors, the real libraries from npm).

Each test reads the editor's text back through the editor's own interface in the page, over the
tests' own CDP connection: the text must be exactly what was asked, not merely "typed".
"""

from __future__ import annotations

import json
import re
import uuid

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import PAGES_DIR, AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.tools.page.outline import PARTIAL_EDITOR

pytestmark = E2E

VENDOR = PAGES_DIR / "vendor"
BUILT = (
    VENDOR / "node_modules" / "codemirror5" / "lib" / "codemirror.js",
    VENDOR / "node_modules" / "monaco-editor" / "min" / "vs" / "loader.js",
    VENDOR / "node_modules" / "ace-builds" / "src-min-noconflict" / "ace.js",
    VENDOR / "build" / "codemirror6.js",
    VENDOR / "build" / "prosemirror.js",
)
QUERY = "select count(*) as n\nfrom facts\n  where name = 'a(b)' and id > 1"
LETTER = "Dear Ada,\nthe engine (analytical) works."
# Editor page, the text it starts with, and what to type into it.
EDITORS = {
    "codemirror5": ("select * from facts where id > 1", QUERY),
    "codemirror6": ("select id, name\nfrom facts\nwhere id > 1", QUERY),
    "monaco": ("function greet(name) {\n  return 'Hello ' + name;\n}", QUERY),
    "ace": ("SELECT name\nFROM facts;", QUERY),
    "prosemirror": ("Hello world\nSecond paragraph", LETTER),
}


@pytest.fixture(scope="module", autouse=True)
def editors_installed() -> None:
    missing = [str(path.relative_to(PAGES_DIR)) for path in BUILT if not path.is_file()]
    assert not missing, (
        f"the editor libraries are not installed ({', '.join(missing)}); run `make editors` "
        "(make test does it)"
    )


async def editor_page(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, name: str
) -> tuple[int, Page, str]:
    """A new tab on the editor page, ready: its id, the tests' view of it, a snapshot."""
    url = pages.url(f"editors/{name}.html") + f"?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    await wait_until(lambda: page.evaluate("window.editorReady === true"), timeout=15,
                     message=f"{name} loads its editor")  # fmt: skip
    return tab, page, await agent.snapshot(tab)


def first_textbox(snapshot: str) -> str:
    match = re.search(r"^\s*textbox\b[^\n]*?\[(e\d+)\]", snapshot, re.M)
    assert match, f"no textbox in the snapshot:\n{snapshot}"
    return match.group(1)


async def text_of(page: Page, field: str = "") -> str:
    return str(await page.evaluate(f"window.editorText({field!r})"))


@pytest.mark.parametrize("name", list(EDITORS))
async def test_typing_replaces_what_an_editor_holds_with_exactly_the_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, name: str
) -> None:
    start, typed = EDITORS[name]
    tab, page, snapshot = await editor_page(agent, browser, pages, name)
    assert await text_of(page) == start
    said = await agent.ok("browser_type", tab_id=tab, ref=first_textbox(snapshot), text=typed)
    assert await text_of(page) == typed
    assert said.startswith(f"Typed {len(typed)} characters into")
    assert "covered" not in said


@pytest.mark.parametrize("name", list(EDITORS))
async def test_appending_adds_at_the_end_wherever_the_caret_was(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, name: str
) -> None:
    start, _ = EDITORS[name]
    tab, page, snapshot = await editor_page(agent, browser, pages, name)
    editor = first_textbox(snapshot)
    # The caret goes to the very start and the first character goes: keys reach the editor.
    await agent.ok("browser_press_key", tab_id=tab, ref=editor, key="Control+Home")
    await agent.ok("browser_press_key", tab_id=tab, ref=editor, key="Delete")
    assert await text_of(page) == start[1:]
    added = "\nlimit 5 -- (end)"
    said = await agent.ok("browser_type", tab_id=tab, ref=editor, text=added, append=True)
    assert await text_of(page) == start[1:] + added
    assert said.startswith(f"Added {len(added)} characters into")


@pytest.mark.parametrize("name", list(EDITORS))
async def test_typing_nothing_empties_an_editor(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, name: str
) -> None:
    tab, page, snapshot = await editor_page(agent, browser, pages, name)
    await agent.ok("browser_type", tab_id=tab, ref=first_textbox(snapshot), text="")
    assert await text_of(page) == ""


async def test_an_editor_that_reshapes_typed_keys_still_ends_with_exactly_the_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    # Key by key, Monaco closes brackets and indents new lines itself.
    tab, page, snapshot = await editor_page(agent, browser, pages, "monaco")
    typed = "if (ready) {\ngo();\n}"
    said = await agent.ok(
        "browser_type", tab_id=tab, ref=first_textbox(snapshot), text=typed, slowly=True
    )
    assert await text_of(page) == typed
    assert "through the editor's own interface" in said


async def test_the_textarea_an_editor_was_made_from_and_the_editors_frame_take_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, _ = await editor_page(agent, browser, pages, "codemirror5")
    # Datasette's own textarea, hidden once CodeMirror replaced it: the text goes to the editor.
    await agent.ok("browser_type", tab_id=tab, selector="#sql", text="select 1")
    assert await text_of(page) == "select 1"
    tab, page, _ = await editor_page(agent, browser, pages, "monaco")
    await agent.ok("browser_type", tab_id=tab, selector="#editor", text="let x = 1;")
    assert await text_of(page) == "let x = 1;"


async def test_a_field_an_editor_opens_inside_itself_takes_the_text_not_the_editor(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    # CodeMirror 6 opens its search panel inside the editor's box: typing there searches.
    tab, page, _ = await editor_page(agent, browser, pages, "codemirror6")
    await page.evaluate("window.view.focus()")
    for kind in ("keyDown", "keyUp"):
        await page.session.send(
            "Input.dispatchKeyEvent",
            {"type": kind, "modifiers": 2, "key": "f", "code": "KeyF", "windowsVirtualKeyCode": 70},
        )
    find = ref(await agent.snapshot(tab), "textbox", "Find")
    await agent.ok("browser_type", tab_id=tab, ref=find, text="facts")
    assert await page.evaluate("document.querySelector('.cm-search [name=search]').value") == (
        "facts"
    )
    assert await text_of(page) == EDITORS["codemirror6"][0]


async def test_a_form_fill_reaches_editors_in_frames(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    url = pages.url("editors/frames.html") + f"?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    top = await browser.attach_page(url)
    ready = "[...document.querySelectorAll('iframe')].every((f) => f.contentWindow.editorReady)"
    await wait_until(lambda: top.evaluate(ready), timeout=15, message="both editors load")
    snapshot = await agent.snapshot(tab)
    boxes = re.findall(r"^\s*textbox\b[^\n]*?\[(e\d+)\]", snapshot, re.M)
    assert len(boxes) == 2, snapshot
    said = await agent.ok(
        "browser_fill_form",
        tab_id=tab,
        fields=[{"ref": boxes[0], "value": "select 5"}, {"ref": boxes[1], "value": QUERY}],
    )
    texts = await top.evaluate(
        "[...document.querySelectorAll('iframe')].map((f) => f.contentWindow.editorText())"
    )
    assert texts == ["select 5", QUERY]
    assert said.startswith("Filled the form:")


async def test_plain_fields_and_a_contenteditable_take_exactly_the_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await editor_page(agent, browser, pages, "plain")
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Body"), text=LETTER)
    assert await text_of(page, "body") == LETTER
    comment = ref(snapshot, "textbox", "Comment")
    await agent.ok("browser_type", tab_id=tab, ref=comment, text="Looks right")
    assert await text_of(page, "comment") == "Looks right"
    await agent.ok("browser_type", tab_id=tab, ref=comment, text=" to me.", append=True)
    assert await text_of(page, "comment") == "Looks right to me."
    said = await agent.ok(
        "browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Title"), text="One\nline"
    )
    assert await text_of(page, "title") == "One line"
    assert "line breaks" in said


async def test_typing_needs_focus_not_a_clear_path_and_obstacles_are_named(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await editor_page(agent, browser, pages, "obstacles")
    coupon = ref(snapshot, "textbox", "Coupon")
    # The cookie banner covers the coupon field: a click names the banner, typing just works.
    refused = await agent.fails("browser_click", tab_id=tab, ref=coupon)
    assert 'div#cookies "We use cookies to make this page work. Accept"' in refused
    await agent.ok("browser_type", tab_id=tab, ref=coupon, text="SPRING")
    assert await page.evaluate("document.getElementById('coupon').value") == "SPRING"
    # A modal dialog makes the page behind it inert: typing says so, and changes nothing.
    await page.evaluate("document.getElementById('confirm').showModal()")
    refused = await agent.fails(
        "browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Note"), text="new"
    )
    assert 'the modal dialog dialog#confirm "Leave without saving? Stay" is open' in refused
    assert await page.evaluate("document.getElementById('note').value") == "old note"


async def test_a_field_that_keeps_less_than_asked_is_an_error_that_says_what_it_holds(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, _, snapshot = await editor_page(agent, browser, pages, "obstacles")
    refused = await agent.fails(
        "browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Postcode"), text="1234567"
    )
    assert "holds '12345' after typing, not '1234567'; it takes at most 5 characters" in refused
    # Text the agent marked secret is never quoted back, nor kept in the command log.
    refused = await agent.fails(
        "browser_type",
        tab_id=tab,
        ref=ref(snapshot, "textbox", "Postcode"),
        text="topsecret99",
        secret=True,
    )
    assert "holds 5 characters after typing, not the 11 asked for" in refused
    assert "topse" not in refused
    log = app.harness.core.command_log
    assert log is not None
    assert "topse" not in json.dumps([[r.arguments, r.error] for r in log.recent(20)])


async def test_a_date_field_takes_a_date_and_refuses_anything_else(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, _ = await editor_page(agent, browser, pages, "obstacles")
    await agent.ok("browser_type", tab_id=tab, selector="#arrival", text="2025-01-31")
    assert await page.evaluate("document.getElementById('arrival').value") == "2025-01-31"
    refused = await agent.fails("browser_type", tab_id=tab, selector="#arrival", text="tomorrow")
    assert "takes values such as 2025-01-31" in refused
    assert await page.evaluate("document.getElementById('arrival').value") == "2025-01-31"


async def test_a_read_only_editor_refuses_text_and_keeps_its_own(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await editor_page(agent, browser, pages, "codemirror5")
    await page.evaluate("window.editor.setOption('readOnly', true)")
    refused = await agent.fails(
        "browser_type", tab_id=tab, ref=first_textbox(snapshot), text="drop table facts"
    )
    assert "is read-only" in refused
    assert await text_of(page) == EDITORS["codemirror5"][0]


async def test_an_editor_whose_text_cannot_be_read_back_says_so(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    # Monaco bundled into a site's own scripts has no global to read its model through.
    tab, page, snapshot = await editor_page(agent, browser, pages, "monaco")
    await page.evaluate("window.monacoApi = window.monaco; delete window.monaco")
    said = await agent.ok("browser_type", tab_id=tab, ref=first_textbox(snapshot), text="x = 1")
    assert said.endswith("(Monaco: what it holds now could not be read back to check)")
    assert await text_of(page) == "x = 1"
    # The snapshot shows the lines it draws, and says that is all it could read.
    line = next(s for s in (await agent.snapshot(tab)).splitlines() if "textbox" in s)
    assert 'value="x = 1"' in line and line.endswith(PARTIAL_EDITOR), line
