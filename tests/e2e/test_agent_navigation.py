"""Actions that move the page on wait for where they lead, and say where the tab is now.

A submit button, a link, Enter in a search field, a posted form, a slow result page, a script
that asks the server first, a select that navigates, a same-document route, and links that open
tabs (tests/e2e/pages/agent/submit.html). After each, the very next snapshot must be the new
page — not the old title with an empty body.
"""

from __future__ import annotations

import re
import time
import uuid

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import PageServer
from support.mcp import text_of

pytestmark = E2E


async def catalogue(agent: Agent, pages: PageServer) -> tuple[int, str, str]:
    """A new tab on the catalogue page: its id, its URL and a snapshot."""
    url = pages.url("agent/submit.html") + f"?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    return tab, url, await agent.snapshot(tab)


async def moved_to_results(agent: Agent, tab: int, said: str, query: str) -> None:
    """The answer says the page changed, and the next snapshot is the result page."""
    assert f'The page changed: the tab now shows "Results for {query}" at http' in said, said
    assert "Take a new snapshot" in said
    snapshot = await agent.snapshot(tab)
    assert f"Results for {query}" in snapshot.splitlines()[0], snapshot
    assert 'heading[1] "Results"' in snapshot
    assert "Lovelace, Notes on the Engine" in snapshot


async def test_a_click_on_a_submit_input_waits_for_the_result_page(
    agent: Agent, pages: PageServer
) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    query = ref(snapshot, "searchbox", "Query")
    await agent.ok("browser_type", tab_id=tab, ref=query, text="engines")
    result = await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Search"))
    assert not result.is_error
    said = text_of(result)
    assert said.startswith("Clicked ")
    await moved_to_results(agent, tab, said, "engines")
    data = result.structured_content
    assert data["navigated"] is True and data["title"] == "Results for engines"
    assert data["url"].endswith("/agent/results.html?q=engines")


async def test_a_slow_result_page_is_waited_for(agent: Agent, pages: PageServer) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    started = time.monotonic()
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Slow search"))
    assert time.monotonic() - started >= 1.5  # the page server held the answer that long
    await moved_to_results(agent, tab, said, "slow")


async def test_a_link_and_a_posted_form_are_followed(agent: Agent, pages: PageServer) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "First result"))
    await moved_to_results(agent, tab, said, "link")
    tab, _, snapshot = await catalogue(agent, pages)
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Post it"))
    await moved_to_results(agent, tab, said, "posted")


async def test_enter_in_a_search_field_is_followed(agent: Agent, pages: PageServer) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    query = ref(snapshot, "searchbox", "Query")
    said = await agent.ok("browser_type", tab_id=tab, ref=query, text="looms", submit=True)
    assert said.startswith("Typed 5 characters into")
    await moved_to_results(agent, tab, said, "looms")
    tab, _, snapshot = await catalogue(agent, pages)
    query = ref(snapshot, "searchbox", "Query")
    await agent.ok("browser_type", tab_id=tab, ref=query, text="gears")
    said = await agent.ok("browser_press_key", tab_id=tab, ref=query, key="Enter")
    await moved_to_results(agent, tab, said, "gears")


async def test_a_script_that_asks_the_server_first_is_followed(
    agent: Agent, pages: PageServer
) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    said = await agent.ok(
        "browser_click", tab_id=tab, ref=ref(snapshot, "button", "Search by script")
    )
    await moved_to_results(agent, tab, said, "scripted")


async def test_a_select_that_navigates_is_followed(agent: Agent, pages: PageServer) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    said = await agent.ok(
        "browser_select_option",
        tab_id=tab,
        ref=ref(snapshot, "combobox", "Sort"),
        values=["Newest"],
    )
    await moved_to_results(agent, tab, said, "sorted-new")


async def test_a_same_document_route_says_where_the_page_moved(
    agent: Agent, pages: PageServer
) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    result = await agent.call(
        "browser_click", tab_id=tab, ref=ref(snapshot, "button", "Show details")
    )
    said = text_of(result)
    assert '"Details" at http' in said and "?view=details without loading a new one" in said
    assert result.structured_content["navigated"] is True
    assert "Shown by the router." in await agent.snapshot(tab)


