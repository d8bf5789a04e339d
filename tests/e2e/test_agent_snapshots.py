"""What an agent reads in snapshots of real kinds of pages, through a real MCP client, real
Chromium and the real extension (issue 14, findings 1, 3 and 5).

Pages: a definition list of long function signatures as the Python documentation writes it
(``agent/longnames.html``), fields and contenteditables holding what a person typed
(``agent/editors.html``), and real CodeMirror 5 and 6, Monaco and ProseMirror editors
(``editors/*.html``). Each test checks the snapshot against what the page itself holds, read
over the tests' own CDP connection.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Awaitable, Callable

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import ExtensionBrowser, Page, PageServer, wait_until

pytestmark = E2E

READ_WHOLE = re.compile(r"\(shortened; browser_get_content ref=(e\d+) reads it whole\)$")
SIGNATURES = (
    "shutil.copytree(src, dst, symlinks=False, ignore=None, copy_function=copy2, "
    "ignore_dangling_symlinks=False, dirs_exist_ok=False)",
    "shutil.make_archive(base_name, format[, root_dir[, base_dir[, verbose[, dry_run[, owner[, "
    "group[, logger]]]]]]])",
    "class subprocess.Popen(args, bufsize=-1, executable=None, stdin=None, stdout=None, "
    "stderr=None, preexec_fn=None, close_fds=True, shell=False, cwd=None, env=None, "
    "universal_newlines=None, startupinfo=None, creationflags=0, restore_signals=True, "
    "start_new_session=False, pass_fds=(), *, group=None, extra_groups=None, user=None, "
    "umask=-1, encoding=None, errors=None, text=None, pipesize=-1, process_group=None)",
)
# The code editors of tests/e2e/pages/editors: page, the editor's name in the snapshot.
CODE_EDITORS = (
    ("codemirror5", "SQL query"),
    ("codemirror6", "SQL query"),
    ("monaco", "Script"),
    ("prosemirror", "Document"),
)


async def opened(
    agent: Agent, browser: ExtensionBrowser, url: str, *, editor: bool = False
) -> tuple[int, Page]:
    """A new tab on ``url`` (made unique, so the tests' own view attaches to this one)."""
    url = f"{url}?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    if editor:
        await wait_until(
            lambda: page.evaluate("window.editorReady === true"), timeout=20, message="editor"
        )
    return tab, page


def line_of(snapshot: str, start: str) -> str:
    """The (stripped) snapshot line that starts with ``start``."""
    found = [line.strip() for line in snapshot.splitlines() if line.strip().startswith(start)]
    assert len(found) == 1, f"{len(found)} lines start with {start!r}:\n{snapshot}"
    return found[0]


def body(content: str) -> str:
    """browser_get_content's text without its header (title and URL)."""
    return content.split("\n\n", 1)[1]


# --- long names (finding 3) -----------------------------------------------------------------


async def test_long_signatures_of_a_definition_list_read_whole_on_their_term_line(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _ = await opened(agent, browser, pages.url("agent/longnames.html"))
    snapshot = await agent.snapshot(tab)
    for signature in SIGNATURES:
        assert (
            line_of(snapshot, f'term "{signature}')
            == f"term {json.dumps(signature + '¶', ensure_ascii=False)}"
        )
        # The term's name says its text; it is not said again below it, piece by piece.
        assert snapshot.count(signature.split("(")[1].split(",")[0] + ",") == 1
    copy = '"Copy the example that mirrors a directory tree while ignoring compiled Python files'
    assert copy in snapshot
    assert "…" not in line_of(snapshot, 'link "Read the whole section')
    assert "…" not in line_of(snapshot, 'cell "Copies permission bits')


async def test_text_running_through_inline_elements_reads_as_one_line(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _ = await opened(agent, browser, pages.url("agent/longnames.html"))
    snapshot = await agent.snapshot(tab)
    assert (
        "  text: Recursively copy an entire directory tree rooted at src to a directory named dst "
        "and return the destination directory." in snapshot.splitlines()
    )
    assert (
        " text: The shutil module offers a number of high-level operations on files and "
        "collections of files." in snapshot.splitlines()
    )
    assert not re.search(r"^\s*text: (src|dst|,)$", snapshot, re.M)


async def test_a_shortened_line_says_which_ref_reads_it_whole(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages.url("agent/longnames.html"))
    snapshot = await agent.snapshot(tab)
    essay = line_of(snapshot, "text: ESSAY-START")
    found = READ_WHOLE.search(essay)
    assert found, essay
    assert "ESSAY-END" not in essay and len(essay) < 700
    whole = await page.text_of("#essay")
    for fmt in ("text", "markdown"):
        read = await agent.ok("browser_get_content", tab_id=tab, ref=found.group(1), format=fmt)
        assert body(read) == whole + "\n", fmt
    html = await agent.ok("browser_get_content", tab_id=tab, ref=found.group(1), format="html")
    assert body(html).startswith('<p id="essay">ESSAY-START') and "ESSAY-END</p>" in html

    formats = line_of(snapshot, 'combobox "Archive format"')
    found = READ_WHOLE.search(formats)
    assert found and found.group(1) == ref(snapshot, "combobox", "Archive format"), formats
    listed = body(await agent.ok("browser_get_content", tab_id=tab, ref=found.group(1)))
    labels = await page.evaluate(
        "Array.from(document.querySelectorAll('#pick option'), o => o.label)"
    )
    assert listed.splitlines() == [f"[selected] {labels[0]}", *labels[1:]]


async def test_no_line_is_shortened_without_a_ref_to_read_it_whole(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    shortened = 0
    for page in ("agent/longnames", "agent/editors", "tools/form", "tools/article", "tools/huge"):
        tab, _ = await opened(agent, browser, pages.url(f"{page}.html"))
        snapshot = await agent.snapshot(tab)
        for line in snapshot.splitlines()[1:]:
            if "…" in line and "[truncated" not in line:
                shortened += 1
                assert READ_WHOLE.search(line), f"{page}: {line}"
        await agent.ok("browser_close_tab", tab_id=tab)
    assert shortened >= 3  # the essay, the archive formats, the long script


# --- lines that carry nothing (finding 5) -----------------------------------------------------


async def test_wrappers_that_only_listen_for_clicks_get_no_line_and_no_ref(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages.url("agent/longnames.html"))
    snapshot = await agent.snapshot(tab)
    lines = snapshot.splitlines()
    assert lines[1] == 'nav "Navigation"', snapshot  # not a "clickable [e1]" around everything
    assert "main" in lines and not any(line.startswith("main [") for line in lines)
    # A card drawn clickable keeps its ref, named by its text as a button would be (issue 24:
    # one line, not a bare `clickable` above its text).
    cards = [line for line in lines if line.startswith(' clickable "Open the copytree recipe" [')]
    assert len(cards) == 1 and "text: Open the copytree recipe" not in snapshot, snapshot
    card = ref(snapshot, "clickable", "Open the copytree recipe")
    await agent.ok("browser_click", tab_id=tab, ref=card)
    await wait_until(lambda: page.evaluate("document.title === 'Recipe'"), timeout=5)


async def test_a_code_editor_shows_its_input_and_panels_but_not_its_drawing(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    for name, label in CODE_EDITORS[:3]:
        tab, _ = await opened(agent, browser, pages.url(f"editors/{name}.html"), editor=True)
        snapshot = await agent.snapshot(tab)
        assert not re.search(r"^\s*(clickable|code|alert|status)\b", snapshot, re.M), snapshot
        texts = [line.strip() for line in snapshot.splitlines() if line.strip().startswith("text:")]
        assert texts in ([], ["text: Last query:"]), snapshot  # no lines of code, no gutter
        assert len(re.findall(r"\[e\d+\]", snapshot)) == 2, snapshot  # the editor and Run
        on_screen = await agent.snapshot(tab, scope="viewport")
        assert ref(on_screen, "textbox", label) == ref(snapshot, "textbox", label), on_screen
        await agent.ok("browser_close_tab", tab_id=tab)
    # What an editor opens inside itself is there to be used: CodeMirror 6's search panel.
    tab, page = await opened(agent, browser, pages.url("editors/codemirror6.html"), editor=True)
    await page.evaluate("window.view.focus()")
    for kind in ("keyDown", "keyUp"):
        await page.session.send(
            "Input.dispatchKeyEvent",
            {"type": kind, "modifiers": 2, "key": "f", "code": "KeyF", "windowsVirtualKeyCode": 70},
        )
    snapshot = await agent.snapshot(tab)
    for role, name in (("textbox", "SQL query"), ("textbox", "Find"), ("button", "next")):
        ref(snapshot, role, name)


# --- editors (finding 1, the snapshot half) ---------------------------------------------------


async def test_the_snapshot_shows_what_each_code_editor_holds(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    for name, label in CODE_EDITORS:
        tab, page = await opened(agent, browser, pages.url(f"editors/{name}.html"), editor=True)
        held = await page.evaluate("window.editorText()")
        editor = line_of(
            await agent.snapshot(tab), f"textbox {json.dumps(label, ensure_ascii=False)}"
        )
        value = re.search(r' value=("(?:[^"\\]|\\.)*")', editor)
        assert value, editor
        shown = json.loads(value.group(1))
        # ProseMirror's text comes from Chrome's tree: blocks apart by a blank line.
        assert shown.replace("\n\n", "\n") == held if name == "prosemirror" else shown == held
        await agent.ok("browser_close_tab", tab_id=tab)


async def test_the_snapshot_follows_an_editor_as_its_text_changes(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    for name, label, change in (
        ("codemirror5", "SQL query", "window.editor.setValue('select 2\\nfrom t')"),
        (
            "codemirror6",
            "SQL query",
            "window.view.dispatch({changes: {from: 0, to: window.view.state.doc.length, "
            "insert: 'select 2\\nfrom t'}})",
        ),
        ("monaco", "Script", "window.editor.setValue('select 2\\nfrom t')"),
    ):
        tab, page = await opened(agent, browser, pages.url(f"editors/{name}.html"), editor=True)
        await page.evaluate(change)
        editor = line_of(
            await agent.snapshot(tab), f"textbox {json.dumps(label, ensure_ascii=False)}"
        )
        assert 'value="select 2\\nfrom t"' in editor, (name, editor)
        await agent.ok("browser_close_tab", tab_id=tab)


async def test_editors_in_frames_show_their_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _ = await opened(agent, browser, pages.url("editors/frames.html"))
    # The frames load their editors after the page: wait until both say what they hold.
    snapshot = await wait_until(
        lambda: _when(agent.snapshot(tab), lambda s: s.count('textbox "SQL query"') == 2),
        timeout=20,
        message="both editors",
    )
    assert 'value="select * from facts where id > 1"' in snapshot
    assert 'value="select id, name\\nfrom facts\\nwhere id > 1"' in snapshot


async def _when(snapshot: Awaitable[str], test: Callable[[str], bool]) -> str | None:
    text = await snapshot
    return text if test(text) else None


async def test_an_editor_read_by_its_ref_gives_all_of_its_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    for name, label in CODE_EDITORS[:3]:
        tab, page = await opened(agent, browser, pages.url(f"editors/{name}.html"), editor=True)
        held = await page.evaluate("window.editorText()")
        editor = ref(await agent.snapshot(tab), "textbox", label)
        text = await agent.ok("browser_get_content", tab_id=tab, ref=editor, format="text")
        assert body(text) == held + "\n", name
        markdown = await agent.ok("browser_get_content", tab_id=tab, ref=editor)
        assert body(markdown) == f"```\n{held}\n```\n", name
        page_text = await agent.ok("browser_get_content", tab_id=tab)
        assert f"```\n{held}\n```" in page_text, name  # indentation and all
        await agent.ok("browser_close_tab", tab_id=tab)


async def test_fields_show_what_they_hold_now_and_a_long_one_reads_whole_by_ref(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages.url("agent/editors.html"))
    snapshot = await agent.snapshot(tab)
    query = await page.evaluate("document.getElementById('query').value")
    assert (
        f"textbox {json.dumps('SQL query')} [{ref(snapshot, 'textbox', 'SQL query')}] "
        f"value={json.dumps(query)} multiline" in snapshot
    )
    rich = line_of(snapshot, 'textbox "Comment"')
    assert rich.endswith(
        'value="Release notes\\n\\nFirst paragraph of the draft.\\n\\none item\\n\\nanother item'
        '\\n\\nLast line." richtext multiline'
    ), rich
    assert "Release notes" not in snapshot.replace(rich, "")  # its blocks are not listed again
    assert 'textbox "Plain note"' in snapshot and 'value="A plain note\\non two lines"' in snapshot

    script = line_of(snapshot, 'textbox "Script"')
    found = READ_WHOLE.search(script)
    assert found and "SCRIPT-END" not in script and len(script) < 2600, script
    whole = await agent.ok("browser_get_content", tab_id=tab, ref=found.group(1), format="text")
    assert body(whole) == await page.evaluate("document.getElementById('script').value") + "\n"

    await page.type_into("#query", "select 3")  # the person types over it
    again = await agent.snapshot(tab)
    assert 'textbox "SQL query"' in again and 'value="select 3" multiline' in again


async def test_reading_by_ref_refuses_bad_input_clearly_and_loses_nothing(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages.url("tools/form.html"))
    await page.evaluate("document.getElementById('password').value = 'hunter2-secret'")
    snapshot = await agent.snapshot(tab)
    assert "hunter2" not in snapshot
    password = ref(snapshot, "textbox", "Password")
    refused = await agent.fails("browser_get_content", tab_id=tab, ref=password)
    assert refused == f"{password} is a password field; Tabrelay does not read what it holds"
    # Nor as html, where a value the server filled in would show (review).
    await page.evaluate("document.getElementById('password').setAttribute('value', 'hunter2')")
    as_html = await agent.fails("browser_get_content", tab_id=tab, ref=password, format="html")
    assert as_html == refused
    both = await agent.fails("browser_get_content", tab_id=tab, ref=password, selector="form")
    assert "give 'ref' or 'selector' (or neither, for the whole page), not both" in both
    unknown = await agent.fails("browser_get_content", tab_id=tab, ref="e9999")
    assert (
        unknown
        == f"there is no ref 'e9999' for tab {tab}; take a snapshot (browser_snapshot) first"
    )
    invalid = await agent.fails("browser_get_content", tab_id=tab, selector="form[")
    assert invalid == "'form[' is not a valid CSS selector"
    # Nothing was lost: the page and its refs still read.
    notes = await agent.ok("browser_get_content", tab_id=tab, ref=ref(snapshot, "textbox", "Notes"))
    assert body(notes) == "old notes\n"
    assert await page.evaluate("document.getElementById('password').value") == "hunter2-secret"
    await agent.ok("browser_navigate", tab_id=tab, url=pages.url("tools/article.html"))
    stale = await agent.fails(
        "browser_get_content", tab_id=tab, ref=ref(snapshot, "textbox", "Notes")
    )
    assert "is from an earlier version of the page" in stale and "browser_snapshot" in stale
