"""The dashboard's Recipes page over a real Recorder and RecipeStore on disk: what it lists,
steps that show live, saving with parameters (a secret one keeps no value), bad names refused
inline, exports written private and equal to export(), and page text shown as plain text."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QLineEdit
from pytestqt.qtbot import QtBot

from gui.conftest import expect, until, within
from tabrelay.errors import TabrelayError
from tabrelay.recipes.export import export
from tabrelay.recipes.model import Locator, Param, Recipe, Step
from tabrelay.recipes.recorder import Recorder
from tabrelay.recipes.store import RecipeStore
from tabrelay.ui.bridge import ChangeSignal
from tabrelay.ui.recipe_dialogs import FileDialog, NameDialog
from tabrelay.ui.recipes_page import RecipesPage
from tabrelay.ui.tasks import BackgroundTasks

START = "http://127.0.0.1:8000/login"
EMAIL = Locator(label="Email", css="#email")
CODE = Locator(label="Door code", css="#code")
PASSWORD = Locator(label="Password", css="#pw")
SIGN_IN = Locator(role="button", name="Sign in", css="form > button")


@dataclass
class Shown:
    page: RecipesPage
    recorder: Recorder
    store: RecipeStore
    changes: ChangeSignal
    errors: list[TabrelayError]
    crashes: list[BaseException]


async def yes(title: str, question: str) -> bool:
    return True


@pytest.fixture
def shown(qtbot: QtBot, tmp_path: Path) -> Iterator[Shown]:
    recorder = Recorder(tmp_path / "recipes" / "recordings")
    store = RecipeStore(tmp_path / "recipes")
    errors: list[TabrelayError] = []
    crashes: list[BaseException] = []
    tasks = BackgroundTasks(on_error=errors.append, on_crash=crashes.append)
    changes = ChangeSignal(coalesce=0.01)
    changes.watch(recorder.add_listener)
    page = RecipesPage(
        recorder,
        store,
        None,  # recording the person: test_demonstration_ui.py, with a browser
        changes.changed,
        tasks,
        tabs=list,
        confirm=yes,
    )
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    yield Shown(page, recorder, store, changes, errors, crashes)
    changes.close()
    assert crashes == []


def agent_recording(recorder: Recorder) -> str:
    rid = recorder.for_agent("claude-code", "s1", "b1", 3, start_url=START)
    recorder.add(
        rid,
        [
            Step(action="type", target=EMAIL, text="ada@example.com"),
            Step(action="type", target=CODE, text="Sesame-42"),
            Step(action="type", target=PASSWORD, text="{{password}}"),
            Step(action="click", target=SIGN_IN),
        ],
        [Param(name="password", secret=True)],
        final_url="http://127.0.0.1:8000/home",
    )
    return rid


def saved_recipe(store: RecipeStore, name: str = "Order pizza") -> Recipe:
    return store.save(
        Recipe(
            name=name,
            created=1_700_000_000.0,
            origin="demonstration",
            steps=[
                Step(action="navigate", url="http://127.0.0.1:8000/order", by="person"),
                Step(action="select", target=Locator(label="Size", css="#size"), options=["L"]),
                Step(action="type", target=EMAIL, text="{{email}}", by="person"),
                Step(action="click", target=Locator(role="button", name="Order", css="#o")),
            ],
            params=[Param(name="email", default="ada@example.com")],
            final_url="http://127.0.0.1:8000/thanks",
        )
    )


def cells(model: object, column: int) -> list[str]:
    from PySide6.QtCore import QAbstractItemModel

    assert isinstance(model, QAbstractItemModel)
    return [model.data(model.index(r, column)) for r in range(model.rowCount())]


def type_file_name(dialog: QFileDialog, path: Path) -> None:
    """What the person types into the save dialog's file name field."""
    field = dialog.findChild(QLineEdit, "fileNameEdit")
    assert field is not None and field.isVisible()
    field.setText(str(path))


async def open_dialog(page: RecipesPage, kind: type) -> object:
    return await until(
        lambda: next((w for w in page.findChildren(kind) if w.isVisible()), None),
        message=f"a {kind.__name__} opens",
    )


