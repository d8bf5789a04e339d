"""Approvals say what will be touched, in real Chromium with the real extension.

The person asked about a click is told which element it is (role, name, text, frame, from the
page itself), sees it outlined in the page with a label while the question is open and a small
picture of it in the dialog; the outline is gone once the question ends, whichever way: an
answer, a timeout, a pause, a cancelled call (cancelled at each of its commands). The command
log and `tabrelay log export` keep the description; a secret typed into a password field is in
none of it, even when the page echoes it. A new tab or a navigation names where it goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from e2e.agent import Agent, ref
from e2e.cdp import CdpError
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from e2e.images import jpeg_size
from e2e.test_cancellation import CancelAt, tag_child_tasks
from support.cli import run_cli
from support.harness import ScriptedToolApprover
from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore
from tabrelay.endpoint.calls import Caller
from tabrelay.store.commandlog import CommandEntry
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.redaction import mask
from tabrelay.tools.targets import MAX_PICTURE_BYTES, PICTURE_SIZE

pytestmark = E2E

# The outline's label as the page shows it, or null: read-only, over the tests' own CDP.
OUTLINES = """
Array.from(document.querySelectorAll('[data-tabrelay-highlight]'))
  .map((host) => host.shadowRoot ? host.shadowRoot.textContent : '')
"""
CANARY = f"Canary{uuid.uuid4().hex[:12]}"


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def opened(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> tuple[int, Page, str]:
    url = pages.url(f"tools/targets.html?tab={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    page = await browser.attach_page(url)
    return tab, page, await agent.snapshot(tab)


async def outlines(page: Page) -> list[str]:
    return list(await page.evaluate(OUTLINES))


def watching(page: Page, seen: list[list[str]]) -> Callable[[ApprovalRequest], Awaitable[None]]:
    """The approver's look at the page while the question is open."""

    async def look(request: ApprovalRequest) -> None:
        seen.append(await outlines(page))

    return look


@contextlib.contextmanager
def answering(approver: ScriptedToolApprover, answer: Choice | None, look: Any = None) -> Any:
    saved = approver.answer, approver.while_deciding
    approver.answer, approver.while_deciding = answer, look
    try:
        yield approver
    finally:
        approver.answer, approver.while_deciding = saved


def log_rows(app: AppUnderTest, tool: str) -> list[CommandEntry]:
    log = app.harness.core.command_log
    assert log is not None
    return [row for row in log.recent(200) if row.tool == tool]


def cli(paths: Paths, *args: str) -> str:
    done = run_cli(paths, *args)
    return done.stdout


async def test_a_click_asks_with_the_element_described_outlined_and_pictured(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages)
    buy = ref(snapshot, "button", "Buy now")
    seen: list[list[str]] = []
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, watching(page, seen)) as asked:
        await agent.ok("browser_click", tab_id=tab, ref=buy)
    request = asked.requests[-1]
    assert request.tool == "browser_click"
    [target] = request.targets
    assert (target.path, target.given, target.role, target.name) == (
        "ref",
        buy,
        "button",
        "Buy now",
    )
    assert (target.text, target.frame, target.problem) == ("Buy now", "main frame", None)
    assert seen == [["Tabrelay: the agent wants to click this"]]  # while the person decides
    assert await outlines(page) == []  # and gone once they answered
    assert await page.evaluate("window.bought") == 1
    assert target.picture is not None and len(target.picture) <= MAX_PICTURE_BYTES
    width, height = jpeg_size(target.picture)
    assert 0 < width <= PICTURE_SIZE[0] and 0 < height <= PICTURE_SIZE[1]

    described = f'{buy}: button "Buy now", in the main frame'
    [row] = log_rows(app, "browser_click")[:1]
    assert row.targets == described
    exported = [json.loads(line) for line in cli(app.paths, "log", "export").splitlines()]
    assert described in [entry["targets"] for entry in exported]
    rows = csv.DictReader(io.StringIO(cli(app.paths, "log", "export", "--format", "csv")))
    assert described in [entry["targets"] for entry in rows]


