"""A call leaves no page objects behind (tools/context.py ``ToolContext.objects``), in real
Chromium through the real extension: the elements a call resolves (a ref read with
browser_get_content, a selector or ref it acts on) live in one object group that is released
however the call ends — answered, failed, or cancelled at any of its awaits, answers arriving
after the cancel included. The snapshot's look at code editors too: it uses its call's group,
so two snapshots at once do not let go of each other's objects.

Each object the page hands out is seen where the relay delivers answers (``Browser.resolve``),
so objects whose answer came after the call was cancelled count too; afterwards each is asked
for again over the same session, which fails for an object the page no longer holds.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from e2e.test_cancellation import (
    CALLER,
    CancelAt,
    _cancel_once,
    _settled,
    agent_tab,
    no_progress,
)
from support.harness import allow_everything
from tabrelay.errors import CommandFailed
from tabrelay.protocol.messages import CommandError, CommandResult
from tabrelay.relay.browser import Browser
from tabrelay.tools.catalog import BY_NAME

pytestmark = E2E


def object_ids(value: Any) -> set[str]:
    """Every remote object id in a CDP answer."""
    if isinstance(value, dict):
        found = {str(value["objectId"])} if isinstance(value.get("objectId"), str) else set()
        for inner in value.values():
            found |= object_ids(inner)
        return found
    if isinstance(value, list):
        return set().union(*(object_ids(v) for v in value)) if value else set()
    return set()


def watch_objects(relay: Browser) -> tuple[set[str], CancelAt]:
    """Every object id the relay delivers from now on, answers after a cancel included, and the
    hook that cancels a call at its n-th command."""
    seen: set[str] = set()
    resolve = relay.resolve

    def watched(message: CommandResult | CommandError) -> bool:
        if isinstance(message, CommandResult):
            seen.update(object_ids(message.result))
        return resolve(message)

    relay.resolve = watched  # type: ignore[method-assign]
    hook = CancelAt(relay)
    relay.send_command = hook.send_command  # type: ignore[method-assign]
    return seen, hook


def stop_watching(relay: Browser) -> None:
    """The relay's own methods again (the instance's wrappers hid them)."""
    vars(relay).pop("resolve")
    vars(relay).pop("send_command")


async def alive(browser: Browser, tab: int, objects: set[str]) -> set[str]:
    """The objects the page still holds."""
    held = set()
    for object_id in objects:
        try:
            await browser.cdp(tab, "Runtime.getProperties", {"objectId": object_id})
        except CommandFailed:
            continue  # "Could not find object with given id": released
        held.add(object_id)
    return held


async def test_a_call_cancelled_at_any_await_leaves_no_page_object_behind(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    await asyncio.to_thread(allow_everything, app.paths)
    url = pages.url(f"tools/article.html?run={uuid.uuid4().hex[:8]}")
    runner, relay, tab = await agent_tab(app, url)
    snapshot = (
        await runner.call(BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress)
    ).text
    ref = snapshot.split("[", 1)[1].split("]", 1)[0]  # the page's first ref

    seen, hook = watch_objects(relay)
    loop = asyncio.get_running_loop()
    cases: list[tuple[str, dict[str, Any]]] = [
        ("browser_get_content", {"ref": ref}),
        ("browser_get_content", {"ref": ref, "format": "html"}),
        ("browser_hover", {"ref": ref}),
        ("browser_hover", {"selector": "h1"}),
    ]
    cancelled = 0
    try:
        for tool, arguments in cases:
            for n, after_answer in ((n, a) for n in range(1, 40) for a in (False, True)):
                seen.clear()
                call = {"tab_id": tab, **arguments}
                finished = await _cancel_once(runner, hook, loop, tool, call, n, after_answer)
                where = f"{tool} {arguments} {'finished' if finished else 'cancelled'}"
                where += "" if finished else f" {'after' if after_answer else 'at'} command {n}"
                await _settled(runner, relay, hook, where)
                assert await alive(relay, tab, set(seen)) == set(), where
                if finished:
                    assert seen, f"{tool} asked for no page object: the test proves nothing"
                    break
                cancelled += 1
    finally:
        stop_watching(relay)
    assert cancelled >= 20, f"only {cancelled} cancellations were injected"


async def test_a_snapshot_of_a_code_editor_cancelled_at_any_await_holds_no_page_object(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """The editor's text and where it is come back by value (``editor_text``): once the page's
    elements were asked about closed shadow roots (the first snapshots), a snapshot of a code
    editor, cancelled at any await or not, asks the page for no object at all, so none can be
    left behind, and still reads the editor."""
    url = pages.url(f"editors/codemirror5.html?run={uuid.uuid4().hex[:8]}")
    runner, relay, tab = await agent_tab(app, url)
    page = await browser.attach_page(url)
    await wait_until(
        lambda: page.evaluate("window.editorReady === true"),
        timeout=15,
        message="CodeMirror 5 loads its editor",
    )
    text = "select * from facts where id > 1"  # what the page's editor holds

    # Two snapshots at once each read the editor: neither lets go of the other's objects.
    both = await asyncio.gather(
        *(
            runner.call(BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress)
            for _ in range(4)
        )
    )
    assert all(f'value="{text}"' in s.text for s in both), [s.text for s in both]

    seen, hook = watch_objects(relay)
    loop = asyncio.get_running_loop()
    cancelled = 0
    try:
        for n, after_answer in ((n, a) for n in range(1, 60) for a in (False, True)):
            seen.clear()
            call = {"tab_id": tab}
            finished = await _cancel_once(
                runner, hook, loop, "browser_snapshot", call, n, after_answer
            )
            where = f"a snapshot {'finished' if finished else 'cancelled'}"
            where += "" if finished else f" {'after' if after_answer else 'at'} command {n}"
            await _settled(runner, relay, hook, where)
            assert not seen, where
            if finished:
                break
            cancelled += 1
    finally:
        stop_watching(relay)
    assert cancelled >= 4, f"only {cancelled} cancellations were injected"
    again = await runner.call(BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress)
    assert f'value="{text}"' in again.text, again.text


async def test_a_call_that_got_no_object_from_the_page_has_nothing_to_release(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    """A release costs a round trip: a snapshot that got no object from the page (nothing left
    to ask about closed shadow roots) sends none, and a hover, which holds its element, still
    releases it."""
    await asyncio.to_thread(allow_everything, app.paths)
    url = pages.url(f"reach/export.html?run={uuid.uuid4().hex[:6]}")  # no closed root to open
    runner, relay, tab = await agent_tab(app, url)
    seen, _ = watch_objects(relay)
    sent: list[str] = []
    send = relay.send_command

    async def logged(method: str, params: Any = None, *, timeout: Any = None) -> Any:
        sent.append(str((params or {}).get("method", method)))
        return await send(method, params, timeout=timeout)

    relay.send_command = logged  # type: ignore[method-assign]
    try:
        # The first read asks about each element that may hide a closed root, once: that holds
        # elements. The next has nothing left to ask.
        for _ in range(2):
            sent.clear()
            await runner.call(BY_NAME["browser_snapshot"], {"tab_id": tab}, CALLER, no_progress)
        assert "Runtime.releaseObjectGroup" not in sent, sent
        assert await alive(relay, tab, set(seen)) == set()
        sent.clear()
        await runner.call(
            BY_NAME["browser_hover"], {"tab_id": tab, "selector": "h1"}, CALLER, no_progress
        )
        assert "Runtime.releaseObjectGroup" in sent, sent
        assert await alive(relay, tab, set(seen)) == set()
    finally:
        stop_watching(relay)
        vars(relay).pop("send_command", None)
