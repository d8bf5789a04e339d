"""The snapshot's outline is computed in the page, in a world of Tabrelay's own
(``tools/page/page_outline.py``): what the page's scripts do in their world does not change it, the
page sees nothing of it, its refs name elements that world holds (stale once the element is
gone), and that world lets go of elements the page let go. Real Chromium, the real extension, a
real MCP client."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer
from tabrelay.errors import CommandFailed
from tabrelay.tools.acting import loading
from tabrelay.tools.groups import snapshot
from tabrelay.tools.page import page_outline

pytestmark = E2E

PAGE = "outline/lying.html"


async def opened(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, query: str
) -> tuple[int, Page]:
    url = pages.url(f"{PAGE}?{query}&t={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    return tab, await browser.attach_page(url)


def body(snapshot: str) -> str:
    """The outline without its header (the page's title and URL)."""
    return snapshot.split("\n", 1)[1]


async def held_count(page: Page) -> int:
    """How many elements Tabrelay's world in the page has ids for (its own global, read from
    that world: the page's cannot see it)."""
    tree = await page.session.send("Page.getFrameTree")
    made = await page.session.send(
        "Page.createIsolatedWorld",
        {"frameId": tree["frameTree"]["frame"]["id"], "worldName": page_outline.WORLD},
    )
    answer = await page.session.send(
        "Runtime.evaluate",
        {
            "expression": "globalThis.__tabrelayHeld.els.size",
            "contextId": made["executionContextId"],
            "returnByValue": True,
        },
    )
    return int(answer["result"]["value"])


async def test_a_page_that_lies_in_its_own_world_gets_the_outline_it_shows(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """getAttribute, getComputedStyle, childNodes, a field's value, JSON, WeakMap, Map and
    Array.prototype.push all lie or throw in the page's world: the outline is the same as the
    honest page's, and the secret is still hidden by its kind."""
    honest_tab, _ = await opened(agent, browser, pages, "lie=0")
    lying_tab, _ = await opened(agent, browser, pages, "lie=1")
    honest = body(await agent.snapshot(honest_tab))
    lying = body(await agent.snapshot(lying_tab))
    refs = re.compile(r"\[e\d+\]")
    assert refs.sub("[ref]", lying) == refs.sub("[ref]", honest)
    assert 'heading[1] "Contact us"' in lying
    assert re.search(r'textbox "Email" \[e\d+\] value="ada@example.org-PLAIN"', lying), lying
    assert re.search(
        r'textbox "Code" \[e\d+\] \(a one-time code field: its value is not shown\)', lying
    )
    assert re.search(r'button "Attach a file" \[e\d+\]', lying), lying
    assert re.search(r'checkbox "Send me a copy" \[e\d+\] checked', lying), lying
    assert re.search(r'button "Send" \[e\d+\]', lying), lying
    assert "SECRET" not in lying


async def test_the_page_sees_nothing_of_a_snapshot(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages, "lie=0")
    await page.evaluate(
        "window.seen = [];"
        "new MutationObserver((records) => window.seen.push(...records.map((r) => r.type)))"
        ".observe(document, {subtree: true, childList: true, attributes: true,"
        " characterData: true})"
    )
    await agent.snapshot(tab)
    await agent.ok("browser_find", tab_id=tab, role="button")
    await asyncio.sleep(0.1)  # mutation records are delivered in a microtask after the change
    assert await page.evaluate("window.seen") == []
    assert await page.evaluate("typeof globalThis.__tabrelayHeld") == "undefined"
    assert await held_count(page) > 0  # it is there, in Tabrelay's world


async def test_a_ref_keeps_its_element_and_is_stale_once_the_page_removes_it(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page = await opened(agent, browser, pages, "lie=0")
    first = await agent.snapshot(tab)
    send = ref(first, "button", "Send")
    assert ref(await agent.snapshot(tab), "button", "Send") == send  # the same element
    await page.evaluate("document.getElementById('send').remove()")
    stale = await agent.fails("browser_click", tab_id=tab, ref=send)
    assert "is from an earlier version of the page" in stale and "browser_snapshot" in stale
    # The same button made again is another element: a new ref, which works.
    await page.evaluate(
        "document.querySelector('form').insertAdjacentHTML('beforeend',"
        ' \'<button type="button" id="send" onclick="window.sent = true">Send</button>\')'
    )
    again = ref(await agent.snapshot(tab), "button", "Send")
    assert again != send
    await agent.ok("browser_click", tab_id=tab, ref=again)
    assert await page.evaluate("window.sent") is True


async def test_the_world_lets_go_of_elements_the_page_let_go(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A page that draws 500 new buttons before each of 30 snapshots (a list re-rendered):
    the world holds ids only while their elements live, not one per element ever seen."""
    tab, page = await opened(agent, browser, pages, "lie=0")
    draw = (
        "document.getElementById('list').innerHTML = Array.from({length: 500},"
        " (_, i) => `<li><button>Item ${i}</button></li>`).join('')"
    )
    for _ in range(30):
        await page.evaluate(draw)
        await agent.snapshot(tab)
        await page.session.send("HeapProfiler.collectGarbage")
    live = await page.evaluate("document.getElementsByTagName('*').length")
    assert await held_count(page) <= 2 * live + page_outline.HELD_SLACK


async def test_four_hundred_snapshots_in_a_row_keep_the_page_answering(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    """Chrome stopped answering after about 200 snapshots when click listeners were asked of
    the world's document object (each listener wrapped into the world; listeners are no longer
    asked for at all); each snapshot here is a tool call's own, its objects released after
    it."""
    tab, page = await opened(agent, browser, pages, "lie=0")
    for _ in range(400):
        ctx = await app.tool_context(tab)
        try:
            outline = await snapshot.take(ctx, viewport=False, depth=None)
        finally:
            await ctx.release_objects()
    assert ref(outline.text, "button", "Send")
    assert await page.evaluate("1 + 1") == 2


# --- a page still drawing itself (issue 24) ---------------------------------------------------


async def test_a_snapshot_waits_for_a_page_that_draws_itself_after_loading(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A splash spins for 0.8 s after the page has loaded, then the app draws itself: the
    snapshot shows the app, not an empty page."""
    tab = await agent.open(pages.url(f"outline/building.html?mode=late&t={uuid.uuid4().hex[:8]}"))
    shown = await agent.snapshot(tab)
    assert 'heading[1] "Ready"' in shown and re.search(r'button "Start" \[e\d+\]', shown), shown
    assert snapshot.STILL_RENDERING not in shown and snapshot.NOTHING_TO_READ not in shown
    await agent.ok("browser_close_tab", tab_id=tab)


async def test_a_page_that_keeps_drawing_nothing_is_said_to_be_still_drawing(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A splash that never ends: after RENDER_WAIT the snapshot says the page is still drawing
    itself (never one bare line); a blank page that does not change says it shows nothing, at
    once."""
    spinning = await agent.open(
        pages.url(f"outline/building.html?mode=spinner&t={uuid.uuid4().hex[:8]}")
    )
    started = time.monotonic()
    said = (await agent.snapshot(spinning)).splitlines()
    assert said[0] == snapshot.STILL_RENDERING and said[1].startswith("page 'Building'"), said
    assert len(said) == 2, said
    assert time.monotonic() - started >= snapshot.RENDER_WAIT
    blank = await agent.open(
        pages.url(f"outline/building.html?mode=blank&t={uuid.uuid4().hex[:8]}")
    )
    started = time.monotonic()
    said = (await agent.snapshot(blank)).splitlines()
    assert said[0] == snapshot.NOTHING_TO_READ and len(said) == 2, said
    assert time.monotonic() - started < snapshot.RENDER_WAIT
    for tab in (spinning, blank):
        await agent.ok("browser_close_tab", tab_id=tab)


async def test_a_snapshot_cancelled_while_it_waits_for_the_page_to_draw_leaves_nothing(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """Cancelled at the watch for the page's changes, while it waits and right after its
    answer: the call ends at once, no task or pending command is left, and the next snapshot
    answers."""
    tab = await agent.open(
        pages.url(f"outline/building.html?mode=spinner&t={uuid.uuid4().hex[:8]}")
    )
    for after_answer in (False, True):
        await cancelled_while_drawing(app, tab, after_answer=after_answer)
    assert snapshot.STILL_RENDERING in await agent.snapshot(tab)
    await agent.ok("browser_close_tab", tab_id=tab)


async def cancelled_while_drawing(app: AppUnderTest, tab: int, *, after_answer: bool) -> None:
    relay = await app.browser()
    send = relay.send_command
    ctx = await app.tool_context(tab)
    call: asyncio.Future[object] | None = None
    hit = asyncio.Event()

    async def watched(method: str, params: object = None, **kwargs: object) -> object:
        inner = params.get("params", {}) if isinstance(params, dict) else {}
        watching = page_outline.CHANGES in str(inner.get("expression", ""))
        if watching and not after_answer and not hit.is_set():
            hit.set()
            assert call is not None
            call.cancel()
        answer = await send(method, params, **kwargs)  # type: ignore[arg-type]
        if watching and not hit.is_set():
            hit.set()
            assert call is not None
            call.cancel()
        return answer

    relay.send_command = watched  # type: ignore[method-assign]
    before = set(asyncio.all_tasks())
    try:
        call = asyncio.ensure_future(snapshot.drawn(ctx, viewport=False, depth=None))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(call, timeout=10)
    finally:
        relay.send_command = send  # type: ignore[method-assign]
        await ctx.release_objects()
    assert hit.is_set() and call.cancelled(), after_answer
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert left == [], left


async def test_a_page_caught_between_two_documents_is_read_again(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An app that reloads as it starts (JupyterLab's `lab?reset`) can replace its document
    between the snapshot's look at the frames and its read of the page: Chrome then answers
    that the read's context is gone. The snapshot reads the next document instead, and says
    the page cannot be read only once the wait for it has run out."""
    tab = await agent.open(pages.url(f"outline/building.html?mode=late&t={uuid.uuid4().hex[:8]}"))
    read = page_outline.read
    failures = [1]

    async def between(*args: object, **kwargs: object) -> page_outline.PageOutline:
        if failures[0] > 0:
            failures[0] -= 1
            raise CommandFailed("Cannot find context with specified id")
        return await read(*args, **kwargs)  # type: ignore[arg-type]

    async def gone(*args: object, **kwargs: object) -> None:
        return None  # the document read last is gone with its world

    monkeypatch.setattr(page_outline, "read", between)
    monkeypatch.setattr(page_outline, "read_again", gone)
    assert 'heading[1] "Ready"' in await agent.snapshot(tab)
    failures[0] = 10**6
    monkeypatch.setattr(snapshot, "RENDER_WAIT", 0.3)
    failed = await agent.fails("browser_snapshot", tab_id=tab)
    assert failed.startswith("the page cannot be read yet (Cannot find context"), failed
    await agent.ok("browser_close_tab", tab_id=tab)


async def test_a_wait_for_the_next_document_that_runs_out_while_chrome_answers_reads_the_page(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    """The wait for a document to be parsed gets what is left of the snapshot's wait; when that
    runs out before Chrome answers its question (a few microseconds left), the wait is over and
    the snapshot says the page cannot be read, not that Chrome did not answer. The whole wait
    never runs over what it was given by more than a round trip."""
    tab = await agent.open(pages.url(f"outline/building.html?mode=late&t={uuid.uuid4().hex[:8]}"))
    ctx = await app.tool_context(tab)
    for left in (1e-6, 0.05):
        started = time.monotonic()
        await loading.until_parsed(ctx, timeout=left)
        assert time.monotonic() - started < left + 1.0
    await agent.ok("browser_close_tab", tab_id=tab)