async def test_a_long_text_and_an_element_in_a_frame_are_described_briefly(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages)
    in_frame = ref(snapshot, "button", "Frame button")
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE) as asked:
        await agent.ok("browser_click", tab_id=tab, selector="#terms")
        await agent.ok("browser_click", tab_id=tab, ref=in_frame)
    long, framed = (r.targets[0] for r in asked.requests[-2:])
    assert (long.path, long.given, long.role, long.frame) == (
        "selector",
        "#terms",
        "button",
        "main frame",
    )
    assert long.text.startswith("I agree to the terms of sale") and long.text.endswith("…")
    assert len(long.text) == 80 and len(long.name) <= 100
    assert framed.frame == f"frame http://127.0.0.1:{pages.port}/tools/frame.html"
    assert (framed.role, framed.name) == ("button", "Frame button")
    assert await outlines(page) == []


async def test_deny_timeout_and_pause_each_take_the_outline_away_and_touch_nothing(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    core = app.harness.core
    tab, page, snapshot = await opened(agent, browser, pages)
    buy = ref(snapshot, "button", "Buy now")
    seen: list[list[str]] = []
    approver = app.harness.tool_approver
    with answering(approver, Choice.DENY, watching(page, seen)):
        assert "denied by the person" in await agent.fails("browser_click", tab_id=tab, ref=buy)
    assert await outlines(page) == []

    settings = SettingsStore(app.paths.settings_file)
    await asyncio.to_thread(settings.update, lambda s: setattr(s, "approval_timeout", 0.5))
    try:
        with answering(approver, None, watching(page, seen)):
            said = await agent.fails("browser_click", tab_id=tab, ref=buy)
    finally:
        await asyncio.to_thread(settings.update, lambda s: setattr(s, "approval_timeout", 60))
    assert "did not answer" in said
    assert await outlines(page) == []

    with answering(approver, None, watching(page, seen)):
        pausing = asyncio.create_task(agent.fails("browser_click", tab_id=tab, ref=buy))
        # Paused once the person has looked at the page: a pause before the look withdraws
        # the question before anything is on screen to see (the CI flake).
        await wait_until(lambda: len(seen) == 3, timeout=10, message="the question is seen")
        core.gate.set_paused(True)
        try:
            assert "paused by the person" in await pausing
        finally:
            core.gate.set_paused(False)
    assert await outlines(page) == []
    assert seen == [["Tabrelay: the agent wants to click this"]] * 3
    assert await page.evaluate("window.bought") is None


async def test_a_question_cancelled_at_any_of_its_commands_leaves_no_outline_and_no_task(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    core = app.harness.core
    runner = core.runner
    assert runner is not None
    relay = await app.browser()
    tab, page, snapshot = await opened(agent, browser, pages)
    call = {"tab_id": tab, "ref": ref(snapshot, "button", "Buy now")}
    loop = asyncio.get_running_loop()
    hook = CancelAt(relay)
    relay.send_command = hook.send_command  # type: ignore[method-assign]
    baseline = set(asyncio.all_tasks())
    asked_at: list[int] = []
    try:
        with answering(app.harness.tool_approver, None) as approver:
            for n, after_answer in ((n, a) for n in range(1, 60) for a in (False, True)):
                asked = len(approver.requests)
                hook.count, hook.n, hook.after_answer, hook.cancelled_at = 0, n, after_answer, None
                task = asyncio.ensure_future(
                    runner.call(BY_NAME["browser_click"], call, Caller("cancel"), no_progress)
                )
                hook.call = task  # type: ignore[assignment]
                untag = tag_child_tasks(loop, task)  # type: ignore[arg-type]
                question = asyncio.ensure_future(_asked(approver, asked))
                try:
                    # Not cancelled by its commands: the question is open; cancel it there.
                    await asyncio.wait(
                        {task, question}, return_when=asyncio.FIRST_COMPLETED, timeout=10
                    )
                    if hook.cancelled_at is None:
                        asked_at.append(n)
                        hook._cancel()
                    await asyncio.gather(task, return_exceptions=True)
                finally:
                    untag()
                    question.cancel()
                    await asyncio.gather(question, return_exceptions=True)
                where = f"cancelled {'after' if after_answer else 'at'} command {n}"
                await wait_until(
                    lambda: not runner.background and relay.pending_count == 0,
                    timeout=5,
                    message=f"{where}: the call's commands end",
                )
                assert await wait_until(
                    lambda: _no_outline(page), timeout=5, message=f"{where}: the outline goes"
                )
                left = [t for t in asyncio.all_tasks() if t not in baseline and not t.done()]
                left = [t for t in left if t is not asyncio.current_task()]
                assert await wait_until(
                    lambda left=left: not [t for t in left if not t.done()],
                    timeout=5,
                    message=f"{where}: no task is left ({left})",
                )
                if len(asked_at) >= 2:
                    break  # every command before the question was a cancel point
    finally:
        relay.send_command = hook._send  # type: ignore[method-assign]
    # The tab's lookup, then the element's description (8), its picture (3) and outline (1).
    assert asked_at and asked_at[0] > 10, asked_at
    assert await page.evaluate("window.bought") is None


async def _asked(approver: ScriptedToolApprover, before: int) -> None:
    while len(approver.requests) == before:
        await asyncio.sleep(0.01)


async def _no_outline(page: Page) -> bool:
    with contextlib.suppress(CdpError):
        return await outlines(page) == []
    return False


async def test_a_password_field_is_described_and_its_secret_is_nowhere_even_when_echoed(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    tab, page, snapshot = await opened(agent, browser, pages)
    password = ref(snapshot, "textbox", "Password")
    nickname = ref(snapshot, "textbox", "Nickname")
    # A page that echoes what it expects (a placeholder, a label) into the field's description.
    await page.evaluate(
        f"document.getElementById('nickname').setAttribute('placeholder', {json.dumps(CANARY)})"
    )
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE) as asked:
        await agent.ok("browser_type", tab_id=tab, ref=password, text=CANARY)
        await agent.ok(
            "browser_fill_form",
            tab_id=tab,
            fields=[{"ref": nickname, "value": CANARY, "secret": True}],
        )
    typed, filled = asked.requests[-2:]
    [field] = typed.targets
    assert (field.role, field.name, field.kind) == ("textbox", "Password", "password")
    assert (field.text, field.frame) == ("Your password", "main frame")
    assert filled.targets[0].path == "fields.0.ref"
    assert filled.targets[0].text == mask(CANARY)  # the echo, masked like the argument
    assert await page.evaluate("document.getElementById('password').value") == CANARY
    for request in (typed, filled):
        assert CANARY not in repr(request) and all(
            CANARY.encode() not in (t.picture or b"") for t in request.targets
        )
    rows = log_rows(app, "browser_type")[:1] + log_rows(app, "browser_fill_form")[:1]
    assert rows[0].targets == (
        f'{password}: textbox "Password", password field, text "Your password", in the main frame'
    )
    assert mask(CANARY) in (rows[1].targets or "")
    for row in rows:
        assert CANARY not in repr(row)
    for fmt in ("jsonl", "csv"):
        assert CANARY not in cli(app.paths, "log", "export", "--format", fmt)


async def test_a_target_named_by_a_label_that_holds_a_secret_field_is_described_without_it(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """Chrome names a field by the whole <label> around it, and a button by what its
    aria-labelledby names: a card number or a code the person typed in a field there would be
    in the name the dialog shows and the command log keeps. Such a name is left out."""
    tab, page, snapshot = await opened(agent, browser, pages)
    await page.evaluate(
        f"document.getElementById('card').value = {json.dumps(CANARY)};"
        f"document.getElementById('code').value = {json.dumps(CANARY)}"
    )
    holder = ref(snapshot, "textbox", "Pay with")
    send = ref(snapshot, "button", "Send")
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE) as asked:
        await agent.ok("browser_click", tab_id=tab, ref=holder)
        await agent.ok("browser_click", tab_id=tab, ref=send)
    requests = asked.requests[-2:]
    assert [(t.role, t.name) for r in requests for t in r.targets] == [
        ("textbox", ""),
        ("button", ""),
    ]
    assert [r.targets[0].text for r in requests] == ["Card holder", "Send"]
    assert CANARY not in repr(requests)
    for row in log_rows(app, "browser_click")[:2]:
        assert CANARY not in repr(row)
    assert CANARY not in cli(app.paths, "log", "export")


async def test_a_new_tab_and_a_navigation_name_where_they_go(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    url = pages.url(f"tools/targets.html?tab={uuid.uuid4().hex[:8]}", host="LOCALHOST")
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE) as asked:
        tab = await agent.open(url)
        await agent.ok("browser_navigate", tab_id=tab, url=pages.url("tools/form.html"))
        await agent.ok("browser_navigate", tab_id=tab, action="back")
    opening, going, back = asked.requests[-3:]
    assert (opening.tool, opening.origin, opening.destination) == (
        "browser_new_tab",
        None,
        f"http://localhost:{pages.port}",  # as the guard reads it, not as the agent wrote it
    )
    assert (going.origin, going.destination) == (
        f"http://localhost:{pages.port}",
        f"http://127.0.0.1:{pages.port}",
    )
    assert back.destination == f"http://localhost:{pages.port}"
    rows = log_rows(app, "browser_new_tab")
    assert rows[0].targets == f"goes to http://localhost:{pages.port}"


@pytest.mark.parametrize("how", ["ref", "selector"])
@pytest.mark.parametrize("change", ["a copy in its place", "loaded again"])
async def test_a_page_that_changes_while_the_person_decides_has_nothing_else_clicked(
    app: AppUnderTest,
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    change: str,
    how: str,
) -> None:
    """The element the person was shown is the one acted on (a call finds each element it
    names once): if the page puts a copy in its place, or loads again, while they decide, the
    approved click says the ref is stale, or the selector's element went away, and clicks
    nothing."""
    script = {
        "a copy in its place": "const b = document.getElementById('buy'); "
        "b.replaceWith(b.cloneNode(true))",
        "loaded again": "location.reload()",
    }[change]
    tab, page, snapshot = await opened(agent, browser, pages)
    buy = ref(snapshot, "button", "Buy now")
    state = app.harness.core.tabs.tab(app.browsers()[0].id, tab)

    async def meanwhile(request: ApprovalRequest) -> None:
        await page.evaluate(f"{script}; 0")
        if change == "loaded again":  # the new document arrived (its refs released)
            await wait_until(lambda: state.refs.get(buy) is None, timeout=10)

    given = {"ref": buy} if how == "ref" else {"selector": "#buy"}
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, meanwhile):
        said = await agent.fails("browser_click", tab_id=tab, **given)
    expected = (
        f"ref {buy} is from an earlier version of the page"
        if how == "ref"
        else "'#buy' went away (the page removed it or loaded again)"
    )
    assert expected in said, said
    assert await page.evaluate("window.bought || 0") == 0
    # Asked again, the copy (or the new page's button) is clicked.
    again = ref(await agent.snapshot(tab), "button", "Buy now")
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE):
        await agent.ok("browser_click", tab_id=tab, ref=again)
    assert await page.evaluate("window.bought") == 1
    await page.close()


