"""The approval dialog and its queue, driven as a person would (DESIGN §6, THREATS A3, A5)."""

from __future__ import annotations

import asyncio
import time

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.conftest import expect, unlocked, until, within
from tabrelay.approval.effects import Effect, Kind
from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.approval.plans import draft_of
from tabrelay.approval.policy import offers_always
from tabrelay.ui.approval_dialog import ALLOW_DELAY, ApprovalDialog, DialogApprover


def gone(dialog: ApprovalDialog) -> bool:
    """Closed: hidden, or already deleted."""
    return not shiboken6.isValid(dialog) or not dialog.isVisible()


def request(tool: str = "browser_navigate", number: int = 1, **changes: object) -> ApprovalRequest:
    fields: dict[str, object] = {
        "id": number,
        "client": "cursor",
        "tool": tool,
        "arguments": {"url": "https://example.org/next"},
        "origin": "https://example.com",
        "tab_title": "Example Domain",
        "tab_id": 7,
        "browser_name": "Chromium 156",
        "client_reported": "Cursor 1.2",
        "offers_always": offers_always(tool),
        "timeout": 60.0,
    }
    fields.update(changes)
    return ApprovalRequest(**fields)  # type: ignore[arg-type]


def test_the_dialog_shows_who_what_where_with_the_real_origin_large(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.headline.text() == "cursor wants to navigate"
    assert dialog.origin_label.text() == "https://example.com"
    assert dialog.origin_label.font().pointSizeF() > dialog.font().pointSizeF() * 1.3
    assert "as the browser reports it" in dialog.origin_note.text()
    assert "“Cursor 1.2” (self-reported)" in dialog.client_label.text()
    assert dialog.tab_label.text() == "“Example Domain” · tab 7 · Chromium 156"
    assert '"url": "https://example.org/next"' in dialog.arguments.toPlainText()
    assert "https://example.com, for cursor only" in dialog.scope_label.text()


def test_deny_has_the_focus_and_is_the_default_button(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.focusWidget() is dialog.deny_button
    assert dialog.deny_button.isDefault()
    assert not any(b.isDefault() or b.autoDefault() for b in dialog.allow_buttons)


async def test_allow_wakes_up_only_after_the_delay_and_an_early_enter_denies(
    qtbot: QtBot,
) -> None:
    assert 0.5 <= ALLOW_DELAY <= 1.0
    dialog = ApprovalDialog(request(), allow_delay=0.4)
    qtbot.addWidget(dialog)
    ready = expect(dialog.allow_unlocked)
    answers: list[Choice] = []
    dialog.answered.connect(answers.append)
    shown_at = time.monotonic()
    dialog.show()

    assert not any(b.isEnabled() for b in dialog.allow_buttons)
    qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
    dialog.answer(Choice.ALLOW_ONCE)  # even a programmatic answer is refused this early
    assert answers == []
    await within(ready)
    assert time.monotonic() - shown_at >= 0.35
    assert all(b.isEnabled() for b in dialog.allow_buttons)

    # A keystroke meant for another window: Enter presses Deny, whatever has the focus.
    second = ApprovalDialog(request(number=2), allow_delay=0.4)
    qtbot.addWidget(second)
    second.answered.connect(answers.append)
    second.show()
    qtbot.keyClick(second, Qt.Key.Key_Return)
    assert answers == [Choice.DENY]


def test_escape_and_closing_the_window_deny(qtbot: QtBot) -> None:
    answers: list[Choice] = []
    for close in (
        lambda d: qtbot.keyClick(d, Qt.Key.Key_Escape),
        lambda d: d.close(),
    ):
        dialog = ApprovalDialog(request())
        qtbot.addWidget(dialog)
        dialog.answered.connect(answers.append)
        dialog.show()
        close(dialog)
    assert answers == [Choice.DENY, Choice.DENY]


def test_always_is_not_offered_for_evaluate_upload_or_cdp(qtbot: QtBot) -> None:
    for tool in ("browser_evaluate", "browser_upload_file", "browser_cdp"):
        dialog = ApprovalDialog(request(tool))
        qtbot.addWidget(dialog)
        dialog.show()
        assert dialog.always_button.isHidden(), tool
        dialog._enable_allow()
        dialog.answer(Choice.ALLOW_ALWAYS)  # not even by a forged click
        assert not dialog._done
    navigate = ApprovalDialog(request("browser_navigate"))
    qtbot.addWidget(navigate)
    navigate.show()
    assert navigate.always_button.isVisible()


def test_arguments_are_shown_in_full_with_bidi_and_control_characters_spelled_out(
    qtbot: QtBot,
) -> None:
    text = "pay \u202emoc.live\u202c now\u200b" + "x" * 10_000 + "\u0085end\u2028"
    dialog = ApprovalDialog(
        request(
            "browser_type",
            arguments={"text": text, "note": "line one\nline two"},
            tab_title="Bank \u202eknab",
        )
    )
    qtbot.addWidget(dialog)
    dialog.resize(700, 500)
    dialog.show()
    shown = dialog.arguments.toPlainText()
    assert "\u202e" not in shown and "\u200b" not in shown and "\u0085" not in shown
    assert "pay \\u202emoc.live\\u202c now\\u200b" in shown
    assert "\\u0085end\\u2028" in shown
    assert "x" * 10_000 in shown  # nothing cut
    assert '"note": "line one\\nline two"' in shown  # a newline cannot push text out of view
    assert dialog.arguments.verticalScrollBar().maximum() > 0  # it scrolls to the end
    assert "Bank \\u202eknab" in dialog.tab_label.text()


def test_the_countdown_says_when_silence_becomes_a_deny(qtbot: QtBot) -> None:
    now = [1000.0]
    dialog = ApprovalDialog(request(created_at=1000.0, timeout=60.0), clock=lambda: now[0])
    qtbot.addWidget(dialog)
    assert dialog.countdown.text() == "Denied automatically in 60 s"
    now[0] = 1042.5
    dialog._update_countdown()
    assert dialog.countdown.text() == "Denied automatically in 18 s"


async def test_one_dialog_at_a_time_with_the_queue_count_and_answers_in_order(
    qtbot: QtBot,
) -> None:
    approver = DialogApprover(allow_delay=0.01)
    shown = expect(approver.dialog_shown)
    first = asyncio.ensure_future(approver.decide(request(number=1)))
    (dialog,) = await within(shown)
    second = asyncio.ensure_future(approver.decide(request("browser_click", number=2)))
    third = asyncio.ensure_future(approver.decide(request("browser_type", number=3)))
    await asyncio.sleep(0)  # let both reach the queue (no waiting on time)
    assert approver.current is dialog
    assert dialog.queue_badge.text() == "2 more waiting" and dialog.queue_badge.isVisible()

    next_shown = expect(approver.dialog_shown)
    await unlocked(dialog)
    qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
    assert await within(first) is Choice.ALLOW_ONCE
    (dialog2,) = await within(next_shown)
    assert dialog2.request.id == 2
    assert gone(dialog)
    assert dialog2.queue_badge.text() == "1 more waiting"

    next_shown = expect(approver.dialog_shown)
    qtbot.mouseClick(dialog2.deny_button, Qt.MouseButton.LeftButton)
    assert await within(second) is Choice.DENY
    (dialog3,) = await within(next_shown)
    assert dialog3.request.id == 3 and dialog3.queue_badge.isHidden()
    approver.deny_all()
    assert await within(third) is Choice.DENY
    assert approver.current is None


async def test_a_withdrawn_request_closes_its_dialog_and_the_next_one_shows(
    qtbot: QtBot,
) -> None:
    approver = DialogApprover(allow_delay=0.01)
    shown = expect(approver.dialog_shown)
    first = asyncio.ensure_future(approver.decide(request(number=1)))
    (dialog,) = await within(shown)
    second = asyncio.ensure_future(approver.decide(request(number=2)))
    await asyncio.sleep(0)
    next_shown = expect(approver.dialog_shown)
    first.cancel()  # the gate's timeout, or the MCP client cancelled the call
    (dialog2,) = await within(next_shown)
    assert first.cancelled()
    assert gone(dialog)
    assert dialog2.request.id == 2 and dialog2.isVisible()
    second.cancel()
    await asyncio.gather(second, return_exceptions=True)
    assert approver.current is None and gone(dialog2)


async def test_an_unseen_dialog_raises_a_notification_signal(qtbot: QtBot) -> None:
    approver = DialogApprover(allow_delay=0.01, notice_delay=0.05)
    shown = expect(approver.dialog_shown)
    unseen = expect(approver.left_unseen)
    call = asyncio.ensure_future(approver.decide(request()))
    (dialog,) = await within(shown)
    dialog.showMinimized()
    (seen_request,) = await within(unseen)
    assert seen_request.tool == "browser_navigate"
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)


async def test_a_flood_of_requests_shows_one_dialog_with_the_count(qtbot: QtBot) -> None:
    approver = DialogApprover(allow_delay=0.01)
    shown: list[ApprovalDialog] = []
    approver.dialog_shown.connect(shown.append)
    calls = [asyncio.ensure_future(approver.decide(request(number=n))) for n in range(1, 51)]
    await until(lambda: approver.waiting == 49, message="the queue fills")
    visible = [d for d in QApplication.topLevelWidgets() if isinstance(d, ApprovalDialog)]
    assert [d for d in visible if d.isVisible()] == shown  # one at a time
    assert len(shown) == 1 and shown[0].queue_badge.text() == "49 more waiting"
    approver.deny_all()
    assert set(await within(asyncio.gather(*calls))) == {Choice.DENY}
    assert approver.current is None and approver.waiting == 0
    assert len(shown) == 1  # denying them all flashes no further dialog


def test_a_consequential_effect_is_said_in_words_and_paying_is_allowed_only_once(
    qtbot: QtBot,
) -> None:
    """Issue 25: what the click will most likely do, and why, above everything else; paying
    gets no standing rule from here."""
    pay = Effect(Kind.PAY, "button “Place order” in a form with card number field")
    dialog = ApprovalDialog(
        request("browser_click", arguments={"ref": "e12"}, effect=pay, offers_session=False)
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.effect_label.isVisible()
    assert dialog.effect_label.text() == (
        "This click will probably PLACE AN ORDER OR PAY on https://example.com: button “Place "
        "order” in a form with card number field"
    )
    assert dialog.once_button.isVisible()
    assert not dialog.session_button.isVisible() and not dialog.always_button.isVisible()
    assert "Only once" in dialog.scope_label.text()


def test_sending_may_be_allowed_for_the_session_and_a_routine_click_says_nothing_more(
    qtbot: QtBot,
) -> None:
    send = Effect(Kind.SEND, "button “Send”")
    dialog = ApprovalDialog(request("browser_click", arguments={"ref": "e3"}, effect=send))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.session_button.isVisible() and dialog.always_button.isVisible()
    assert "(send) on https://example.com" in dialog.scope_label.text()
    routine = ApprovalDialog(request("browser_click", arguments={"ref": "e3"}))
    qtbot.addWidget(routine)
    routine.show()
    assert not routine.effect_label.isVisible()


def test_leaving_for_another_site_shows_the_whole_address(qtbot: QtBot) -> None:
    out = "https://evil.example/record?exfil=card-4242#more"
    dialog = ApprovalDialog(request(leaving=out, destination="https://evil.example"))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.destination_label.text() == f"→ {out}"


async def test_a_task_s_plan_is_approved_as_the_person_edits_it(qtbot: QtBot) -> None:
    """One dialog for a whole task: the agent's purpose in its own words, its sites (untick
    one, add one), its actions and its time; approving gives the plan as the person left it."""
    draft = draft_of("Reorder my usual tea", ["https://shop.example", "https://mail.example"],
                     ["click", "type"], 60)  # fmt: skip
    approver = DialogApprover(allow_delay=0.2)
    shown = expect(approver.dialog_shown)
    asked = asyncio.ensure_future(
        approver.decide_plan(request("browser_request_access", plan=draft, tab_id=None))
    )
    (dialog,) = await within(shown, 5)
    assert dialog.plan_purpose.text() == "“Reorder my usual tea” (the agent's own words)"
    assert dialog.once_button.text() == "Approve the plan"
    assert not dialog.session_button.isVisible() and not dialog.always_button.isVisible()
    dialog.plan_sites.item(1).setCheckState(Qt.CheckState.Unchecked)  # not the mail
    dialog.plan_new_site.setText("docs.example")
    dialog._add_plan_site()
    dialog.plan_minutes.setCurrentIndex(dialog.plan_minutes.findData(15))
    await unlocked(dialog)
    qtbot.mouseClick(dialog.once_button, Qt.MouseButton.LeftButton)
    approved = await within(asked, 5)
    assert approved is not None
    assert approved.sites == ("https://shop.example", "https://docs.example")
    assert (approved.minutes, approved.actions, approved.purpose) == (
        15,
        ("click", "type"),
        "Reorder my usual tea",
    )


async def test_denying_a_plan_gives_no_plan(qtbot: QtBot) -> None:
    draft = draft_of("Pay my bills", ["https://bank.example"], [], 60)
    approver = DialogApprover(allow_delay=0.2)
    shown = expect(approver.dialog_shown)
    asked = asyncio.ensure_future(
        approver.decide_plan(request("browser_request_access", plan=draft, tab_id=None))
    )
    (dialog,) = await within(shown, 5)
    qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    assert await within(asked, 5) is None
