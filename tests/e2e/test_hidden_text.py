"""Text a sighted person cannot see is not page text (issue 25, finding 4): on a page hiding a
sentence in each of 34 ways an attacker would (CSS of every kind, covered, the colour of its
background, cut off by its box, …), none reaches the agent through ``browser_snapshot``,
``browser_find`` or ``browser_get_content``; the snapshot says how much it left out and why; what
a person sees is all there; an icon button keeps its accessible name; and a button whose
accessible name contradicts what it shows is shown by its visible label, flagged, without the
hidden words. Real Chromium, the real extension, a real MCP client."""

from __future__ import annotations

import re

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import ExtensionBrowser, PageServer
from e2e.sight import unseen_nodes
from tabrelay.tools.results import plain

pytestmark = E2E

PAGE = "hidden/techniques.html"
TECHNIQUES = 34  # of hiding a text (and a picture's alt text pushed off the page)
# (The third sets itself visible inside an invisible paragraph: a person sees it.)
SEEN = (
    "Your order #1042",
    "Shipped on 12 March. It arrives Friday.",
    "Signed for by the neighbour.",
    "Carrier: Parcel Co.",
)


async def test_the_snapshot_leaves_out_every_kind_of_hidden_text(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url(PAGE))
    snapshot = plain(await agent.snapshot(tab))
    assert _hidden_in(snapshot) == [], snapshot
    for text in SEEN:
        assert text in snapshot
    # How much was left out, and why, is said: not silently dropped.
    said = re.search(r"left out (\d+) texts? a sighted person cannot see", snapshot)
    assert said is not None, snapshot
    # The hidden attribute, display:none, visibility:hidden and a template draw no text at all.
    assert int(said.group(1)) == TECHNIQUES - 4, snapshot
    # The contradicting name: the button is shown as it looks, flagged, its hidden words not said.
    save = next(line for line in snapshot.splitlines() if "button" in line and "Save" in line)
    assert 'button "Save"' in save and "accessible name differs" in save, save
    # An icon button is still announced by its label, a field by its own; an icon font's
    # ligature ("more_vert") is drawn as an icon, not read as what the button says.
    assert 'button "Close"' in snapshot
    assert 'button "More options"' in snapshot and "more_vert" not in snapshot, snapshot
    assert 'textbox "Note for the courier"' in snapshot
    assert 'link "Track the parcel"' in snapshot
    assert "differs" not in snapshot.replace(save, ""), snapshot


async def test_find_and_get_content_leave_it_out_too(agent: Agent, pages: PageServer) -> None:
    tab = await agent.open(pages.url(PAGE))
    found = plain(await agent.ok("browser_find", tab_id=tab, text="instructions"))
    assert _hidden_in(found) == [], found
    assert _hidden_in(plain(await agent.ok("browser_find", tab_id=tab, text="HIDDEN"))) == []
    for format in ("markdown", "text"):
        content = plain(await agent.ok("browser_get_content", tab_id=tab, format=format))
        assert _hidden_in(content) == [], content
        for text in SEEN:
            assert text in content, content
        # Content writes a picture's alt text where the picture is: its alt text counts too.
        left_out = f"left out {TECHNIQUES - 4 + 1} texts a sighted person cannot see"
        assert left_out in content, content[-400:]


async def test_hidden_text_shown_again_is_read_again(agent: Agent, pages: PageServer) -> None:
    """Leaving text out is about sight, not a list: the same text, once drawn, is read."""
    tab = await agent.open(pages.url(PAGE))
    await agent.ok(
        "browser_evaluate",
        tab_id=tab,
        expression="document.querySelector('.opacity').style.opacity = '1'",
    )
    snapshot = plain(await agent.snapshot(tab))
    assert _hidden_in(snapshot) == ["HIDDEN-14"], snapshot


def _hidden_in(text: str) -> list[str]:
    return sorted(set(re.findall(r"HIDDEN-\d\d", text)))


async def test_text_drawn_as_dots_and_hidden_text_in_an_editor_are_left_out(
    agent: Agent, pages: PageServer
) -> None:
    """Text drawn as dots or squares (-webkit-text-security: a PIN pad made of a contenteditable)
    shows a person only the marks; an editor's value was its innerText, hidden parts and all; a
    field's value was read however it was drawn (transparent, white on white, too small, in a
    field out of sight). None reaches the agent; the fields keep their lines, said so; an editor
    and a field with nothing hidden keep what they hold."""
    tab = await agent.open(pages.url("hidden/editors.html"))
    snapshot = await agent.snapshot(tab)
    readings = [
        snapshot,
        await agent.ok("browser_find", tab_id=tab, text="HIDDEN"),
        await agent.ok("browser_find", tab_id=tab, text="SECRET"),
        *[
            await agent.ok("browser_get_content", tab_id=tab, format=f)
            for f in ("markdown", "text")
        ],
    ]
    for reading in readings:
        assert not re.search(r"HIDDEN-[DF]|SECRET-PIN", reading), reading
    assert re.search(r'textbox "Reply" \[e\d+\] value="Dear Ann,\\nSee you on Friday\."', snapshot)
    assert 'value="Nothing hidden here.\\nSecond line."' in snapshot, snapshot
    for field in ("Field B", "Field C", "Field D", "Field E", "Field F"):
        assert f'"{field}" [' in snapshot, snapshot  # still there to act on, said so:
    assert snapshot.count("(what it holds is not seen: left out)") == 5, snapshot
    assert re.search(r'textbox "Note A" \[e\d+\] multiline \(not shown on screen\)', snapshot)
    assert 'textbox "Shown field" [' in snapshot and 'value="A value a person sees"' in snapshot
    assert re.search(r"left out 9 texts .*2 drawn as dots", snapshot), snapshot


async def test_chrome_measures_the_same_texts_unseen(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The tests' own oracle (``e2e.sight``, from Chrome's layout) agrees on the page: what it
    can judge of the techniques is unseen, and nothing a person sees is."""
    url = pages.url(PAGE)
    await agent.open(url)
    page = await browser.attach_page(url)
    unseen = await unseen_nodes(page.session)
    document = await page.session.send("DOM.getDocument", {"depth": -1, "pierce": True})
    judged: dict[str, bool] = {}
    stack = [document["root"]]
    while stack:
        node = stack.pop()
        if node["nodeName"] in ("HEAD", "STYLE", "SCRIPT"):
            continue
        stack += node.get("children", [])
        if node["nodeType"] == 3 and node["nodeValue"].strip():
            judged[node["nodeValue"].strip()] = node["backendNodeId"] in unseen
    hidden = {re.findall(r"HIDDEN-\d\d", t)[0]: u for t, u in judged.items() if "HIDDEN-" in t}
    # Covering is judged only by what is drawn on top (the snapshot's own test above).
    # A fixed box below the window is below no page the oracle measures.
    assert [h for h, u in sorted(hidden.items()) if not u] == ["HIDDEN-26", "HIDDEN-35"]
    assert len(hidden) == TECHNIQUES - 1  # a template holds no node of the document
    assert [t for t, u in judged.items() if u and "HIDDEN-" not in t] == []