async def test_links_that_open_tabs_name_the_new_tab(agent: Agent, pages: PageServer) -> None:
    for name, query in (("Open in a new tab", "blank"), ("Pop up", "popup")):
        tab, _, snapshot = await catalogue(agent, pages)
        role = "link" if query == "blank" else "button"
        result = await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, role, name))
        said = text_of(result)
        opened = result.structured_content["new_tabs"]
        assert len(opened) == 1 and opened[0]["url"].endswith(f"results.html?q={query}"), said
        new = opened[0]["tab_id"]
        assert f"It opened a new tab {new} (" in said and f"pass tab_id={new}" in said
        assert "The page changed" not in said
        snapshot = await agent.snapshot(new)
        assert "Lovelace, Notes on the Engine" in snapshot


async def test_an_action_that_changes_nothing_answers_at_once_and_says_nothing_more(
    agent: Agent, pages: PageServer
) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    started = time.monotonic()
    result = await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Stay here"))
    elapsed = time.monotonic() - started
    said = text_of(result)
    assert said.startswith("Clicked ") and said.endswith("(button#stay).")
    assert result.structured_content["navigated"] is False
    # Far below the wait for a page (10 s): nothing was waited for.
    assert elapsed < 5, f"a click that changes nothing took {elapsed:.2f} s"
    assert "Stayed" in await agent.snapshot(tab)


async def test_answering_a_dialog_that_leads_on_waits_for_the_new_page(
    agent: Agent, pages: PageServer
) -> None:
    tab, _, snapshot = await catalogue(agent, pages)
    result = await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Leave"))
    assert "The page opened a confirm dialog: 'Leave the catalogue?'" in text_of(result)
    structured = dict(result.structured_content)
    assert structured.pop("page_text")["fields"] == ["dialog"]  # the message is the page's
    assert structured == {
        "navigated": False,
        "dialog": {"kind": "confirm", "message": "Leave the catalogue?"},
    }
    said = await agent.ok("browser_handle_dialog", tab_id=tab, accept=True)
    assert said.startswith("Answered the confirm 'Leave the catalogue?' with OK.")
    await moved_to_results(agent, tab, said, "confirmed")


async def test_a_snapshot_during_a_load_waits_for_it_or_says_it_is_loading(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("agent/results.html"))
    # Parsing stops for 1.5 s at a script: the snapshot waits and shows the whole page.
    url = pages.url(f"agent/loading.html?wait=1500&t={uuid.uuid4().hex[:8]}")
    await agent.ok("browser_navigate", tab_id=tab, url=url, wait_until="none")
    snapshot = await agent.snapshot(tab)
    assert "After the slow script" in snapshot and "still loading" not in snapshot
    # For longer than a snapshot waits: it says the page is still loading, and shows what arrived.
    url = pages.url(f"agent/loading.html?wait=6000&t={uuid.uuid4().hex[:8]}")
    await agent.ok("browser_navigate", tab_id=tab, url=url, wait_until="none")
    snapshot = await agent.snapshot(tab)
    note, page = snapshot.splitlines()[:2]  # Tabrelay's note, then the page's words
    assert note.startswith("(The page is still loading:") and page.startswith("page 'Arriving'")
    assert "Arriving soon" in snapshot and "After the slow script" not in snapshot
    await agent.ok("browser_wait_for", tab_id=tab, load_state="load")
    assert "After the slow script" in await agent.snapshot(tab)


async def test_a_form_in_a_frame_is_followed_and_said(agent: Agent, pages: PageServer) -> None:
    tab = await agent.open(pages.url(f"editors/frames.html?tab={uuid.uuid4().hex[:8]}"))
    await agent.ok("browser_wait_for", tab_id=tab, load_state="load")  # its frames too
    snapshot = await agent.snapshot(tab)
    editor = re.search(r"^\s*textbox\b[^\n]*?\[(e\d+)\]", snapshot, re.M)
    assert editor, snapshot
    await agent.ok("browser_type", tab_id=tab, ref=editor.group(1), text="select 7")
    result = await agent.call("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Run SQL"))
    said = text_of(result)
    assert "A frame in the page now shows http" in said and "codemirror5.html?sql=select+7" in said
    assert result.structured_content["navigated"] is False
    snapshot = await agent.snapshot(tab)
    assert "Last query: select 7" in snapshot or "select 7" in snapshot.split("Last query")[1]
