"""browser_snapshot keeps secret fields' values to itself, by the rule browser_get_content and
the typing tools use (``page_scripts.FIELD_KIND``): one-time codes, card details, passwords a
"show password" toggle turned into text, fields drawn as dots; in shadow roots and frames too.
Plain fields still show what they hold. Real Chromium, the real extension, a real MCP client."""

from __future__ import annotations

import re
import uuid

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import PageServer

pytestmark = E2E

HIDDEN = {
    "Code": "one-time code",
    "Card number": "card detail",
    "Security code": "card detail",
    "Shown password": "password",
    "PIN": "password",
    "Expiry month": "card detail",
    "Card note": "card detail",
    "Shadow card": "card detail",
    "Frame code": "one-time code",
}


async def test_a_snapshot_never_shows_what_a_secret_field_holds(
    agent: Agent, pages: PageServer
) -> None:
    tab = await agent.open(pages.url(f"tools/filled_secrets.html?tab={uuid.uuid4().hex[:8]}"))
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot, snapshot
    for name, kind in HIDDEN.items():
        line = next(
            (s.strip() for s in snapshot.splitlines() if f'"{name}" [' in s), f"no {name} line"
        )
        assert re.search(r"\[e\d+\]", line), line  # still there to act on
        assert f"(a {kind} field: its value is not shown)" in line, line
    assert 'value="Ada Lovelace-PLAIN"' in snapshot
    assert 'value="Leave at the door-PLAIN"' in snapshot
    assert 'value="Frame note-PLAIN"' in snapshot
    # In another field's label, a control's contents or aria-labelledby: it says nothing.
    assert re.search(r'textbox "Sign in as with" \[e\d+\]', snapshot), snapshot
    assert re.search(r'button "Use card" \[e\d+\]', snapshot), snapshot
    assert re.search(r'button "Send" \[e\d+\]', snapshot), snapshot
    assert "73737" not in snapshot, snapshot
    # The agent can still act on them: a ref of the snapshot types into the field.
    said = await agent.ok(
        "browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Name"), text="x"
    )
    assert said.startswith("Typed"), said
    found = await agent.ok("browser_find", tab_id=tab, text="SECRET-")
    assert found.startswith("Nothing on the page matches"), found


@pytest.mark.parametrize("how", ["query", "getter"])
async def test_a_page_that_breaks_what_a_script_would_use_still_has_each_secret_hidden(
    agent: Agent, pages: PageServer, how: str
) -> None:
    """The page's own scripts break what a script in its world would use to tell secret fields
    apart (querySelectorAll, the value getter): the snapshot's runs in Tabrelay's own world, where
    none of that is seen, so each secret is hidden by its kind and plain fields still show."""
    tab = await agent.open(
        pages.url(f"tools/broken_secrets.html?break={how}&t={uuid.uuid4().hex[:8]}")
    )
    snapshot = await agent.snapshot(tab)
    assert "SECRET" not in snapshot, snapshot
    for name, kind in {
        "Code": "one-time code",
        "Card number": "card detail",
        "Expiry month": "card detail",
        "Card note": "card detail",
    }.items():
        line = next((s.strip() for s in snapshot.splitlines() if f'"{name}" [' in s), name)
        assert re.search(r"\[e\d+\]", line), line  # still there to act on
        assert f"(a {kind} field: its value is not shown)" in line, line
    assert 'value="Ada Lovelace-PLAIN"' in snapshot, snapshot
    assert re.search(r'button "Pay" \[e\d+\]', snapshot), snapshot
    found = await agent.ok("browser_find", tab_id=tab, text="SECRET-")
    assert found.startswith("Nothing on the page matches"), found
