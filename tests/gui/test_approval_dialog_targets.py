"""The approval dialog says what will be touched: each element with its picture, one that could
not be described said so, where a new tab or a navigation goes; the pending list and the
command log's page show it too (DESIGN §6)."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from tabrelay.approval.gate import ApprovalRequest
from tabrelay.store.commandlog import CommandEntry
from tabrelay.tools.targets import TargetView
from tabrelay.ui.approval_dialog import PICTURE_SIZE, ApprovalDialog
from tabrelay.ui.approvals_page import PendingModel
from tabrelay.ui.commands_page import CommandsModel, matches


def jpeg(width: int, height: int) -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#E8710A"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert image.save(buffer, "JPEG")
    return bytes(data.data())


BUY = TargetView(
    "ref",
    "e2",
    "click",
    role="button",
    name="Buy now",
    text="Buy now",
    frame="main frame",
    picture=jpeg(360, 220),
)
PASSWORD = TargetView(
    "fields.0.ref",
    "e5",
    "fill in",
    role="textbox",
    name="Pass\u202eword",
    text="Your password",
    frame="frame http://127.0.0.1:8000/login.html",
    kind="password",
)
STALE = TargetView("fields.1.ref", "e9", "fill in", problem="ref e9 is from an earlier page")


def request(**changes: object) -> ApprovalRequest:
    fields: dict[str, object] = {
        "id": 1,
        "client": "cursor",
        "tool": "browser_click",
        "arguments": {"ref": "e2"},
        "origin": "https://shop.example",
        "tab_title": "Checkout",
        "tab_id": 7,
        "timeout": 60.0,
        "targets": (BUY,),
    }
    fields.update(changes)
    return ApprovalRequest(**fields)  # type: ignore[arg-type]


def test_the_dialog_shows_the_element_and_its_picture(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    [text] = dialog.target_texts
    assert text.text() == "e2 — button “Buy now”\nin the main frame"
    assert text.isVisible()
    [picture] = dialog.target_pictures
    pixmap = picture.pixmap()
    assert not pixmap.isNull() and picture.isVisible()
    # Scaled down to fit, its shape kept (360 × 220 → 240 × 146).
    assert (pixmap.width(), pixmap.height()) == (PICTURE_SIZE[0], 146)
    assert '"ref": "e2"' in dialog.arguments.toPlainText()  # the arguments stay, in full


def test_a_field_an_unknown_element_and_the_rest_are_each_said(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(
        request(tool="browser_fill_form", targets=(PASSWORD, STALE), unnamed_targets=3)
    )
    qtbot.addWidget(dialog)
    dialog.show()
    field, stale, more = (label.text() for label in dialog.target_texts)
    assert field == (
        "e5 — textbox “Pass\\u202eword”\n"  # the page chose the name: spelled out
        "password field — what it holds is never shown\n"
        "text: “Your password”\n"
        "in the frame http://127.0.0.1:8000/login.html"
    )
    assert stale == "e9 — could not be described (ref e9 is from an earlier page)"
    assert more == "… and 3 more elements"
    assert dialog.target_pictures == []


def test_a_broken_picture_is_left_out(qtbot: QtBot) -> None:
    broken = TargetView("ref", "e2", "click", role="button", name="Buy", picture=b"\xff\xd8no")
    dialog = ApprovalDialog(request(targets=(broken,)))
    qtbot.addWidget(dialog)
    assert dialog.target_pictures == [] and len(dialog.target_texts) == 1


def test_no_elements_no_section(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request(tool="browser_evaluate", targets=()))
    qtbot.addWidget(dialog)
    assert dialog.targets_area is None and dialog.target_texts == []


def test_a_new_tab_shows_where_it_goes_not_no_particular_site(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(
        request(
            tool="browser_new_tab",
            arguments={"url": "HTTPS://Example.ORG./a"},
            origin=None,
            tab_title=None,
            tab_id=None,
            targets=(),
            destination="https://example.org",
        )
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.origin_label.text() == "https://example.org"
    assert "new tab opens" in dialog.origin_note.text()
    assert dialog.destination_label.isHidden()


def test_a_navigation_shows_the_site_it_leaves_and_the_one_it_goes_to(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(
        request(
            tool="browser_navigate",
            arguments={"url": "https://example.org/next"},
            targets=(),
            destination="https://example.org",
        )
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.origin_label.text() == "https://shop.example"
    assert dialog.destination_label.text() == "→ https://example.org"
    assert dialog.destination_label.isVisible() and dialog.destination_note.isVisible()
    assert dialog.destination_label.font().pointSizeF() == dialog.origin_label.font().pointSizeF()


def test_the_pending_list_and_the_command_log_show_what_is_touched() -> None:
    pending = PendingModel(clock=lambda: 0.0)
    pending.set_requests(
        [
            request(targets=(BUY, PASSWORD), unnamed_targets=1),
            request(id=2, tool="browser_new_tab", targets=(), destination="https://example.org"),
        ]
    )
    column = PendingModel.COLUMNS.index("Touches")
    assert pending.data(pending.index(0, column)) == 'e2: button "Buy now", in the main frame (+2)'
    assert pending.data(pending.index(1, column)) == "goes to https://example.org"

    entry = CommandEntry(
        time=0.0,
        client="cursor",
        tool="browser_click",
        arguments='{"ref": "e2"}',
        decision="approved once by the person",
        status="ok",
        duration_ms=3.0,
        targets=BUY.describe(),
        id=1,
    )
    commands = CommandsModel()
    commands.set_entries([entry])
    column = CommandsModel.COLUMNS.index("Touches")
    assert commands.data(commands.index(0, column)) == BUY.describe()
    tooltip = commands.data(commands.index(0, column), Qt.ItemDataRole.ToolTipRole)
    assert tooltip == BUY.describe()
    assert matches(entry, "buy now")
