"""The acting tools through a real MCP client, real Chromium and the real extension.

Every test checks that the page really changed, reading it back over the tests' own CDP
connection (``ExtensionBrowser.attach_page``), not just that the tool call returned.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until

pytestmark = E2E


async def opened(agent: Agent, browser: ExtensionBrowser, url: str) -> tuple[int, Page, str]:
    """A new tab on ``url``: its id, the tests' own view of it, and a fresh snapshot.

    The URL gets a unique query so the tests' view attaches to this tab, not an earlier one.
    """
    url = f"{url}?tab={uuid.uuid4().hex[:8]}"
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    return tab, page, await agent.snapshot(tab)


async def test_an_agent_fills_and_submits_a_form_found_only_through_the_snapshot(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/form.html"))
    await agent.ok(
        "browser_fill_form",
        tab_id=tab,
        fields=[
            {"ref": ref(snapshot, "textbox", "Name *"), "value": "Ada Lovelace"},
            {"ref": ref(snapshot, "textbox", "Email"), "value": "ada@example.com"},
            {"ref": ref(snapshot, "textbox", "Password"), "value": "s3cret-Pa55"},
            {"ref": ref(snapshot, "combobox", "Size"), "value": "Large"},
            {"ref": ref(snapshot, "listbox", "Toppings"), "value": ["Cheese", "Basil"]},
            {"ref": ref(snapshot, "checkbox", "Gift wrap"), "value": True},
            {"ref": ref(snapshot, "radio", "Express"), "value": True},
        ],
    )
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Place order"))
    submitted = await page.evaluate("window.submitted")
    assert submitted == {
        "name": "Ada Lovelace", "email": "ada@example.com", "password": "s3cret-Pa55",
        "notes": "old notes", "size": "l", "toppings": ["Cheese", "Basil"], "gift": True,
        "speed": "express", "message": "Hello",
    }  # fmt: skip
    assert await page.text_of("#result") == "Order placed for Ada Lovelace"
    log = app.harness.core.command_log
    assert log is not None
    assert "s3cret-Pa55" not in json.dumps([r.arguments for r in log.recent(50)])


async def test_typing_replaces_appends_submits_and_hides_passwords(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer, app: AppUnderTest
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/form.html"))
    notes = ref(snapshot, "textbox", "Notes")
    await agent.ok("browser_type", tab_id=tab, ref=notes, text="new notes")
    assert await page.evaluate("document.getElementById('notes').value") == "new notes"
    await agent.ok("browser_type", tab_id=tab, ref=notes, text=" and more", append=True)
    assert await page.evaluate("document.getElementById('notes').value") == "new notes and more"
    await agent.ok("browser_type", tab_id=tab, selector="#message", text="Rich text!", slowly=True)
    assert await page.text_of("#message") == "Rich text!"
    said = await agent.ok(
        "browser_type", tab_id=tab, ref=ref(snapshot, "textbox", "Password"), text="hunter2-pw"
    )
    assert said.startswith("Typed a password into")
    await agent.ok(
        "browser_type",
        tab_id=tab,
        ref=ref(snapshot, "textbox", "Name *"),
        text="Grace",
        submit=True,
    )
    assert await page.text_of("#result") == "Order placed for Grace"
    log = app.harness.core.command_log
    assert log is not None
    assert "hunter2-pw" not in json.dumps([r.arguments for r in log.recent(50)])
    not_text = await agent.fails(
        "browser_type", tab_id=tab, ref=ref(snapshot, "checkbox", "Gift wrap"), text="x"
    )
    assert "is not a text field" in not_text


async def test_select_option_by_label_or_value_and_a_clear_error_for_a_missing_one(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/form.html"))
    size = ref(snapshot, "combobox", "Size")
    await agent.ok("browser_select_option", tab_id=tab, ref=size, values=["Small"])
    assert await page.evaluate("document.getElementById('size').value") == "s"
    await agent.ok("browser_select_option", tab_id=tab, ref=size, values=["l"])
    assert await page.evaluate("document.getElementById('size').value") == "l"
    missing = await agent.fails("browser_select_option", tab_id=tab, ref=size, values=["Huge"])
    assert missing.endswith("has no option 'Huge'; its options: 'Small', 'Medium', 'Large'")


async def test_clicks_double_clicks_right_clicks_and_shadow_dom(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    counter = ref(snapshot, "button", "Clicked 0 times")
    await agent.ok("browser_click", tab_id=tab, ref=counter)
    await agent.ok("browser_click", tab_id=tab, ref=counter)
    assert await page.text_of("#counter") == "Clicked 2 times"
    await agent.ok("browser_click", tab_id=tab, selector="#double", double=True)
    assert await page.text_of("#double") == "Double-clicked"
    await agent.ok("browser_click", tab_id=tab, selector="#right", button="right")
    assert await page.text_of("#right") == "Right-clicked"
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Shadow button"))
    shadow = "document.querySelector('my-widget').shadowRoot.getElementById('state').textContent"
    assert await page.evaluate(shadow) == "on"


async def test_clicking_inside_a_same_origin_frame(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Frame button"))
    inner = "document.querySelector('iframe').contentDocument.getElementById('frame-button')"
    assert await page.evaluate(f"{inner}.textContent") == "Frame clicked"


# A veil of the page over everything, as a cookie banner is.
VEIL = (
    "(() => { const veil = document.createElement('div'); veil.id = 'veil';"
    " veil.textContent = 'We use cookies'; veil.style.cssText ="
    " 'position: fixed; inset: 0; background: white; z-index: 10';"
    " document.body.append(veil); })()"
)


async def test_a_same_origin_frame_under_an_overlay_of_the_page_around_it_is_not_clicked(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A veil of the page over a same-site frame (a cookie banner over an embedded form): a
    person could not click the frame's button, and neither may the agent; once it goes, the
    click lands. So for a frame drawn through a transform, checked where it is drawn."""
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    button = ref(snapshot, "button", "Frame button")
    inner = "document.querySelector('iframe').contentDocument.getElementById('frame-button')"

    async def refused_under_the_veil_then_clicked(said: str) -> None:
        await page.evaluate(f"{inner}.textContent = 'Frame button'; {VEIL}")
        covered = await agent.fails("browser_click", tab_id=tab, ref=button)
        assert said in covered, covered
        assert await page.evaluate(f"{inner}.textContent") == "Frame button"
        await page.evaluate("document.getElementById('veil').remove()")
        await agent.ok("browser_click", tab_id=tab, ref=button)
        assert await page.evaluate(f"{inner}.textContent") == "Frame clicked"

    await refused_under_the_veil_then_clicked('is covered by div#veil "We use cookies"')
    await page.evaluate(
        "document.querySelector('iframe').style.transform = 'scale(0.8) rotate(3deg)'"
    )
    await refused_under_the_veil_then_clicked(
        "is covered by something of the page around its frame"
    )


