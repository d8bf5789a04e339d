"""The reading tools through a real MCP client, real Chromium and the real extension.

Each test opens a local test page (tests/e2e/pages/tools) in a tab, calls the tools as an agent
would, and checks the answer against what the page really holds.
"""

from __future__ import annotations

import base64
import io
import json
import re
import uuid
from collections.abc import Awaitable
from pathlib import Path

from PIL import Image

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import ExtensionBrowser, PageServer, wait_until
from tabrelay.tools.results import plain

pytestmark = E2E

SIZES = Path(__file__).resolve().parents[1] / "bench" / "results" / "snapshot_sizes.json"


async def test_snapshot_shows_roles_names_states_and_refs(agent: Agent, pages: PageServer) -> None:
    tab = await agent.open(pages.url("tools/form.html"))
    snapshot = await agent.snapshot(tab)
    assert snapshot.startswith(f"page 'Order form' {pages.url('tools/form.html')}")
    for role, name in [
        ("textbox", "Name *"),
        ("textbox", "Email"),
        ("textbox", "Password"),
        ("textbox", "Notes"),
        ("combobox", "Size"),
        ("listbox", "Toppings"),
        ("checkbox", "Gift wrap"),
        ("radio", "Standard"),
        ("radio", "Express"),
        ("textbox", "Message"),
        ("button", "Place order"),
        ("button", "Not yet"),
        ("link", "Long page"),
    ]:
        ref(snapshot, role, name)
    assert 'heading[1] "Place an order"' in snapshot
    assert re.search(
        r'combobox "Size" \[e\d+\] value="Medium" options: Small \| Medium \| Large', snapshot
    )
    assert re.search(r'radio "Standard" \[e\d+\] checked', snapshot)
    assert re.search(r'button "Not yet" \[e\d+\] disabled', snapshot)
    assert re.search(r'textbox "Name \*" \[e\d+\] required', snapshot)
    again = await agent.snapshot(tab)
    assert ref(again, "button", "Place order") == ref(snapshot, "button", "Place order")