async def test_the_page_lists_recordings_and_saved_recipes_and_their_steps(
    shown: Shown,
) -> None:
    rid = agent_recording(shown.recorder)
    saved_recipe(shown.store)
    shown.page.refresh_recordings()
    shown.page.refresh_recipes()
    page = shown.page

    assert cells(page.recordings, 0) == [f"● recording · Agent session · {START}"]
    assert cells(page.recordings, 1) == ["4"]
    assert cells(page.recordings, 2) == ["claude-code"]
    assert cells(page.recipes, 0) == ["Order pizza"]
    assert (cells(page.recipes, 1), cells(page.recipes, 2), cells(page.recipes, 3)) == (
        ["1"],
        ["4"],
        ["email"],
    )

    page.select_recording(rid)
    assert page.recording_actions.isVisible() and not page.recipe_actions.isVisible()
    assert cells(page.steps, 1) == [
        "type 'ada@example.com' into the field labelled \"Email\"",
        "type 'Sesame-42' into the field labelled \"Door code\"",
        "type '{{password}}' into the field labelled \"Password\"",
        'click button "Sign in"',
    ]
    assert cells(page.steps, 2) == ["agent"] * 4
    assert cells(page.steps, 3) == ["—", "—", "password (secret)", "—"]

    page.select_recipe("Order pizza")
    assert page.selected_recording() is None  # one selection at a time
    assert page.recipe_actions.isVisible() and not page.recording_actions.isVisible()
    assert cells(page.steps, 2) == ["you", "agent", "you", "agent"]
    assert cells(page.steps, 1)[1] == 'choose L in the field labelled "Size"'


async def test_a_step_recorded_meanwhile_shows_up_live(shown: Shown) -> None:
    rid = agent_recording(shown.recorder)
    shown.page.refresh_recordings()
    shown.page.select_recording(rid)
    assert shown.page.steps.rowCount() == 4

    changed = expect(shown.changes.changed)
    shown.recorder.add(rid, [Step(action="expect_text", text="Welcome back, Ada")])
    await within(changed)
    assert cells(shown.page.recordings, 1) == ["5"]
    assert cells(shown.page.steps, 1)[-1] == "see 'Welcome back, Ada'"
    assert shown.page.selected_recording() is not None  # the selection stays

    changed = expect(shown.changes.changed)
    shown.recorder.finish(rid)
    await within(changed)
    assert cells(shown.page.recordings, 0) == [f"Agent session · {START}"]


async def test_saving_a_recording_with_parameters_keeps_no_secret_and_refuses_bad_names(
    shown: Shown,
) -> None:
    page = shown.page
    rid = agent_recording(shown.recorder)
    page.refresh_recordings()
    page.select_recording(rid)

    page.steps_view.selectRow(3)  # a click has no text to name
    assert not page.param_button.isEnabled()
    page.steps_view.selectRow(2)  # the password is a parameter already
    assert not page.param_button.isEnabled()

    page.steps_view.selectRow(0)
    assert page.param_button.isEnabled()
    task = page.make_parameter()
    dialog = await open_dialog(page, NameDialog)
    assert isinstance(dialog, NameDialog)
    assert dialog.name == "email"  # from the field's label
    dialog.name_edit.setText("Bad Name")
    dialog.accept()
    assert dialog.isVisible() and "cannot name a parameter" in dialog.error_label.text()
    dialog.name_edit.setText("email")
    dialog.accept()
    await within(task)

    page.steps_view.selectRow(1)
    task = page.make_parameter()
    dialog = await open_dialog(page, NameDialog)
    assert isinstance(dialog, NameDialog)
    dialog.name_edit.setText("email")  # taken by a step that typed something else
    dialog.accept()
    assert "different text" in dialog.error_label.text()
    dialog.name_edit.setText("door_code")
    dialog.secret_box.setChecked(True)
    dialog.accept()
    await within(task)
    assert cells(page.steps, 3)[:3] == [
        "{{email}}",
        "{{door_code}} (secret)",
        "password (secret)",
    ]

    task = page.save_recording()
    dialog = await open_dialog(page, NameDialog)
    assert isinstance(dialog, NameDialog)
    for bad in ("../escape", "", "x" * 81):
        dialog.name_edit.setText(bad)
        dialog.accept()
        assert dialog.isVisible()
        assert "cannot name a recipe" in dialog.error_label.text()
        assert dialog.error_label.isVisible()
    assert shown.store.list() == []
    dialog.name_edit.setText("Sign in")
    dialog.accept()
    recipe = await within(task)
    assert recipe is not None and recipe.name == "Sign in"

    text = shown.store.path_of("Sign in").read_text(encoding="utf-8")
    assert "{{door_code}}" in text and "{{email}}" in text and "{{password}}" in text
    assert "Sesame-42" not in text  # the secret's value is in no file
    assert "ada@example.com" in text  # a parameter that is not secret keeps its default
    assert stat.S_IMODE(shown.store.path_of("Sign in").stat().st_mode) == 0o600
    assert page.selected_recipe() is not None and page.selected_recipe().name == "Sign in"  # type: ignore[union-attr]
    assert cells(page.recipes, 3) == ["password (secret), email, door_code (secret)"]
    assert page.message.text() == "Saved “Sign in” (revision 1)."
    assert rid not in page.chosen_params  # applied, and gone
    assert shown.errors == []


async def test_cancelling_the_name_saves_nothing(shown: Shown) -> None:
    rid = agent_recording(shown.recorder)
    shown.page.refresh_recordings()
    shown.page.select_recording(rid)
    task = shown.page.save_recording()
    dialog = await open_dialog(shown.page, NameDialog)
    assert isinstance(dialog, NameDialog)
    dialog.reject()
    assert await within(task) is None
    assert shown.store.list() == []


