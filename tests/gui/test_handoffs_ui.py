"""Open handoffs in the dashboard and the tray, over a real Handoffs: the banner comes and goes
with them, Done and Cancel end them saying where they were pressed, the tray shows that one
waits and tells the person when one opens, and the agent's words stay plain text."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from gui.conftest import DesktopFactory, expect, within
from tabrelay.tools.state.handoffs import Handoffs, OpenHandoff
from tabrelay.ui.bridge import ChangeSignal
from tabrelay.ui.handoffs_view import HandoffsBanner, handoff_headline, time_left
from tabrelay.ui.icons import TrayState

URL = "https://bank.example/login"


def begin(
    handoffs: Handoffs, reason: str = "sign in with your 2FA code", *, tab_id: int = 3, **kw: str
) -> tuple[OpenHandoff, asyncio.Future[tuple[str, str]]]:
    return handoffs.begin(  # type: ignore[return-value]
        "b1",
        tab_id,
        reason=reason,
        client=kw.get("client", "claude-code"),
        timeout=300,
        url=kw.get("url", URL),
        title=kw.get("title", "Bank — Sign in"),
    )


@pytest.fixture
def banner(qtbot: QtBot) -> Iterator[tuple[HandoffsBanner, Handoffs, ChangeSignal]]:
    handoffs = Handoffs()
    changes = ChangeSignal(coalesce=0.01)
    changes.watch(handoffs.add_listener)
    window = QWidget()  # the banner sits in a window, as in the dashboard
    widget = HandoffsBanner(handoffs, changes.changed, parent=window)
    QVBoxLayout(window).addWidget(widget)
    qtbot.addWidget(window)
    window.show()
    yield widget, handoffs, changes
    changes.close()


async def test_the_banner_comes_and_goes_with_open_handoffs(
    banner: tuple[HandoffsBanner, Handoffs, ChangeSignal],
) -> None:
    widget, handoffs, changes = banner
    assert not widget.isVisible()

    changed = expect(changes.changed)
    opened, ended = begin(handoffs)
    await within(changed)
    assert widget.isVisible()
    row = widget.rows[opened.id]
    assert row.headline.text() == (
        "An agent asks you to: sign in with your 2FA code — tab “Bank — Sign in”"
    )
    assert row.detail.text().startswith("claude-code · ")
    assert " s left · https://bank.example/login" in row.detail.text()

    changed = expect(changes.changed)
    second, second_ended = begin(handoffs, "solve the CAPTCHA", tab_id=4, title="Shop")
    await within(changed)
    assert list(widget.rows) == [opened.id, second.id]

    row.done_button.click()
    assert await within(ended) == ("done", "dashboard")
    changed = expect(changes.changed)
    handoffs.drop(opened.id)  # what the waiting tool call does once it has answered
    await within(changed)
    assert list(widget.rows) == [second.id] and widget.isVisible()

    widget.rows[second.id].cancel_button.click()
    assert await within(second_ended) == ("cancelled", "dashboard")
    changed = expect(changes.changed)
    handoffs.drop(second.id)
    await within(changed)
    assert widget.rows == {} and not widget.isVisible()


async def test_done_on_a_handoff_that_already_ended_says_so(
    banner: tuple[HandoffsBanner, Handoffs, ChangeSignal],
) -> None:
    widget, handoffs, changes = banner
    changed = expect(changes.changed)
    opened, ended = begin(handoffs)
    await within(changed)
    ended.set_result(("timeout", "timeout"))  # it timed out; the tool has not dropped it yet
    assert widget.end(opened.id, "done") is False
    assert widget.note.isVisible()
    assert "already ended" in widget.note.text()


async def test_the_agents_words_and_the_pages_title_are_plain_text(
    banner: tuple[HandoffsBanner, Handoffs, ChangeSignal],
) -> None:
    widget, handoffs, changes = banner
    reason = '<a href="file:///etc/passwd">Click</a>\nthen \u202eevil'
    title = "<b>Your bank</b>\u2066"
    changed = expect(changes.changed)
    opened, _ = begin(handoffs, reason, title=title, client="<i>me</i>")
    await within(changed)
    row = widget.rows[opened.id]
    assert row.headline.textFormat() == Qt.TextFormat.PlainText
    assert row.detail.textFormat() == Qt.TextFormat.PlainText
    assert not row.headline.openExternalLinks()
    assert row.headline.text() == (
        'An agent asks you to: <a href="file:///etc/passwd">Click</a>\\u000athen \\u202eevil'
        " — tab “<b>Your bank</b>\\u2066”"
    )
    assert row.detail.text().startswith("<i>me</i> · ")
    assert handoff_headline(opened) == row.headline.text()


def test_time_left_reads_as_a_person_would() -> None:
    assert time_left(100.0, 100.0) == "time is up"
    assert time_left(100.0, 150.0) == "time is up"
    assert time_left(112.5, 100.0) == "12 s left"
    assert time_left(345.0, 100.0) == "4 min 05 s left"


async def test_the_tray_shows_a_waiting_handoff_and_ends_it_from_its_menu(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        core = desk.harness.core
        tray = desk.ui.tray
        assert tray.state() is TrayState.NO_BROWSER
        changed = expect(desk.ui.bridge.handoffs_changed.changed)
        opened, ended = begin(core.handoffs, "confirm the payment & go on")
        await within(changed)
        assert tray.state() is TrayState.WAITING
        assert tray.current_state is TrayState.WAITING  # the icon follows without a poll
        assert "An agent asks you to: confirm the payment & go on" in tray.icon.toolTip()
        (note,) = desk.ui.notifier.history
        assert (note.title, note.kind, note.topic) == (
            "An agent hands you a tab",
            "warning",
            "handoff",
        )
        assert "confirm the payment & go on" in note.message

        tray.menu.aboutToShow.emit()
        entry = tray.find(f"handoff:{opened.id}")
        assert entry is not None
        assert entry.text() == "Waiting for you: confirm the payment && go on"
        done = tray.find(f"handoff:{opened.id}:done")
        assert done is not None
        done.trigger()
        assert await within(ended) == ("done", "tray")
        changed = expect(desk.ui.bridge.handoffs_changed.changed)
        core.handoffs.drop(opened.id)
        await within(changed)
        assert tray.state() is TrayState.NO_BROWSER
        tray.menu.aboutToShow.emit()
        assert tray.find(f"handoff:{opened.id}") is None

        changed = expect(desk.ui.bridge.handoffs_changed.changed)
        second, second_ended = begin(core.handoffs, "solve the CAPTCHA")
        await within(changed)
        tray.menu.aboutToShow.emit()
        cancel = tray.find(f"handoff:{second.id}:cancelled")
        assert cancel is not None
        cancel.trigger()
        assert await within(second_ended) == ("cancelled", "tray")
        assert len(desk.ui.notifier.history) == 2  # one notification per handoff opened


async def test_the_dashboard_banner_ends_a_handoff_as_the_dashboard(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        core = desk.harness.core
        banner = desk.ui.dashboard.handoffs_banner
        desk.ui.dashboard.show()
        assert not banner.isVisible()
        changed = expect(desk.ui.bridge.handoffs_changed.changed)
        opened, ended = begin(core.handoffs)
        await within(changed)
        assert banner.isVisible()
        banner.rows[opened.id].done_button.click()
        assert await within(ended) == ("done", "dashboard")
        changed = expect(desk.ui.bridge.handoffs_changed.changed)
        core.handoffs.drop(opened.id)
        await within(changed)
        assert not banner.isVisible()
        desk.ui.dashboard.hide()
