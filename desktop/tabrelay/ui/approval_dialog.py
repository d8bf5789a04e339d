"""The approval dialog of DESIGN §6 and the approver that queues requests for it.

A native window of this process (an agent driving the browser cannot click it) shows who asks
(the client's token name; its clientInfo marked self-reported), the tool, the tab's title and
its real origin as the browser reports it, where a navigation goes, each element the call will
touch (role, name, text, frame, and a small picture of it while it is outlined in the page), and
the arguments in full with hidden characters spelled out. **Deny** has the focus and is the
default button, so a stray Enter denies; the Allow buttons wake up only after ``allow_delay``.
One dialog at a time: the rest queue and the dialog says how many wait. The gate owns the
timeout and cancels ``decide``; the dialog then closes itself. The gate, not this module, turns
a choice into a rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QCloseEvent,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QPixmap,
    QShowEvent,
    QTextOption,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.approval.plans import PlanDraft, edited
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.results import plain
from tabrelay.tools.targets import TargetView
from tabrelay.ui.icons import app_icon
from tabrelay.ui.rule_dialog import site_origin
from tabrelay.ui.text import arguments_text, visible
from tabrelay.ui.windows import Retired, bring_to_front, show_unasked

logger = logging.getLogger(__name__)

ALLOW_DELAY = 0.8  # seconds; DESIGN §6 asks for about half a second, THREATS A5 about one
NOTICE_DELAY = 1.5  # seconds before "is the dialog seen?" is checked for a notification
PICTURE_SIZE = (240, 150)  # logical pixels at most for an element's picture


# What the effect's sentence calls each tool's action: "This click will probably …".
ACTION_NOUNS = {
    "browser_click": "click",
    "browser_type": "typing",
    "browser_fill_form": "form filling",
    "browser_select_option": "choice",
    "browser_press_key": "key press",
    "browser_handle_dialog": "answer",
    "browser_upload_file": "upload",
    "browser_evaluate": "script",
    "browser_cdp": "command",
    "browser_run_recipe": "recipe",
    "browser_page_tool": "call of the page's tool",
}


def _duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{minutes} minutes"
    return f"{hours} h" + (f" {rest} min" if rest else "")


def tool_title(tool: str) -> str:
    spec = BY_NAME.get(tool)
    return spec.title.lower() if spec else tool


class ApprovalDialog(QDialog):
    """One request. ``answered`` carries the Choice; the approver owns the lifecycle."""

    answered = Signal(object)
    allow_unlocked = Signal()  # the Allow buttons woke up

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        waiting: int = 0,
        allow_delay: float = ALLOW_DELAY,
        clock: Callable[[], float] = time.time,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.request = request
        self.allow_delay = allow_delay
        self._clock = clock
        self._done = False
        self.setWindowTitle("Allow this agent action? — Tabrelay")
        self.setWindowIcon(app_icon())
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self.setMinimumWidth(640)

        # --- header: who wants what, and how many more wait --------------------------------
        who = visible(request.client)
        self.headline = QLabel(f"{who} wants to {visible(tool_title(request.tool))}", self)
        headline_font = QFont(self.font())
        headline_font.setPointSizeF(headline_font.pointSizeF() * 1.35)
        headline_font.setBold(True)
        self.headline.setFont(headline_font)
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.queue_badge = QLabel(self)
        self.queue_badge.setStyleSheet(
            "background: #E8710A; color: white; border-radius: 9px; padding: 2px 9px;"
            "font-weight: bold;"
        )
        header = QHBoxLayout()
        header.addWidget(self.headline, 1)
        header.addWidget(self.queue_badge, 0, Qt.AlignmentFlag.AlignTop)

        # --- the site, large: what the browser reports, not what the agent says -------------
        self.origin_label = QLabel(self)
        self.origin_label.setTextFormat(Qt.TextFormat.PlainText)
        origin_font = QFont(self.font())
        origin_font.setPointSizeF(origin_font.pointSizeF() * 1.5)
        origin_font.setBold(True)
        self.origin_label.setFont(origin_font)
        self.origin_label.setWordWrap(True)
        self.origin_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.origin_note = QLabel(self)
        self.origin_note.setStyleSheet("color: palette(mid);")
        self.destination_label = QLabel(self)
        self.destination_label.setTextFormat(Qt.TextFormat.PlainText)
        self.destination_label.setFont(origin_font)
        self.destination_label.setWordWrap(True)
        self.destination_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.destination_note = QLabel(
            "where the tab goes, read from the address as the browser will read it", self
        )
        self.destination_note.setStyleSheet("color: palette(mid);")
        going = request.tab_id is not None and (
            request.destination is not None or request.leaving is not None
        )
        if going:
            # The whole address of another site: its query and fragment can carry data out.
            where = request.leaving or request.destination or ""
            self.destination_label.setText(f"→ {visible(where)}")
        self.destination_label.setVisible(going)
        self.destination_note.setVisible(going)
        if request.origin:
            self.origin_label.setText(visible(request.origin))
            self.origin_note.setText("the tab's site, as the browser reports it")
        elif request.tab_id is not None:
            self.origin_label.setText("a page without a web address")
            self.origin_note.setText("about:blank, a file or a browser page")
        elif request.destination is not None:
            self.origin_label.setText(visible(request.destination))
            self.origin_note.setText(
                "what the new tab opens, read from the address as the browser will read it"
            )
        else:
            self.origin_label.setText("no particular site")
            self.origin_note.setText("this tool does not act on one tab")

        # --- what it will most likely do, when that is consequential -------------------------
        self.effect_label = QLabel(self)
        self.effect_label.setTextFormat(Qt.TextFormat.PlainText)
        self.effect_label.setWordWrap(True)
        self.effect_label.setStyleSheet(
            "background: #FCE8E6; color: #A50E0E; border: 1px solid #D93025; border-radius: 4px;"
            "padding: 8px; font-weight: bold;"
        )
        if request.asks_for_effect:
            assert request.effect is not None
            site = request.origin or request.destination
            sentence = request.effect.sentence(ACTION_NOUNS.get(request.tool, "call"), site)
            self.effect_label.setText(visible(plain(sentence)))
        self.effect_label.setVisible(request.asks_for_effect)

        site_frame = QFrame(self)
        site_frame.setObjectName("site")
        site_frame.setFrameShape(QFrame.Shape.StyledPanel)
        site_layout = QVBoxLayout(site_frame)
        site_layout.addWidget(self.origin_label)
        site_layout.addWidget(self.origin_note)
        site_layout.addWidget(self.destination_label)
        site_layout.addWidget(self.destination_note)

        # --- the facts ----------------------------------------------------------------------
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        self.client_label = self._fact(grid, 0, "Agent", self._client_text(request))
        spec = BY_NAME.get(request.tool)
        tool_text = f"{request.tool} — {spec.title}" if spec else request.tool
        self.tool_label = self._fact(grid, 1, "Tool", visible(tool_text))
        self.tab_label = self._fact(grid, 2, "Tab", self._tab_text(request))

        # --- what it will touch: each element, described and pictured from the page ----------
        self.target_texts: list[QLabel] = []
        self.target_pictures: list[QLabel] = []
        self.targets_area = self._targets(request)

        self.arguments = QPlainTextEdit(self)
        self.arguments.setReadOnly(True)
        self.arguments.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.arguments.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.arguments.setPlainText(arguments_text(request.arguments))
        self.arguments.setMinimumHeight(120)
        self.arguments.setMaximumHeight(260)
        self.arguments.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

        # --- the choices ----------------------------------------------------------------------
        site = visible(request.origin) if request.origin else "every site"
        if not request.offers_session:
            scope = (
                "Only once: a standing rule to let agents do this is never made here (only "
                "`tabrelay policy set` makes one)."
            )
        elif request.asks_for_effect:
            assert request.effect is not None
            scope = (
                f"“For this session” and “Always” allow {request.tool} and what it does here "
                f"({request.effect.kind.value.replace('_', ' ')}) on {site}, for {who} only."
            )
        else:
            scope = (
                f"“For this session” and “Always” allow {request.tool} on {site}, for {who} only."
            )
        self.scope_label = QLabel(scope, self)
        self.scope_label.setWordWrap(True)
        self.scope_label.setTextFormat(Qt.TextFormat.PlainText)
        self.countdown = QLabel(self)
        self.deny_button = QPushButton("Deny", self)
        self.once_button = QPushButton("Allow once", self)
        self.session_button = QPushButton("Allow for this session", self)
        self.always_button = QPushButton("Always allow", self)
        self.allow_buttons = (self.once_button, self.session_button, self.always_button)
        self.deny_button.setDefault(True)
        self.deny_button.setAutoDefault(True)
        for button in self.allow_buttons:
            button.setAutoDefault(False)
            button.setEnabled(False)
        if not request.offers_always or not request.offers_session:
            # DESIGN §6: never "always" for evaluate, upload or raw CDP, nor a standing rule
            # from here for paying, moving money or granting an app access.
            self.always_button.hide()
        if not request.offers_session:
            self.session_button.hide()
        self.deny_button.clicked.connect(lambda: self.answer(Choice.DENY))
        self.once_button.clicked.connect(lambda: self.answer(Choice.ALLOW_ONCE))
        self.session_button.clicked.connect(lambda: self.answer(Choice.ALLOW_SESSION))
        self.always_button.clicked.connect(lambda: self.answer(Choice.ALLOW_ALWAYS))
        buttons = QHBoxLayout()
        buttons.addWidget(self.countdown, 1)
        buttons.addWidget(self.deny_button)
        for button in self.allow_buttons:
            buttons.addWidget(button)

        # --- a task's plan: its sites and duration, the person's to change -------------------
        self.plan_area = self._plan(request.plan) if request.plan is not None else None

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.effect_label)
        layout.addWidget(site_frame)
        layout.addLayout(grid)
        if self.targets_area is not None:
            layout.addWidget(QLabel("It will touch (outlined in the page while you decide):", self))
            layout.addWidget(self.targets_area)
        if self.plan_area is not None:
            layout.addWidget(self.plan_area)
        layout.addWidget(QLabel("Arguments, in full:", self))
        layout.addWidget(self.arguments, 1)
        layout.addWidget(self.scope_label)
        layout.addLayout(buttons)

        self._allow_timer = QTimer(self)
        self._allow_timer.setSingleShot(True)
        self._allow_timer.timeout.connect(self._enable_allow)
        self._tick = QTimer(self)
        self._tick.setInterval(250)
        self._tick.timeout.connect(self._update_countdown)
        self.set_waiting(waiting)
        self._update_countdown()

    def _plan(self, draft: PlanDraft) -> QFrame:
        """The plan the agent asks for: its purpose in its own words, each site it names
        (untick to leave one out, or add one), the actions, and how long it lasts."""
        self.once_button.setText("Approve the plan")
        self.session_button.hide()
        self.always_button.hide()
        self.origin_label.setText(f"a task on {len(draft.sites)} site(s)")
        self.origin_note.setText("the sites the agent names, below: yours to change")
        self.scope_label.setText(
            "Until the plan ends (its session ends, its time is up, or you revoke it from the "
            "dashboard), the actions below run on these sites without asking. Paying, sending, "
            "deleting and other consequential actions still ask; other sites ask."
        )
        frame = QFrame(self)
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(frame)
        self.plan_purpose = purpose = QLabel(
            visible(f"“{draft.purpose}” (the agent's own words)"), frame
        )
        purpose.setTextFormat(Qt.TextFormat.PlainText)
        purpose.setWordWrap(True)
        self.plan_sites = QListWidget(frame)
        for site in draft.sites:
            item = QListWidgetItem(visible(site), self.plan_sites)
            item.setData(Qt.ItemDataRole.UserRole, site)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
        self.plan_sites.setMaximumHeight(120)
        self.plan_new_site = QLineEdit(frame)
        self.plan_new_site.setPlaceholderText("another site, e.g. https://example.com")
        add = QPushButton("Add", frame)
        add.clicked.connect(self._add_plan_site)
        self.plan_minutes = QComboBox(frame)
        for minutes in sorted({15, 30, 60, 120, 240, 480, draft.minutes}):
            self.plan_minutes.addItem(_duration(minutes), minutes)
        self.plan_minutes.setCurrentIndex(self.plan_minutes.findData(draft.minutes))
        grid.addWidget(QLabel("Task:", frame), 0, 0)
        grid.addWidget(purpose, 0, 1, 1, 2)
        grid.addWidget(QLabel("Sites:", frame), 1, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.plan_sites, 1, 1, 1, 2)
        grid.addWidget(self.plan_new_site, 2, 1)
        grid.addWidget(add, 2, 2)
        grid.addWidget(QLabel("Actions:", frame), 3, 0)
        grid.addWidget(QLabel(", ".join(a.replace("_", " ") for a in draft.actions), frame), 3, 1)
        grid.addWidget(QLabel("For:", frame), 4, 0)
        grid.addWidget(self.plan_minutes, 4, 1)
        return frame

    def _add_plan_site(self) -> None:
        try:
            site = site_origin(self.plan_new_site.text())
        except ValueError:
            site = None
        if site is None:
            self.plan_new_site.setStyleSheet("border: 1px solid #B3261E;")
            return
        self.plan_new_site.setStyleSheet("")
        self.plan_new_site.clear()
        item = QListWidgetItem(site, self.plan_sites)
        item.setData(Qt.ItemDataRole.UserRole, site)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked)

    def approved_plan(self) -> PlanDraft | None:
        """The plan as the person left it: ticked sites, chosen duration (None: no plan)."""
        draft = self.request.plan
        if draft is None or self.plan_area is None:
            return None
        items = (self.plan_sites.item(i) for i in range(self.plan_sites.count()))
        sites = [
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        ]
        return edited(draft, sites=sites, minutes=int(self.plan_minutes.currentData()))

    @staticmethod
    def _client_text(request: ApprovalRequest) -> str:
        text = f"{visible(request.client)} (its Tabrelay client name)"
        if request.client_reported:
            text += f" — says it is “{visible(request.client_reported)}” (self-reported)"
        return text

    @staticmethod
    def _tab_text(request: ApprovalRequest) -> str:
        if request.tab_id is None:
            return f"none · {visible(request.browser_name)}" if request.browser_name else "none"
        title = visible(request.tab_title) if request.tab_title else "(untitled)"
        where = f" · {visible(request.browser_name)}" if request.browser_name else ""
        return f"“{title}” · tab {request.tab_id}{where}"

    def _targets(self, request: ApprovalRequest) -> QScrollArea | None:
        """One row per element: its picture, if the page gave one, and what it is."""
        if not request.targets:
            return None
        inner = QWidget(self)
        rows = QVBoxLayout(inner)
        rows.setContentsMargins(0, 0, 0, 0)
        for target in request.targets:
            row = QHBoxLayout()
            picture = self._picture(target)
            if picture is not None:
                row.addWidget(picture, 0, Qt.AlignmentFlag.AlignTop)
            text = QLabel(self._target_text(target), inner)
            text.setTextFormat(Qt.TextFormat.PlainText)
            text.setWordWrap(True)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.target_texts.append(text)
            row.addWidget(text, 1, Qt.AlignmentFlag.AlignTop)
            rows.addLayout(row)
        if request.unnamed_targets:
            more = QLabel(f"… and {request.unnamed_targets} more elements", inner)
            self.target_texts.append(more)
            rows.addWidget(more)
        area = QScrollArea(self)
        area.setWidget(inner)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setMaximumHeight(PICTURE_SIZE[1] * 2 + 24)
        area.setMinimumHeight(min(PICTURE_SIZE[1] + 8, inner.sizeHint().height() + 8))
        return area

    def _picture(self, target: TargetView) -> QLabel | None:
        if target.picture is None:
            return None
        pixmap = QPixmap()
        if not pixmap.loadFromData(target.picture):
            return None
        if pixmap.width() > PICTURE_SIZE[0] or pixmap.height() > PICTURE_SIZE[1]:
            pixmap = pixmap.scaled(
                *PICTURE_SIZE,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        label = QLabel(self)
        label.setPixmap(pixmap)
        label.setFrameShape(QFrame.Shape.Box)
        label.setToolTip(f"{visible(target.given)} in the page, outlined")
        self.target_pictures.append(label)
        return label

    @staticmethod
    def _target_text(target: TargetView) -> str:
        """What the page says the element is; spelled out, since the page chose it."""
        if target.problem is not None:
            return f"{visible(target.given)} — could not be described ({visible(target.problem)})"
        what = visible(target.role or "element")
        if target.name:
            what += f" “{visible(target.name)}”"
        lines = [f"{visible(target.given)} — {what}"]
        if target.kind:
            lines.append(f"{visible(target.kind)} field — what it holds is never shown")
        if target.text and target.text != target.name:
            lines.append(f"text: “{visible(target.text)}”")
        lines.append(f"in the {visible(target.frame)}" if target.frame else "")
        return "\n".join(line for line in lines if line)

    def _fact(self, grid: QGridLayout, row: int, name: str, value: str) -> QLabel:
        label = QLabel(f"{name}:", self)
        label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        shown = QLabel(value, self)
        shown.setTextFormat(Qt.TextFormat.PlainText)
        shown.setWordWrap(True)
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(label, row, 0)
        grid.addWidget(shown, row, 1)
        return shown

    # --- timing ---------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._done and not self.allow_enabled:
            self._allow_timer.start(int(self.allow_delay * 1000))
        self._tick.start()
        self.deny_button.setFocus(Qt.FocusReason.ActiveWindowFocusReason)

    @property
    def allow_enabled(self) -> bool:
        return self.once_button.isEnabled()

    @Slot()
    def _enable_allow(self) -> None:
        for button in self.allow_buttons:
            button.setEnabled(True)
        self.allow_unlocked.emit()

    def seconds_left(self) -> int:
        left = self.request.created_at + self.request.timeout - self._clock()
        return max(0, int(left + 0.999))

    @Slot()
    def _update_countdown(self) -> None:
        self.countdown.setText(f"Denied automatically in {self.seconds_left()} s")

    def set_waiting(self, count: int) -> None:
        self.queue_badge.setText(f"{count} more waiting")
        self.queue_badge.setVisible(count > 0)

    # --- answers ----------------------------------------------------------------------------

    def answer(self, choice: Choice) -> None:
        if self._done:
            return
        if choice is not Choice.DENY and not self.allow_enabled:
            return  # a click or key that arrived before the Allow buttons woke up
        if choice is Choice.ALLOW_ALWAYS and not self.request.offers_always:
            return
        self._done = True
        self._stop()
        self.answered.emit(choice)

    def dismiss(self) -> None:
        """Close without an answer (the call was withdrawn or timed out)."""
        self._done = True
        self._stop()
        self.hide()

    def _stop(self) -> None:
        self._allow_timer.stop()
        self._tick.stop()

    def reject(self) -> None:  # Escape
        self.answer(Choice.DENY)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Return and Enter press the default button, which is Deny, whatever has the focus.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.answer(Choice.DENY)
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._done:
            self.answer(Choice.DENY)
        super().closeEvent(event)


@dataclass(eq=False)
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[Choice]
    plan: PlanDraft | None = None  # a plan as the person approved it


class DialogApprover(QObject):
    """The tray app's ``Approver``: one dialog at a time, the others queued (FIFO)."""

    dialog_shown = Signal(object)  # ApprovalDialog
    left_unseen = Signal(object)  # ApprovalRequest: the dialog is hidden or behind others

    def __init__(
        self,
        *,
        allow_delay: float = ALLOW_DELAY,
        notice_delay: float = NOTICE_DELAY,
        clock: Callable[[], float] = time.time,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.allow_delay = allow_delay
        self.notice_delay = notice_delay
        self._clock = clock
        self._queue: list[_Pending] = []
        self.current: ApprovalDialog | None = None
        self._current_item: _Pending | None = None
        self._retired = Retired()

    @property
    def waiting(self) -> int:
        """Unanswered requests queued behind the one on screen."""
        open_items = [i for i in self._queue if not i.future.done()]
        return len([i for i in open_items if i is not self._current_item])

    async def decide(self, request: ApprovalRequest) -> Choice:
        item = _Pending(request, asyncio.get_running_loop().create_future())
        await self._answer(item)
        return item.future.result()

    async def decide_plan(self, request: ApprovalRequest) -> PlanDraft | None:
        item = _Pending(request, asyncio.get_running_loop().create_future())
        await self._answer(item)
        return item.plan if item.future.result() is not Choice.DENY else None

    async def _answer(self, item: _Pending) -> None:
        self._queue.append(item)
        if self.current is None:
            self._show_next()
        else:
            self.current.set_waiting(self.waiting)
        try:
            await item.future
        finally:
            self._forget(item)

    def deny_all(self) -> None:
        """Answer every request with Deny (Pause agent access, or "Deny all")."""
        for item in list(self._queue):
            if not item.future.done():
                item.future.set_result(Choice.DENY)

    def bring_up(self) -> None:
        """Show the current dialog again (tray, notification, dashboard)."""
        if self.current is not None:
            bring_to_front(self.current)

    # --- the queue --------------------------------------------------------------------------

    def _show_next(self) -> None:
        if self.current is not None:
            return
        # Skip requests answered meanwhile (Deny all) whose decide() has not resumed yet.
        item = next((i for i in self._queue if not i.future.done()), None)
        if item is None:
            return
        dialog = ApprovalDialog(
            item.request,
            waiting=self.waiting - 1,
            allow_delay=self.allow_delay,
            clock=self._clock,
        )
        dialog.answered.connect(lambda choice: self._answered(item, choice))
        self.current, self._current_item = dialog, item
        show_unasked(dialog)
        self.dialog_shown.emit(dialog)
        # The dialog as context: no call once it is gone.
        QTimer.singleShot(int(self.notice_delay * 1000), dialog, lambda: self._check_seen(dialog))

    def _answered(self, item: _Pending, choice: Choice) -> None:
        if self.current is not None and self._current_item is item:
            item.plan = self.current.approved_plan()
        if not item.future.done():
            item.future.set_result(choice)
        # _forget runs again when decide() resumes; move on now so the answer feels immediate.
        with contextlib.suppress(ValueError):
            self._queue.remove(item)
        if self._current_item is item:
            self._close_current()
            self._show_next()

    def _forget(self, item: _Pending) -> None:
        with contextlib.suppress(ValueError):
            self._queue.remove(item)
        if self._current_item is item:
            self._close_current()
        self._show_next()
        if self.current is not None:
            self.current.set_waiting(self.waiting)

    def _close_current(self) -> None:
        dialog, self.current, self._current_item = self.current, None, None
        if dialog is not None:
            dialog.dismiss()
            self._retired.add(dialog)  # often inside its own button's click: no delete now

    def _check_seen(self, dialog: ApprovalDialog) -> None:
        if dialog is not self.current:
            return
        hidden = not dialog.isVisible() or dialog.isMinimized() or not dialog.isActiveWindow()
        if hidden:
            self.left_unseen.emit(dialog.request)