async def test_a_key_for_the_focused_field_is_not_pressed_where_the_page_moved_the_focus(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The person is asked about a key for the focused field (Nickname); while they decide,
    the page moves the focus to the password field. The key is not pressed there."""
    tab, page, _ = await opened(agent, browser, pages)
    await page.evaluate("document.getElementById('nickname').focus(); 0")

    async def meanwhile(request: ApprovalRequest) -> None:
        await page.evaluate("document.getElementById('password').focus(); 0")

    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, meanwhile) as asked:
        said = await agent.fails("browser_press_key", tab_id=tab, key="x")
    [target] = asked.requests[-1].targets
    assert (target.path, target.name) == ("focused", "Nickname")
    assert "the keyboard focus moved" in said, said
    assert await page.evaluate("document.getElementById('password').value") == ""
    # With the focus left where it was shown, the key goes there.
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE):
        await agent.ok("browser_press_key", tab_id=tab, key="x")
    assert await page.evaluate("document.getElementById('password').value") == "x"
    await page.close()


@pytest.mark.parametrize("page_does", ["focuses a field at last", "lies about its focus"])
async def test_a_key_is_not_pressed_where_the_person_was_not_shown_the_focus(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer, page_does: str
) -> None:
    """Nothing had the focus when the person was asked about a key, and the page then focuses
    the password field; or the page's own document says the focus is on Nickname while it is
    on the password field (the key would go where the focus really is). Either way the key is
    not pressed: the focus is checked in Tabrelay's world, where the page cannot redefine it."""
    tab, page, _ = await opened(agent, browser, pages)
    if page_does == "lies about its focus":
        await page.evaluate(
            "document.getElementById('password').focus();"
            "Object.defineProperty(Document.prototype, 'activeElement',"
            " { get() { return document.getElementById('nickname'); } }); 0"
        )

    async def meanwhile(request: ApprovalRequest) -> None:
        if page_does == "focuses a field at last":
            await page.evaluate("document.getElementById('password').focus(); 0")

    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, meanwhile) as asked:
        said = await agent.fails("browser_press_key", tab_id=tab, key="x")
    [target] = asked.requests[-1].targets
    if page_does == "lies about its focus":
        assert target.name == "Nickname"  # what the page's own document said
    else:
        assert "nothing on the page matches" in str(target.problem), target
    assert "the keyboard focus moved" in said, said
    assert await page.evaluate("document.getElementById('password').value") == ""
    await page.close()


