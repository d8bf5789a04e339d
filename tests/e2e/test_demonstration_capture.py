"""Demonstrations in real Chromium: what a person does in a tab (trusted input driven through
the tests' own CDP connection, as a keyboard and mouse would) becomes recipe steps with good
locators; a password typed is in no file and no message; a page's own scripts acting are not
recorded; navigations the person made are; Stop and a closed tab end it.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.recipes.model import Step
from tabrelay.recipes.recorder import Recorder
from tabrelay.tools.recorders.demonstration import Demonstrations

pytestmark = E2E
CANARY = "CANARY-DEMO-PW-5521"
OTP = "CANARY-OTP-9931"


@pytest_asyncio.fixture(loop_scope="module")
async def demos(
    app: AppUnderTest, browser: ExtensionBrowser, tmp_path: Path
) -> AsyncIterator[tuple[Demonstrations, Recorder]]:
    core = app.harness.core
    await app.browser()
    recorder = Recorder(tmp_path / "recordings")
    demonstrations = Demonstrations(
        registry=core.registry,
        hub=core.hub,
        tabs=core.tabs,
        sessions=core.sessions,
        recorder=recorder,
    )
    yield demonstrations, recorder
    await demonstrations.close()


async def person_tab(browser: ExtensionBrowser, pages: PageServer) -> tuple[Page, int, str]:
    url = pages.url(f"locators/demo.html?t={uuid.uuid4().hex[:8]}")
    page = await browser.open_page(url)
    return page, await browser.tab_id_of(url), url


async def key(page: Page, name: str, code: int) -> None:
    for kind in ("rawKeyDown", "keyUp"):
        await page.session.send(
            "Input.dispatchKeyEvent",
            {"type": kind, "key": name, "code": name, "windowsVirtualKeyCode": code},
        )


async def steps_of(recorder: Recorder, recording: str, count: int) -> list[Step]:
    async def enough() -> list[Step]:
        steps = recorder.steps(recording)[0]
        return steps if len(steps) >= count else []

    try:
        return await wait_until(enough, timeout=10, message=f"{count} steps recorded")
    except TimeoutError:
        raise AssertionError([s.describe() for s in recorder.steps(recording)[0]]) from None


def line(step: Step) -> str:
    return step.describe()


async def test_a_persons_clicks_typing_choices_and_keys_become_steps_with_good_locators(
    demos: tuple[Demonstrations, Recorder],
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
) -> None:
    demonstrations, recorder = demos
    page, tab, url = await person_tab(browser, pages)
    browser_id = (await app.browser()).id
    binding = app.harness.core.hub.subscribe(
        accept=lambda e: e.method == "Runtime.bindingCalled", hears_muted=True
    )
    told = []
    demonstrations.add_listener(lambda: told.append(1))
    recording = await demonstrations.start(browser_id, tab)
    assert demonstrations.active() == [(recording, browser_id, tab)]
    await page.click("#name")
    await page.session.send("Input.insertText", {"text": "Ada Lovelace"})
    await page.click("#pw")
    await page.session.send("Input.insertText", {"text": CANARY})
    await page.click("#code")
    await page.session.send("Input.insertText", {"text": OTP})
    await page.click("#plan")
    await key(page, "Escape", 27)  # closes the select's popup
    await key(page, "ArrowDown", 40)
    await page.click("#terms")
    await page.click("#go")
    await page.evaluate("window.actLikeAPerson()")  # the page's own scripts: not the person
    steps = await steps_of(recorder, recording, 7)
    said = [line(s) for s in steps]
    assert said[:4] == [
        f"go to {url}",
        "type 'Ada Lovelace' into textbox \"Full name\"",
        "type '{{password}}' into textbox \"Password\"",
        "type '{{one_time_code}}' into textbox \"Code\"",
    ], said
    assert 'choose Team plan in combobox "Plan"' in said
    assert 'check checkbox "I accept the terms"' in said
    assert said[-1] == 'click button "Create account"', said
    assert all(s.by == "person" for s in steps)
    params = recorder.steps(recording)[1]
    assert {(p.name, p.secret) for p in params} == {("password", True), ("one_time_code", True)}
    await asyncio.sleep(0.5)
    assert len(recorder.steps(recording)[0]) == len(steps)  # nothing from the page's scripts
    assert await page.evaluate("window.fakeClicks") == 1
    await demonstrations.stop(recording)
    await demonstrations.stop(recording)  # twice is harmless
    assert demonstrations.active() == []
    assert told
    # The password was in no message to the app, no recording file and no log.
    seen = [json.dumps(event.params) for event in binding.drain()]
    assert any("Ada Lovelace" in s for s in seen)  # the messages were heard: the check can fail
    binding.close()
    files = [p.read_text() for p in recorder.folder.rglob("*") if p.is_file()]
    logs = [p.read_text() for p in app.paths.log_dir.rglob("*") if p.is_file()]
    for text in [*seen, *files, *logs]:
        assert CANARY not in text and OTP not in text
    assert any("Ada Lovelace" in f for f in files)  # plain text is kept: the check can fail
    await page.close()


async def test_keys_and_navigations_the_person_made_are_steps_and_stop_ends_it(
    demos: tuple[Demonstrations, Recorder],
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
) -> None:
    demonstrations, recorder = demos
    page, tab, url = await person_tab(browser, pages)
    recording = await demonstrations.start((await app.browser()).id, tab)
    second = pages.url("locators/second.html")
    await page.session.send("Page.navigate", {"url": second})  # as if typed in the address bar
    await page.wait_for_load(second)
    await steps_of(recorder, recording, 2)
    history = await page.session.send("Page.getNavigationHistory")
    entry = history["entries"][history["currentIndex"] - 1]["id"]
    await page.session.send("Page.navigateToHistoryEntry", {"entryId": entry})  # Back
    await page.wait_for_load(url)
    await steps_of(recorder, recording, 3)
    await key(page, "Escape", 27)
    steps = await steps_of(recorder, recording, 4)
    assert [line(s) for s in steps] == [
        f"go to {url}",
        f"go to {second}",
        "go back",
        "press Escape",
    ]
    await demonstrations.stop(recording)
    info = recorder.info(recording)
    assert not info.live
    await page.click("#go")
    await asyncio.sleep(0.5)
    assert len(recorder.steps(recording)[0]) == 4  # nothing after Stop
    await page.close()


async def test_a_demonstration_ends_by_itself_when_its_tab_closes(
    demos: tuple[Demonstrations, Recorder],
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
) -> None:
    demonstrations, recorder = demos
    page, tab, _ = await person_tab(browser, pages)
    recording = await demonstrations.start((await app.browser()).id, tab)
    await page.close()
    await wait_until(lambda: demonstrations.active() == [], timeout=10, message="it ends")
    assert not recorder.info(recording).live
    with pytest.raises(Exception, match=r"already|no browser|cannot record"):
        await demonstrations.start((await app.browser()).id, tab)