@pytest.mark.parametrize("lang", ["python", "typescript"])
async def test_export_writes_a_private_file_holding_the_export(
    shown: Shown, tmp_path: Path, lang: str
) -> None:
    recipe = saved_recipe(shown.store)
    shown.page.refresh_recipes()
    shown.page.select_recipe(recipe.name)
    button = shown.page.export_py_button if lang == "python" else shown.page.export_ts_button
    target = tmp_path / "out" / ("order.py" if lang == "python" else "order.spec.ts")
    target.parent.mkdir()
    button.click()
    dialog = await open_dialog(shown.page, QFileDialog)
    assert isinstance(dialog, QFileDialog)
    assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave
    assert Path(dialog.selectedFiles()[0]).name == (
        "Order_pizza.py" if lang == "python" else "Order_pizza.spec.ts"
    )
    type_file_name(dialog, target)
    dialog.accept()
    await until(lambda: target.is_file(), message="the script is written")
    await until(lambda: shown.page.exported == target, message="the page says so")
    assert target.read_text(encoding="utf-8") == export(recipe, lang)  # type: ignore[arg-type]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert str(target) in shown.page.message.text()


async def test_an_export_that_cannot_be_written_is_a_message_not_a_crash(
    shown: Shown, tmp_path: Path
) -> None:
    recipe = saved_recipe(shown.store)
    shown.page.refresh_recipes()
    shown.page.select_recipe(recipe.name)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    task = shown.page.export_recipe("python")
    dialog = await open_dialog(shown.page, QFileDialog)
    assert isinstance(dialog, QFileDialog)
    type_file_name(dialog, blocker / "order.py")
    dialog.accept()
    assert await within(asyncio_wait(task)) is None
    assert "could not write" in shown.page.message.text()
    assert shown.page.exported is None


async def asyncio_wait(task: object) -> None:
    import asyncio

    assert isinstance(task, asyncio.Task)
    await asyncio.wait({task})


async def test_copy_show_and_delete_a_saved_recipe(shown: Shown) -> None:
    recipe = saved_recipe(shown.store)
    page = shown.page
    page.refresh_recipes()
    page.select_recipe(recipe.name)

    page.copy_typescript.trigger()
    assert QGuiApplication.clipboard().text() == export(recipe, "typescript")
    page.copy_python.trigger()
    assert QGuiApplication.clipboard().text() == export(recipe, "python")

    dialog = page.show_file()
    assert isinstance(dialog, FileDialog)
    path = shown.store.path_of(recipe.name)
    assert dialog.path_label.text() == str(path)
    assert dialog.text.toPlainText() == path.read_text(encoding="utf-8")
    dialog.close()

    task = page.delete_recipe()
    await within(task)
    assert not path.exists()
    assert list((shown.store.folder / "history").glob("Order pizza.r1.json"))
    assert page.recipes.rowCount() == 0
    assert page.message.text() == "Deleted “Order pizza”."
    assert not page.recipe_actions.isVisible() and page.steps.rowCount() == 0


async def test_forget_removes_the_recording(shown: Shown) -> None:
    rid = agent_recording(shown.recorder)
    shown.page.refresh_recordings()
    shown.page.select_recording(rid)
    await within(shown.page.forget_recording())
    assert shown.recorder.recordings() == []
    assert shown.page.recordings.rowCount() == 0
    assert not shown.page.recording_actions.isVisible()
    assert shown.page.steps.rowCount() == 0


async def test_a_bad_recipe_file_is_named_and_the_rest_still_listed(shown: Shown) -> None:
    saved_recipe(shown.store)
    (shown.store.folder / "Broken.json").write_text("{not json")
    shown.page.refresh_recipes()
    assert cells(shown.page.recipes, 0) == ["Order pizza"]
    assert shown.page.problems.isVisible()
    assert "Broken.json" in shown.page.problems.text()


async def test_page_text_in_steps_is_shown_literally(shown: Shown) -> None:
    tricky = '<b>Pay</b>\u202eevil\nline <img src="file:///etc/passwd">'
    rid = shown.recorder.for_agent("<i>agent</i>", "s", "b1", 1, start_url="http://x/\u202e")
    shown.recorder.add(
        rid, [Step(action="click", target=Locator(role="button", name=tricky, css="#b"))]
    )
    page = shown.page
    page.refresh_recordings()
    page.select_recording(rid)
    (described,) = cells(page.steps, 1)
    assert described == (
        'click button "<b>Pay</b>\\u202eevil\\u000aline <img src="file:///etc/passwd">"'
    )
    assert cells(page.recordings, 2) == ["<i>agent</i>"]
    assert "\\u202e" in cells(page.recordings, 0)[0]
    for label in (page.message, page.steps_title, page.problems):
        assert label.textFormat() == Qt.TextFormat.PlainText