async def test_a_form_whose_field_the_page_replaces_as_it_is_filled_says_what_was_filled(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The approval showed both fields; typing a nickname makes the page put a new password
    field in place of the one shown. The call says what it filled, and which field went."""
    tab, page, _ = await opened(agent, browser, pages)
    await page.evaluate(
        "document.getElementById('nickname').addEventListener('input', () => {"
        " const p = document.getElementById('password');"
        " if (p) p.replaceWith(p.cloneNode(true)); }); 0"
    )
    fields = [
        {"selector": "#nickname", "value": "ada"},
        {"selector": "#password", "value": "hunter2", "secret": True},
    ]
    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE):
        said = await agent.fails("browser_fill_form", tab_id=tab, fields=fields)
    assert said.startswith("Filled part of the form (#nickname); then #password: "), said
    assert "then #password: '#password' went away" in said and "(1 field(s) not filled)" in said
    assert "hunter2" not in said
    assert await page.evaluate("document.getElementById('nickname').value") == "ada"
    assert await page.evaluate("document.getElementById('password').value") == ""
    await page.close()


async def test_the_element_a_selector_named_when_the_person_was_asked_is_the_one_clicked(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The person is shown what ``#buy`` names; while they decide, the page gives that id to
    another element (a button that deletes the account). The approved click is the element
    they were shown, never the one the selector names afterwards."""
    tab, page, _ = await opened(agent, browser, pages)
    swap = """(() => {
      const other = document.createElement('button');
      other.textContent = 'Delete my account';
      other.onclick = () => { window.deleted = true; };
      document.body.prepend(other);
      document.getElementById('buy').id = '';
      other.id = 'buy';
    })(); 0"""

    async def meanwhile(request: ApprovalRequest) -> None:
        await page.evaluate(swap)

    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, meanwhile) as asked:
        await agent.ok("browser_click", tab_id=tab, selector="#buy")
    [target] = asked.requests[-1].targets
    assert (target.role, target.name) == ("button", "Buy now")
    assert await page.evaluate("window.deleted || false") is False
    assert await page.evaluate("window.bought") == 1
    await page.close()


async def test_files_are_not_said_attached_to_an_input_the_page_took_away_meanwhile(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer, tmp_path: Path
) -> None:
    """Chrome gives files to an input that is no longer in the page without a word: the call
    says it went away instead of "Attached", and the page has no file."""
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4 test")
    store = app.harness.core.settings_store
    await asyncio.to_thread(store.update, lambda s: setattr(s, "upload_dirs", [str(tmp_path)]))
    url = pages.url(f"tools/widgets.html?t={uuid.uuid4().hex[:8]}")
    tab = await agent.open(url)
    page = await browser.attach_page(url)

    async def meanwhile(request: ApprovalRequest) -> None:
        await page.evaluate(
            "const u = document.getElementById('upload'); u.replaceWith(u.cloneNode(true)); 0"
        )

    with answering(app.harness.tool_approver, Choice.ALLOW_ONCE, meanwhile):
        paths = [str(tmp_path / "report.pdf")]
        said = await agent.fails("browser_upload_file", tab_id=tab, selector="#upload", paths=paths)
    assert "'#upload' went away" in said, said
    assert await page.evaluate("document.getElementById('upload').files.length") == 0
    await page.close()