async def test_hidden_disabled_and_covered_targets_are_refused_with_the_reason(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, _snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    hidden = await agent.fails("browser_click", tab_id=tab, selector="#hidden")
    assert "is not visible" in hidden
    form_tab, _, form = await opened(agent, browser, pages.url("tools/form.html"))
    disabled = await agent.fails(
        "browser_click", tab_id=form_tab, ref=ref(form, "button", "Not yet")
    )
    assert "is disabled" in disabled
    await agent.ok("browser_click", tab_id=tab, selector="#show-overlay")
    covered = await agent.fails("browser_click", tab_id=tab, selector="#covered")
    assert "is covered by div#overlay" in covered
    assert await page.evaluate("document.getElementById('overlay').style.display") == "block"
    missing = await agent.fails("browser_click", tab_id=tab, selector="#no-such")
    assert missing == "nothing on the page matches the selector '#no-such'"
    neither = await agent.fails("browser_click", tab_id=tab)
    assert "give either 'ref'" in neither


async def test_a_stale_ref_says_to_take_a_new_snapshot(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, _, snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    counter = ref(snapshot, "button", "Clicked 0 times")
    await agent.ok("browser_navigate", tab_id=tab, action="reload")
    stale = await agent.fails("browser_click", tab_id=tab, ref=counter)
    assert "is from an earlier version of the page" in stale
    assert "take a new snapshot" in stale
    unknown = await agent.fails("browser_click", tab_id=tab, ref="e99999")
    assert "there is no ref 'e99999'" in unknown


async def test_hover_shows_what_a_pointer_reveals(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, _ = await opened(agent, browser, pages.url("tools/widgets.html"))
    await agent.ok("browser_hover", tab_id=tab, selector="#hover-me")
    display = "getComputedStyle(document.getElementById('tooltip')).display"
    assert await page.evaluate(display) == "inline"


async def test_keys_and_combinations_reach_the_focused_element(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/widgets.html"))
    field = ref(snapshot, "textbox", "Keyboard input")
    await agent.ok("browser_press_key", tab_id=tab, ref=field, key="a")
    await agent.ok("browser_press_key", tab_id=tab, key="ArrowLeft", repeat=2)
    await agent.ok("browser_press_key", tab_id=tab, key="Control+a")
    await agent.ok("browser_press_key", tab_id=tab, key="Backspace")
    assert (
        await page.text_of("#keys") == "a,ArrowLeft,ArrowLeft,Control+Control,Control+a,Backspace"
    )
    assert await page.evaluate("document.getElementById('keyboard').value") == ""
    bad = await agent.fails("browser_press_key", tab_id=tab, key="Hyper+q")
    assert "'Hyper' is not a modifier" in bad


async def test_scrolling_by_screens_to_ends_to_elements_and_to_text(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/long.html"))
    down = await agent.ok("browser_scroll", tab_id=tab, direction="down")
    assert await wait_until(lambda: page.evaluate("scrollY > 100"), timeout=5)
    assert "Scrolled down" in down
    await agent.ok("browser_scroll", tab_id=tab, direction="bottom")
    assert await page.evaluate("scrollY + innerHeight >= document.body.scrollHeight - 2")
    await agent.ok("browser_scroll", tab_id=tab, direction="top")
    assert await page.evaluate("scrollY") == 0
    found = await agent.ok("browser_scroll", tab_id=tab, direction="to_text", text="TREASURE")
    assert "Scrolled to text" in found
    visible = (
        "(() => { const r = document.getElementById('far').getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight; })()"
    )
    assert await page.evaluate(visible)
    await agent.ok("browser_scroll", tab_id=tab, direction="top")
    await agent.ok(
        "browser_scroll",
        tab_id=tab,
        direction="to_element",
        ref=ref(snapshot, "button", "Bottom button"),
    )
    assert await page.evaluate("scrollY > 5000")
    missing = await agent.fails("browser_scroll", tab_id=tab, direction="to_text", text="zzz")
    assert missing == "the text 'zzz' is not on the page"


async def test_drag_and_drop(agent: Agent, browser: ExtensionBrowser, pages: PageServer) -> None:
    tab, page, _ = await opened(agent, browser, pages.url("tools/widgets.html"))
    await agent.ok("browser_drag", tab_id=tab, source_selector="#source", target_selector="#target")
    assert await page.text_of("#dropped") == "Dropped payload"


async def test_uploads_only_from_allowed_folders(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    tmp_path: Path,
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "report.pdf").write_bytes(b"%PDF-1.4 test")
    (tmp_path / "secret.txt").write_text("no")
    tab, page, _ = await opened(agent, browser, pages.url("tools/widgets.html"))
    nothing_allowed = await agent.fails(
        "browser_upload_file", tab_id=tab, selector="#upload", paths=[str(allowed / "report.pdf")]
    )
    assert "no folder is allowed for uploads" in nothing_allowed
    store = app.harness.core.settings_store
    await asyncio.to_thread(store.update, lambda s: setattr(s, "upload_dirs", [str(allowed)]))
    await agent.ok(
        "browser_upload_file", tab_id=tab, selector="#upload", paths=[str(allowed / "report.pdf")]
    )
    assert await page.text_of("#files") == "report.pdf"
    for path, reason in [
        (str(allowed / ".." / "secret.txt"), "outside the folders allowed"),
        ("report.pdf", "is not an absolute path"),
        (str(allowed / "missing.pdf"), "is not a file"),
    ]:
        refused = await agent.fails(
            "browser_upload_file", tab_id=tab, selector="#upload", paths=[path]
        )
        assert reason in refused
    not_file = await agent.fails(
        "browser_upload_file", tab_id=tab, selector="#counter", paths=[str(allowed / "report.pdf")]
    )
    assert "is not a file input" in not_file


async def test_alert_confirm_and_prompt_are_answered_and_block_other_tools_meanwhile(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages.url("tools/dialogs.html"))
    opened_alert = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Alert"))
    assert "The page opened a alert dialog: 'Hello there'" in opened_alert
    blocked = await agent.fails("browser_snapshot", tab_id=tab)
    assert "shows a alert dialog: 'Hello there'; answer it with browser_handle_dialog" in blocked
    await agent.ok("browser_handle_dialog", tab_id=tab, accept=True)
    assert await wait_until(lambda: page.text_of("#out"), timeout=5) == "alert closed"
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Confirm"))
    await agent.ok("browser_handle_dialog", tab_id=tab, accept=False)
    assert await wait_until(lambda: page.text_of("#out"), timeout=5) == "cancelled"
    await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Prompt"))
    await agent.ok("browser_handle_dialog", tab_id=tab, accept=True, prompt_text="Ada")
    assert await wait_until(lambda: page.text_of("#out"), timeout=5) == "name: Ada"
    none = await agent.fails("browser_handle_dialog", tab_id=tab, accept=True)
    assert none == f"no dialog is open in tab {tab}"


async def test_waiting_for_text_elements_load_states_and_time(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab = await agent.open(pages.url("tools/slow.html"))
    await agent.ok(
        "browser_navigate", tab_id=tab, url=pages.url("tools/slow.html"), wait_until="none"
    )
    assert "'Results are ready' appeared" in await agent.ok(
        "browser_wait_for", tab_id=tab, text="Results are ready"
    )
    await agent.ok("browser_wait_for", tab_id=tab, text_gone="Loading results")
    await agent.ok("browser_wait_for", tab_id=tab, selector="#late")
    await agent.ok("browser_wait_for", tab_id=tab, load_state="networkidle")
    await agent.ok("browser_wait_for", tab_id=tab, seconds=0.2)
    never = await agent.fails("browser_wait_for", tab_id=tab, text="never there", timeout=0.5)
    assert never == "waited 0.5 s for 'never there': the text never appeared"
    both = await agent.fails("browser_wait_for", tab_id=tab, text="a", seconds=1)
    assert "exactly one of" in both


async def test_cancelling_a_wait_stops_it_at_once(
    agent: Agent, pages: PageServer, app: AppUnderTest
) -> None:
    tab = await agent.open(pages.url("tools/slow.html"))
    runner = app.harness.core.runner
    assert runner is not None
    call = asyncio.create_task(
        agent.call("browser_wait_for", tab_id=tab, text="never there", timeout=60)
    )
    await wait_until(lambda: runner.active_calls == 1, timeout=10, message="the wait runs")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await wait_until(lambda: runner.active_calls == 0, timeout=2, message="the wait stops")
    assert "Slow page" in await agent.ok("browser_get_content", tab_id=tab, format="text")