async def test_snapshot_includes_shadow_dom_and_same_origin_frames(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/widgets.html"))
    snapshot = await agent.snapshot(tab)
    ref(snapshot, "button", "Shadow button")
    assert 'iframe "Inner frame"' in snapshot
    frame_line = snapshot.index('iframe "Inner frame"')
    assert snapshot.index('button "Frame button"') > frame_line
    assert "text: Inside the frame" in snapshot


async def test_viewport_scope_leaves_out_what_is_below_the_fold(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/long.html"))
    full = await agent.snapshot(tab)
    visible = await agent.snapshot(tab, scope="viewport")
    assert "Bottom button" in full
    assert "Bottom button" not in visible
    assert 'heading[1] "A long page"' in visible


async def test_viewport_scope_keeps_a_frame_on_screen_whole(
    agent: Agent, pages: PageServer
) -> None:
    """A frame's elements lie in its own coordinates: the frame on screen is kept whole."""
    tab = await agent.open(pages.url("tools/targets.html"))
    visible = await agent.snapshot(tab, scope="viewport")
    assert 'iframe "Inner frame"' in visible, visible
    assert "text: Inside the frame" in visible and 'button "Frame button"' in visible, visible


async def test_depth_limit_cuts_nesting_and_says_so(agent: Agent, pages: PageServer) -> None:
    tab = await agent.open(pages.url("tools/form.html"))
    shallow = await agent.snapshot(tab, depth=1)
    assert "nested items below depth 1 left out" in shallow
    assert "Place order" not in shallow


async def test_a_huge_page_is_cut_with_a_marker_and_continues_from_the_offset(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/huge.html"))
    first = await agent.snapshot(tab)
    assert len(first.encode()) <= 25_000 * 4
    marker = re.search(
        r"\[truncated: showed ([\d,]+) of ([\d,]+) bytes; call again with offset=(\d+)", first
    )
    assert marker, first[-400:]
    second = await agent.snapshot(tab, offset=int(marker.group(3)))
    assert 'heading[2] "Section 0"' in first
    assert 'heading[2] "Section 0"' not in second
    assert "Section 1499" in second or "[truncated" in second


async def test_find_returns_matching_elements_with_refs(agent: Agent, pages: PageServer) -> None:
    tab = await agent.open(pages.url("tools/widgets.html"))
    found = await agent.ok("browser_find", tab_id=tab, text="shadow", role="button")
    assert re.search(r'button "Shadow button" \[e\d+\]', found)
    none = await agent.ok("browser_find", tab_id=tab, text="no such thing")
    assert none == "Nothing on the page matches 'no such thing'."
    assert "give 'text', 'role', or both" in await agent.fails("browser_find", tab_id=tab)


async def test_markdown_content_keeps_the_article_and_drops_boilerplate(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/article.html"))
    markdown = await agent.ok("browser_get_content", tab_id=tab)
    assert "# Tabrelay ships" in markdown
    assert "**first release**" in markdown
    assert "[your browser](https://example.com/docs)" in markdown
    assert "- Snapshots with refs" in markdown
    assert "| snapshot | read |" in markdown
    for boilerplate in ("cookies", "Accept all", "Trending", "BUY NOW", "Privacy", "News"):
        assert boilerplate not in markdown, boilerplate
    text = await agent.ok("browser_get_content", tab_id=tab, format="text")
    assert "Tabrelay ships\n" in text and "**" not in text and "cookies" not in text
    html = await agent.ok("browser_get_content", tab_id=tab, format="html")
    assert '<div class="cookie-banner"' in html  # raw markup, as it is
    part = await agent.ok("browser_get_content", tab_id=tab, selector="table")
    assert "| Tool | Kind |" in part and "Last paragraph" not in part
    missing = await agent.fails("browser_get_content", tab_id=tab, selector="#nope")
    assert missing == "nothing matches the selector '#nope'"


async def test_a_page_nested_thousands_deep_is_read_as_markdown_and_text(
    agent: Agent, pages: PageServer
) -> None:
    """2,000 levels of elements by script: the markdown converter recursed through every one
    and failed ("internal error in Tabrelay (RecursionError)"); below 128 levels only the text
    is kept, a block on its own line, in order, what is not seen left out."""
    tab = await agent.open(pages.url("outline/deep.html?n=2000"))
    for form in ("markdown", "text"):
        content = await agent.ok("browser_get_content", tab_id=tab, format=form)
        said = ["Level 500", "Level 1000", "Before the deep end", "Level 2000\ndeep text",
                "After the deep part"]  # fmt: skip
        at = [content.find(text) for text in said]
        assert -1 not in at and at == sorted(at), content
        assert "Unseen deep text" not in content and "1 transparent" in content, content


async def test_a_form_whose_controls_clobber_its_properties_is_read_and_used_whole(
    agent: Agent, pages: PageServer
) -> None:
    """A form with controls named like what a script reads on it (childNodes, parentElement,
    inert, tagName, …): before, the snapshot failed ("flatChildren is not a function") or hid
    the form; now every reading tool reads it as a person sees it, and its button works."""
    tab = await agent.open(pages.url("injection/clobbered.html"))
    snapshot = plain(await agent.snapshot(tab))
    for line in (
        'form "Account"',
        "text: Step 1 of 2",
        'textbox "Email" [',
        "text: We never share your address.",
        'button "Create account" [',
        'textbox "Your email" [',
        "text: After the form.",
    ):
        assert line in snapshot, f"{line!r} not in\n{snapshot}"
    for format in ("markdown", "text"):
        content = plain(await agent.ok("browser_get_content", tab_id=tab, format=format))
        assert "We never share your address." in content and "After the form." in content
    form = plain(
        await agent.ok("browser_get_content", tab_id=tab, selector="#signup", format="html")
    )
    assert '<form id="signup"' in form and "We never share" in form, form
    assert "We never share" in plain(await agent.ok("browser_find", tab_id=tab, text="share"))
    await agent.ok("browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Email"), text="a@b.c")
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Create account"))
    assert "Sent" in plain(await agent.snapshot(tab))


async def test_long_content_ends_with_a_marker_and_an_offset_to_continue(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/huge.html"))
    first = await agent.ok("browser_get_content", tab_id=tab, format="text")
    offset = int(re.search(r"call again with offset=(\d+)", first).group(1))  # type: ignore[union-attr]
    rest = await agent.ok("browser_get_content", tab_id=tab, format="text", offset=offset)
    last_before = first.split("[truncated")[0].strip().splitlines()[-1]
    assert last_before not in rest.split("\n", 3)[3][:200]


async def test_screenshots_of_viewport_full_page_and_element(
    agent: Agent, pages: PageServer, browser: ExtensionBrowser
) -> None:
    # Opened in the back, then brought to the front: Chrome's "started debugging" bar slides
    # into a tab that opens in front and resizes the page in steps after the tool returns, but
    # a tab brought to the front gets the bar at once (see test_relay_methods.bring_to_front).
    url = pages.url(f"tools/long.html?{uuid.uuid4().hex[:12]}")
    opened = await agent.call("browser_new_tab", url=url, active=False)
    assert not opened.is_error, opened.content[0].text
    tab = int(opened.structured_content["tab_id"])
    page = await browser.attach_page(url)
    try:
        await agent.ok("browser_activate_tab", tab_id=tab)
        size = f"chrome.tabs.get({tab}).then((t) => [t.width, t.height])"
        await wait_until(
            lambda: _same(page.evaluate("[innerWidth, innerHeight]"), browser.in_worker(size)),
            timeout=5,
            message="the page has the size Chrome gives the tab",
        )
        css = (await page.session.send("Page.getLayoutMetrics"))["cssVisualViewport"]
        dpr = await page.evaluate("devicePixelRatio")
    finally:
        await page.session.detach()
    viewport = await agent.call("browser_screenshot", tab_id=tab)
    full = await agent.call("browser_screenshot", tab_id=tab, full_page=True, format="png")
    snapshot = await agent.snapshot(tab)
    element = await agent.call(
        "browser_screenshot",
        tab_id=tab,
        ref=ref(snapshot, "button", "Bottom button"),
        format="webp",
    )
    assert "Made smaller to fit the response budget" in full.content[0].text  # 1280×6100 PNG
    shots = {}
    for name, result in (("viewport", viewport), ("full", full), ("element", element)):
        assert not result.is_error
        image = result.content[1]
        decoded = Image.open(io.BytesIO(base64.b64decode(image.data)))
        reported = result.structured_content
        assert (reported["width"], reported["height"]) == decoded.size, name
        shots[name] = (image.mime_type, decoded.size)
    scale = min(1.0, 1280 / (css["clientWidth"] * dpr))  # the default max width
    expected = (
        round(css["clientWidth"] * dpr * scale),
        round(css["clientHeight"] * dpr * scale),
    )
    assert shots["viewport"] == ("image/jpeg", expected)
    assert shots["full"][1][1] > 4000  # the whole page, however it had to be encoded
    assert shots["element"][0] == "image/webp" and shots["element"][1][1] < 100
    small = await agent.call("browser_screenshot", tab_id=tab, max_width=400)
    assert Image.open(io.BytesIO(base64.b64decode(small.content[1].data))).size[0] == 400


async def _same(first: Awaitable[object], second: Awaitable[object]) -> bool:
    return await first == await second


async def test_console_messages_and_network_requests_come_from_the_tab(
    agent: Agent, pages: PageServer, browser: ExtensionBrowser
) -> None:
    tab = await agent.open(pages.url("tools/activity.html"))
    snapshot = await agent.snapshot(tab)
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Run"))
    await agent.ok("browser_wait_for", tab_id=tab, text="done")
    console = await agent.ok("browser_console_messages", tab_id=tab)
    assert "[error] about to fetch" in console
    assert "[error] Uncaught Error: late failure" in console
    errors = await agent.ok("browser_console_messages", tab_id=tab, level="error")
    assert "careful" not in errors
    network = await agent.ok("browser_network_requests", tab_id=tab)
    assert re.search(r"GET 200 Fetch .*tools/frame\.html\?from=activity", network), network
    failed = await agent.ok("browser_network_requests", tab_id=tab, failed_only=True)
    assert "404" in failed and "missing.json" in failed and "frame.html" not in failed


async def test_snapshot_sizes_are_recorded_for_the_benchmarks(
    agent: Agent, pages: PageServer
) -> None:
    sizes = {}
    for page in ("form", "widgets", "article", "long", "dialogs", "activity", "slow"):
        tab = await agent.open(pages.url(f"tools/{page}.html"))
        sizes[page] = len((await agent.snapshot(tab)).encode())
        await agent.ok("browser_close_tab", tab_id=tab)
    SIZES.parent.mkdir(parents=True, exist_ok=True)
    SIZES.write_text(json.dumps(sizes, indent=2))
    assert all(0 < size < 5000 for size in sizes.values()), sizes
