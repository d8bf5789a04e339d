"""The dashboard's Recipes page: what is being recorded (agent sessions, the person's own
demonstrations), the recipes saved, and what to do with each.

A recording's steps show live while it grows; it can be saved under a name, with any typed text
made a parameter first (a secret one keeps no value), or forgotten. A saved recipe can be
exported as a Playwright script (a file only its owner can read), copied, shown as its file,
or deleted (its last revision stays in history). "Record what I do…" records the person in a
tab they pick until Stop. The recorder, the store and the demonstrations are handed in (not the
core) so the page runs over real ones without an app. Step text quotes pages: plain text only.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from PySide6.QtCore import QObject, Qt, SignalInstance, Slot
from PySide6.QtGui import QColor, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from tabrelay.config.files import atomic_write
from tabrelay.errors import TabrelayError
from tabrelay.recipes.export import export
from tabrelay.recipes.model import (
    Recipe,
    RecipeError,
    Step,
    check_name,
    check_param_name,
    param_name_from,
)
from tabrelay.recipes.recorder import Recorder, RecordingInfo
from tabrelay.recipes.store import RecipeStore
from tabrelay.ui.prompts import Confirm, ask, finished, save_file_name
from tabrelay.ui.recipe_dialogs import (
    ERROR_STYLE,
    FileDialog,
    NameDialog,
    TabChoice,
    TabPickerDialog,
)
from tabrelay.ui.table_model import ModelIndex, RowsModel, rows_view
from tabrelay.ui.tabs_page import relative_time
from tabrelay.ui.tasks import BackgroundTasks
from tabrelay.ui.text import one_line

Lang = Literal["python", "typescript"]
LANGS: dict[Lang, tuple[str, str, str]] = {
    # language → (what the person reads, file suffix, save dialog filter)
    "python": ("Python", ".py", "Python (*.py)"),
    "typescript": ("TypeScript", ".spec.ts", "TypeScript (*.ts)"),
}
LIVE_COLOUR = "#B3261E"
# Where a file should go: (title, suggested path, filters) → the path, or None if cancelled.
SavePath = Callable[[str, str, list[str]], Awaitable[str | None]]


class Demonstrations(Protocol):
    """What the page needs of ``tools.recorders.demonstration.Demonstrations``."""

    async def start(self, browser_id: str, tab_id: int) -> str: ...
    async def stop(self, recording_id: str) -> None: ...
    def active(self) -> list[tuple[str, str, int]]: ...


class RecordingsModel(RowsModel[RecordingInfo]):
    COLUMNS = ("Recording", "Steps", "Client", "Updated")

    def __init__(
        self, *, clock: Callable[[], float] = time.time, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._clock = clock

    def set_rows(self, rows: list[RecordingInfo]) -> None:
        self.replace_rows(rows, key=lambda r: r.id)

    def row_of(self, recording_id: str) -> int:
        return next((n for n, r in enumerate(self._rows) if r.id == recording_id), -1)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None:
            return None
        row, column = cell
        if role == Qt.ItemDataRole.DisplayRole:
            if column == "Recording":
                kind = "Your demonstration" if row.origin == "demonstration" else "Agent session"
                live = "● recording · " if row.live else ""
                where = f" · {one_line(row.start_url, 80)}" if row.start_url else ""
                return f"{live}{kind}{where}"
            if column == "Steps":
                return str(row.steps)
            if column == "Client":
                return one_line(row.client, 60) if row.client else "you"
            return relative_time(row.updated, self._clock())
        if role == Qt.ItemDataRole.ForegroundRole and column == "Recording" and row.live:
            return QColor(LIVE_COLOUR)
        return None


def params_text(recipe: Recipe) -> str:
    return ", ".join(f"{p.name} (secret)" if p.secret else p.name for p in recipe.params) or "—"


class RecipesModel(RowsModel[Recipe]):
    COLUMNS = ("Recipe", "Revision", "Steps", "Parameters")

    def set_rows(self, rows: list[Recipe]) -> None:
        self.replace_rows(rows, key=lambda r: (r.name, r.revision))

    def row_of(self, name: str) -> int:
        return next((n for n, r in enumerate(self._rows) if r.name == name), -1)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        recipe, column = cell
        if column == "Recipe":
            return recipe.name
        if column == "Revision":
            return str(recipe.revision)
        if column == "Steps":
            return str(len(recipe.steps))
        return one_line(params_text(recipe), 200)


class StepsModel(RowsModel[tuple[Step, str]]):
    """The selected recording's or recipe's steps, in order, with who did each and the
    parameter its text is (or will be saved as)."""

    COLUMNS = ("#", "Step", "By", "Parameter")

    def steps(self) -> list[Step]:
        return [step for step, _param in self._rows]

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.cell(index)
        if cell is None or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        (step, param), column = cell
        if column == "#":
            return str(index.row() + 1)
        if column == "Step":
            return one_line(step.describe(), 300 if role == Qt.ItemDataRole.DisplayRole else 2000)
        if column == "By":
            return "you" if step.by == "person" else "agent"
        return param


class RecipesPage(QWidget):
    def __init__(
        self,
        recorder: Recorder,
        store: RecipeStore,
        demonstrations: Demonstrations | None,
        changed: SignalInstance,
        tasks: BackgroundTasks,
        *,
        tabs: Callable[[], list[TabChoice]],
        confirm: Confirm | None = None,
        save_path: SavePath | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.recorder = recorder
        self.store = store
        self.demonstrations = demonstrations
        self.tasks = tasks
        self._tabs = tabs
        self._confirm = confirm or (lambda title, question: ask(self, title, question))
        self._save_path = save_path or (lambda t, s, f: save_file_name(self, t, s, f))
        # Parameters chosen for a recording's typed text, applied when it is saved:
        # recording id → step index → (parameter name, secret).
        self.chosen_params: dict[str, dict[int, tuple[str, bool]]] = {}
        self.exported: Path | None = None

        self.record_button = QPushButton("Record what I do…", self)
        self.record_button.setToolTip("Record your own steps in a tab as a recipe")
        self.stop_button = QPushButton("Stop recording", self)
        self.stop_button.setStyleSheet(f"color: {LIVE_COLOUR}; font-weight: bold;")
        self.message = QLabel(self)
        self.message.setObjectName("message")
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # errors quote names and pages
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(self.record_button)
        top.addWidget(self.stop_button)
        top.addWidget(self.message, 1)

        self.recordings = RecordingsModel(parent=self)
        self.recordings_view = rows_view(self.recordings, self)
        self.recipes = RecipesModel(parent=self)
        self.recipes_view = rows_view(self.recipes, self)
        for view in (self.recordings_view, self.recipes_view):
            view.setWordWrap(False)
            header = view.horizontalHeader()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            for column in range(1, 4):
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.problems = QLabel(self)
        self.problems.setTextFormat(Qt.TextFormat.PlainText)
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(ERROR_STYLE)
        lists = QWidget(self)
        lists_layout = QVBoxLayout(lists)
        lists_layout.setContentsMargins(0, 0, 0, 0)
        lists_layout.addWidget(QLabel("<b>Recordings</b> — agent sessions and your own", lists))
        lists_layout.addWidget(self.recordings_view, 1)
        lists_layout.addWidget(QLabel("<b>Saved recipes</b>", lists))
        lists_layout.addWidget(self.recipes_view, 1)
        lists_layout.addWidget(self.problems)

        self.steps = StepsModel(parent=self)
        self.steps_view = rows_view(self.steps, self)
        self.steps_view.setWordWrap(False)
        steps_header = self.steps_view.horizontalHeader()
        steps_header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        steps_header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.steps_title = QLabel("Select a recording or a recipe to see its steps.", self)
        self.steps_title.setTextFormat(Qt.TextFormat.PlainText)
        self.steps_title.setWordWrap(True)

        self.save_button = QPushButton("Save as recipe…", self)
        self.param_button = QPushButton("Make this a parameter…", self)
        self.param_button.setToolTip("Select a typing step: its text is asked for at each run")
        self.forget_button = QPushButton("Forget", self)
        self.recording_actions = self._bar(self.save_button, self.param_button, self.forget_button)
        self.export_py_button = QPushButton("Export Python…", self)
        self.export_ts_button = QPushButton("Export TypeScript…", self)
        self.copy_button = QPushButton("Copy script", self)
        copy_menu = QMenu(self.copy_button)
        self.copy_python = copy_menu.addAction("Python (Playwright)")
        self.copy_typescript = copy_menu.addAction("TypeScript (@playwright/test)")
        self.copy_button.setMenu(copy_menu)
        self.show_button = QPushButton("Show file", self)
        self.delete_button = QPushButton("Delete…", self)
        self.recipe_actions = self._bar(
            self.export_py_button,
            self.export_ts_button,
            self.copy_button,
            self.show_button,
            self.delete_button,
        )
        details = QWidget(self)
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.steps_title)
        details_layout.addWidget(self.steps_view, 1)
        details_layout.addWidget(self.recording_actions)
        details_layout.addWidget(self.recipe_actions)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(lists)
        splitter.addWidget(details)
        splitter.setSizes([480, 620])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        self.record_button.clicked.connect(lambda: self.record())
        self.stop_button.clicked.connect(lambda: self.stop_recording())
        self.save_button.clicked.connect(lambda: self.save_recording())
        self.param_button.clicked.connect(lambda: self.make_parameter())
        self.forget_button.clicked.connect(lambda: self.forget_recording())
        self.export_py_button.clicked.connect(lambda: self.export_recipe("python"))
        self.export_ts_button.clicked.connect(lambda: self.export_recipe("typescript"))
        self.copy_python.triggered.connect(lambda: self.copy_script("python"))
        self.copy_typescript.triggered.connect(lambda: self.copy_script("typescript"))
        self.show_button.clicked.connect(lambda: self.show_file())
        self.delete_button.clicked.connect(lambda: self.delete_recipe())
        self.recordings_view.selectionModel().selectionChanged.connect(self._recording_picked)
        self.recipes_view.selectionModel().selectionChanged.connect(self._recipe_picked)
        self.steps_view.selectionModel().selectionChanged.connect(self._update_buttons)
        changed.connect(self.refresh_recordings)
        self.refresh_recordings()
        self.refresh_recipes()

    def _bar(self, *buttons: QPushButton) -> QWidget:
        bar = QWidget(self)
        layout = QHBoxLayout(bar)
        layout.setContentsMargins(0, 0, 0, 0)
        for button in buttons:
            layout.addWidget(button)
        layout.addStretch()
        return bar

    # --- what is shown ----------------------------------------------------------------------

    @Slot()
    def refresh_recordings(self) -> None:
        """Re-read the recordings (and the selected one's steps, which may have grown)."""
        selected = self.selected_recording()
        self.recordings.set_rows(self.recorder.recordings())
        if selected is not None and self.selected_recording() is None:
            self.select_recording(selected.id)  # a reset loses the selection
        if selected is not None:
            self._show_recording_steps()  # grown, or gone
        active = bool(self._active())
        self.stop_button.setVisible(active)
        self.record_button.setVisible(self.demonstrations is not None)
        self.record_button.setEnabled(not active)

    @Slot()
    def refresh_recipes(self) -> None:
        selected = self.selected_recipe()
        try:
            recipes, problems = self.store.scan()
        except RecipeError as exc:
            recipes, problems = [], [exc.message]
        self.recipes.set_rows(recipes)
        if selected is not None and self.selected_recipe() is None:
            self.select_recipe(selected.name)
            if self.selected_recipe() is None:
                self._recipe_picked()  # it is gone
        self.problems.setText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_recipes()  # the command line may have saved or deleted one meanwhile

    def selected_recording(self) -> RecordingInfo | None:
        rows = self.recordings_view.selectionModel().selectedRows()
        return self.recordings.row_at(rows[0].row()) if rows else None

    def selected_recipe(self) -> Recipe | None:
        rows = self.recipes_view.selectionModel().selectedRows()
        return self.recipes.row_at(rows[0].row()) if rows else None

    def selected_step(self) -> int | None:
        rows = self.steps_view.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def select_recording(self, recording_id: str) -> None:
        row = self.recordings.row_of(recording_id)
        if row >= 0:
            self.recordings_view.selectRow(row)

    def select_recipe(self, name: str) -> None:
        row = self.recipes.row_of(name)
        if row >= 0:
            self.recipes_view.selectRow(row)

    @Slot()
    def _recording_picked(self) -> None:
        if self.selected_recording() is not None:
            self.recipes_view.clearSelection()
        self._show_recording_steps()

    @Slot()
    def _recipe_picked(self) -> None:
        recipe = self.selected_recipe()
        if recipe is None:
            if self.selected_recording() is None:
                self._show_steps("Select a recording or a recipe to see its steps.", [])
            return
        self.recordings_view.clearSelection()
        title = f"“{recipe.name}”, revision {recipe.revision}: {len(recipe.steps)} steps"
        rows = [(step, ", ".join(sorted(step.params())) or "—") for step in recipe.steps]
        self._show_steps(title, rows)

    def _show_recording_steps(self) -> None:
        recording = self.selected_recording()
        if recording is None:
            if self.selected_recipe() is None:
                self._show_steps("Select a recording or a recipe to see its steps.", [])
            return
        try:
            steps, params = self.recorder.steps(recording.id)
        except RecipeError as exc:  # forgotten meanwhile
            self._show_steps(exc.message, [])
            return
        secret = {p.name for p in params if p.secret}
        chosen = self.chosen_params.get(recording.id, {})
        rows = []
        for index, step in enumerate(steps):
            if index in chosen:
                name, is_secret = chosen[index]
                rows.append((step, f"{{{{{name}}}}}" + (" (secret)" if is_secret else "")))
            else:
                used = sorted(step.params())
                rows.append(
                    (step, ", ".join(n + (" (secret)" if n in secret else "") for n in used))
                )
        title = f"{len(steps)} steps"
        if recording.live:
            title += " — recording, steps appear as they happen"
        if recording.full:
            title += " — full: it takes no more steps"
        if recording.gaps:
            title += f" — {recording.gaps} action(s) could not be recorded; a replay skips them"
        self._show_steps(title, [(s, p or "—") for s, p in rows])

    def _show_steps(self, title: str, rows: list[tuple[Step, str]]) -> None:
        selected = self.selected_step()
        self.steps_title.setText(title)
        self.steps.replace_rows(rows, key=lambda r: r[0])
        if selected is not None and self.selected_step() is None and selected < len(rows):
            self.steps_view.selectRow(selected)
        self._update_buttons()

    @Slot()
    def _update_buttons(self) -> None:
        recording = self.selected_recording()
        self.recording_actions.setVisible(recording is not None)
        self.recipe_actions.setVisible(self.selected_recipe() is not None)
        if recording is not None:
            has_steps = self.steps.rowCount() > 0
            self.save_button.setEnabled(has_steps)
            index = self.selected_step()
            row = self.steps.row_at(index) if index is not None else None
            step = row[0] if row is not None else None
            self.param_button.setEnabled(step is not None and step.why_not_nameable() is None)
            demonstrating = any(r == recording.id for r, _b, _t in self._active())
            self.forget_button.setEnabled(not demonstrating)
            self.forget_button.setToolTip("Stop recording first" if demonstrating else "")

    def _active(self) -> list[tuple[str, str, int]]:
        return self.demonstrations.active() if self.demonstrations is not None else []

    def say(self, text: str, *, error: bool = False) -> None:
        self.message.setStyleSheet(ERROR_STYLE if error else "")
        self.message.setText(text)

    def _failed(self, error: TabrelayError) -> None:
        self.say(f"{error.title}: {error.message}", error=True)

    # --- a recording ------------------------------------------------------------------------

    def save_recording(self) -> asyncio.Task[Recipe | None] | None:
        """Ask a name and save the selected recording under it, with the parameters chosen."""
        recording = self.selected_recording()
        if recording is None:
            return None
        chosen = self.chosen_params.get(recording.id, {})
        saved: list[Recipe] = []

        def check(name: str) -> str | None:
            try:
                check_name(name)
                recipe = self.recorder.save_as(
                    recording.id,
                    name,
                    self.store,
                    params={i: n for i, (n, _s) in chosen.items()},
                    secret={i for i, (_n, s) in chosen.items() if s},
                )
            except RecipeError as exc:
                return exc.message
            saved.append(recipe)
            return None

        async def run() -> Recipe | None:
            dialog = NameDialog(
                "Save as recipe",
                "Name the recipe (letters, digits, spaces, '_', '.', '-'). Saving over a name "
                "keeps the earlier revision.",
                check,
                parent=self,
            )
            try:
                await finished(dialog)
            finally:
                dialog.deleteLater()
            if not saved:
                return None
            recipe = saved[0]
            self.chosen_params.pop(recording.id, None)
            self.refresh_recipes()
            self.select_recipe(recipe.name)
            self.say(f"Saved “{recipe.name}” (revision {recipe.revision}).")
            return recipe

        return self.tasks.start(run(), on_error=self._failed)

    def make_parameter(self) -> asyncio.Task[None] | None:
        """Make the selected typing step's text a parameter of the recipe saved from here."""
        recording, index = self.selected_recording(), self.selected_step()
        row = self.steps.row_at(index) if index is not None else None
        if recording is None or index is None or row is None:
            return None
        step = row[0]
        if step.why_not_nameable() is not None:
            return None
        steps = self.steps.steps()
        # One name may stand for several steps that typed the same text (Recorder.save_as).
        taken = {
            n
            for i, (n, _s) in self.chosen_params.get(recording.id, {}).items()
            if i != index and (i >= len(steps) or steps[i].text != step.text)
        }

        def check(name: str) -> str | None:
            try:
                check_param_name(name)
            except RecipeError as error:
                return error.message
            if name in taken:
                return f"another step typed a different text as {name!r}: choose another name"
            return None

        suggested = _parameter_name(step)

        async def run() -> None:
            dialog = NameDialog(
                "Make this a parameter",
                f"Step {index + 1}: {one_line(step.describe(), 200)}\n\nAt each run the "
                "parameter's value is typed instead.",
                check,
                text=suggested,
                checkbox="Secret: keep no value in the recipe (a password, a code)",
                parent=self,
            )
            try:
                if await finished(dialog) != NameDialog.DialogCode.Accepted.value:
                    return
                chosen = self.chosen_params.setdefault(recording.id, {})
                chosen[index] = (dialog.name, dialog.secret_box.isChecked())
            finally:
                dialog.deleteLater()
            self._show_recording_steps()
            self.say("The parameter is applied when you save the recording as a recipe.")

        return self.tasks.start(run(), on_error=self._failed)

    def forget_recording(self) -> asyncio.Task[None] | None:
        recording = self.selected_recording()
        if recording is None:
            return None

        async def run() -> None:
            question = (
                f"Forget this recording and its {recording.steps} steps? Recipes saved from it "
                "stay."
            )
            if not await self._confirm("Forget recording", question):
                return
            self.recorder.forget(recording.id)
            self.chosen_params.pop(recording.id, None)
            self.refresh_recordings()
            self.say("Recording forgotten.")

        return self.tasks.start(run(), on_error=self._failed)

    # --- a saved recipe ---------------------------------------------------------------------

    def export_recipe(self, lang: Lang) -> asyncio.Task[Path | None] | None:
        """Ask where, then write the recipe as a Playwright script only its owner can read."""
        recipe = self.selected_recipe()
        if recipe is None:
            return None
        label, suffix, file_filter = LANGS[lang]

        async def run() -> Path | None:
            text = export(recipe, lang)
            suggested = str(Path.home() / f"{_file_stem(recipe.name)}{suffix}")
            chosen = await self._save_path(
                f"Export “{recipe.name}” as {label}", suggested, [file_filter, "All files (*)"]
            )
            if not chosen:
                return None
            path = Path(chosen)
            await asyncio.to_thread(atomic_write, path, text.encode("utf-8"), mode=0o600)
            self.exported = path
            self.say(f"Exported “{recipe.name}” as {label} to {path}.")
            return path

        return self.tasks.start(run(), on_error=self._failed)

    def copy_script(self, lang: Lang) -> str | None:
        recipe = self.selected_recipe()
        if recipe is None:
            return None
        try:
            text = export(recipe, lang)
        except TabrelayError as exc:
            self._failed(exc)
            return None
        QGuiApplication.clipboard().setText(text)
        self.say(f"Copied “{recipe.name}” as a {LANGS[lang][0]} script.")
        return text

    def show_file(self) -> FileDialog | None:
        recipe = self.selected_recipe()
        if recipe is None:
            return None
        try:
            path = self.store.path_of(recipe.name)
            text = path.read_text(encoding="utf-8", errors="replace")
        except RecipeError as exc:
            self._failed(exc)
            return None
        except OSError as exc:
            self.say(f"Could not read {self.store.folder}: {exc.strerror or exc}", error=True)
            return None
        dialog = FileDialog(path, text, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def delete_recipe(self) -> asyncio.Task[None] | None:
        recipe = self.selected_recipe()
        if recipe is None:
            return None

        async def run() -> None:
            question = (
                f"Delete the recipe “{recipe.name}”? Its last revision is kept in the recipes "
                "folder's history."
            )
            if not await self._confirm("Delete recipe", question):
                return
            self.store.delete(recipe.name)
            self.refresh_recipes()
            self.say(f"Deleted “{recipe.name}”.")

        return self.tasks.start(run(), on_error=self._failed)

    # --- recording the person ---------------------------------------------------------------

    def record(self) -> asyncio.Task[str | None] | None:
        """ "Record what I do…": pick a connected tab, then record there until Stop."""
        demonstrations = self.demonstrations
        if demonstrations is None:
            return None

        async def run() -> str | None:
            dialog = TabPickerDialog(self._tabs(), self)
            try:
                if await finished(dialog) != TabPickerDialog.DialogCode.Accepted.value:
                    return None
                choice = dialog.chosen()
            finally:
                dialog.deleteLater()
            if choice is None:
                return None
            recording_id: str = await demonstrations.start(choice.browser_id, choice.tab_id)
            self.refresh_recordings()
            self.select_recording(recording_id)
            self.say(
                f"Recording what you do in “{one_line(choice.title or choice.url, 80)}”. "
                "Press Stop recording when you are done."
            )
            return recording_id

        return self.tasks.start(run(), on_error=self._failed)

    def stop_recording(self) -> asyncio.Task[None] | None:
        demonstrations = self.demonstrations
        if demonstrations is None:
            return None

        async def run() -> None:
            for recording_id, _browser, _tab in demonstrations.active():
                await demonstrations.stop(recording_id)
            self.refresh_recordings()
            self.say("Recording stopped. Save it as a recipe, or forget it.")

        return self.tasks.start(run(), on_error=self._failed)


def _parameter_name(step: Step) -> str:
    """A name to start from: the field's label or placeholder, as a parameter name."""
    target = step.target
    words = (target.label or target.placeholder or target.name or "") if target else ""
    return param_name_from(words, fallback="text")


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "recipe"
