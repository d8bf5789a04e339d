"""The recipe files (recipes/store.py): saved, listed, loaded, replaced with history, deleted;
private modes; names that are paths refused; bad files named in problems(), never lost."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from tabrelay.recipes.model import (
    FORMAT,
    Locator,
    Param,
    Recipe,
    RecipeError,
    Step,
    check_name,
    check_param_name,
    free_param_name,
    param_name_from,
)
from tabrelay.recipes.store import RecipeStore


def recipe(name: str = "order tea", *, text: str = "Ada", steps: int = 1) -> Recipe:
    field = Locator(role="textbox", name="Name", css="#name")
    return Recipe(
        name=name,
        created=1_700_000_000.0,
        origin="agent",
        steps=[
            Step(action="navigate", url="http://127.0.0.1:1/order.html"),
            *[Step(action="type", target=field, text=f"{text} {i}") for i in range(steps)],
            Step(action="type", target=Locator(label="Password", css="#pw"), text="{{password}}"),
        ],
        params=[Param(name="password", secret=True)],
        final_text="Order for Ada",
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def store(tmp_path: Path) -> RecipeStore:
    return RecipeStore(tmp_path / "data" / "recipes")


def test_a_saved_recipe_loads_back_equal_and_is_listed(store: RecipeStore) -> None:
    written = store.save(recipe())

    assert written.revision == 1
    assert store.load("order tea") == written
    assert store.names() == ["order tea"]
    assert store.list() == [written]
    assert store.problems() == []


def test_an_empty_or_missing_folder_has_no_recipes_and_no_problems(store: RecipeStore) -> None:
    assert store.names() == []
    assert store.list() == []
    assert store.problems() == []
    assert not store.folder.exists()  # reading creates nothing


def test_the_file_is_indented_json_named_after_the_recipe(store: RecipeStore) -> None:
    store.save(recipe())
    path = store.path_of("order tea")

    assert path == store.folder / "order tea.json"
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "format": 1,')
    assert json.loads(text)["name"] == "order tea"


def test_folder_is_0700_and_files_0600_under_a_loose_umask(store: RecipeStore) -> None:
    old = os.umask(0o022)
    try:
        store.save(recipe())
        store.save(recipe())  # a second save writes history too
    finally:
        os.umask(old)

    assert mode(store.folder) == 0o700
    assert mode(store.folder / "history") == 0o700
    assert mode(store.path_of("order tea")) == 0o600
    for kept in (store.folder / "history").iterdir():
        assert mode(kept) == 0o600


def test_an_existing_open_folder_is_made_private_on_the_first_save(store: RecipeStore) -> None:
    store.folder.mkdir(parents=True, mode=0o755)
    os.chmod(store.folder, 0o755)  # noqa: S103 - the loose folder under test

    store.save(recipe())

    assert mode(store.folder) == 0o700


def test_saving_over_a_name_keeps_the_old_file_in_history_and_bumps_the_revision(
    store: RecipeStore,
) -> None:
    first = store.save(recipe(text="Ada"))
    first_bytes = store.path_of("order tea").read_bytes()

    second = store.save(recipe(text="Grace"))
    third = store.save(recipe(text="Linus"))

    assert (first.revision, second.revision, third.revision) == (1, 2, 3)
    assert store.load("order tea") == third
    history = store.folder / "history"
    assert sorted(p.name for p in history.iterdir()) == ["order tea.r1.json", "order tea.r2.json"]
    assert (history / "order tea.r1.json").read_bytes() == first_bytes
    assert "Grace" in (history / "order tea.r2.json").read_text()
    assert store.names() == ["order tea"]  # history is not a recipe of its own


def test_a_deleted_recipe_is_gone_but_kept_in_history(store: RecipeStore) -> None:
    store.save(recipe())
    store.delete("order tea")

    assert store.names() == []
    with pytest.raises(RecipeError, match="no recipe named 'order tea'"):
        store.load("order tea")
    assert (store.folder / "history" / "order tea.r1.json").exists()

    # Saved again, it continues the count and never writes over what history holds.
    again = store.save(recipe(text="Again"))
    assert again.revision == 2
    assert "Ada 0" in (store.folder / "history" / "order tea.r1.json").read_text()


def test_deleting_a_missing_recipe_says_so_and_names_the_saved_ones(store: RecipeStore) -> None:
    store.save(recipe("alpha"))
    with pytest.raises(
        RecipeError, match=r"no recipe named 'beta' to delete; saved recipes: alpha"
    ):
        store.delete("beta")
    assert store.names() == ["alpha"]


def test_loading_a_missing_recipe_names_the_saved_ones(store: RecipeStore) -> None:
    with pytest.raises(RecipeError, match="no recipe is saved yet"):
        store.load("nope")
    store.save(recipe("b one"))
    store.save(recipe("a two"))
    with pytest.raises(RecipeError, match=r"no recipe named 'nope'; saved recipes: a two, b one"):
        store.load("nope")


@pytest.mark.parametrize(
    "name",
    [
        "..",
        "../escape",
        "a/b",
        "/etc/passwd",
        "a\\b",
        "a\x00b",
        "",
        " leading space",
        ".hidden",
        "-dash",
        "x" * 81,
        "tea\n",
        "caf\u00e9",  # letters outside ASCII: a file name that differs by platform
    ],
)
def test_names_that_are_paths_or_not_names_are_refused_everywhere(
    store: RecipeStore, tmp_path: Path, name: str
) -> None:
    for call in (store.path_of, store.load, store.delete):
        with pytest.raises(RecipeError, match="cannot name a recipe"):
            call(name)
    # A recipe object built past validation is refused too before anything is written.
    smuggled = recipe().model_copy(update={"name": name})
    with pytest.raises(RecipeError, match="cannot name a recipe"):
        store.save(smuggled)
    assert not store.folder.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_longest_name_and_dots_inside_a_name_work(store: RecipeStore) -> None:
    for name in ("x" * 80, "a..b", "v1.2 final", "A_b-c"):
        store.save(recipe(name))
        assert store.load(name).name == name
    assert len(store.names()) == 4


def _plant(store: RecipeStore, file: str, data: bytes) -> Path:
    store.folder.mkdir(parents=True, exist_ok=True)
    path = store.folder / file
    path.write_bytes(data)
    return path


def test_bad_files_are_listed_as_problems_and_the_good_ones_still_load(
    store: RecipeStore,
) -> None:
    good = store.save(recipe("good"))
    whole = recipe_file_text(recipe("half"))
    _plant(store, "garbage.json", b"\x00\xffnot json at all")
    _plant(store, "half.json", whole[: len(whole) // 2])
    _plant(store, "newer.json", json.dumps({"format": FORMAT + 1, "name": "newer"}).encode())
    _plant(store, "shape.json", b"[1, 2, 3]")
    _plant(store, "fields.json", json.dumps({"format": 1, "name": "fields"}).encode())
    _plant(store, "bad name!.json", whole)
    _plant(store, "notes.txt", b"not a recipe file, not listed")
    (store.folder / "folder.json").mkdir()

    assert store.list() == [good]
    problems = store.problems()
    assert len(problems) == 6, problems
    text = "\n".join(problems)
    assert "garbage.json is not a recipe: it is not JSON" in text
    assert "half.json is not a recipe: it is not JSON" in text
    assert "newer.json was written by a newer Tabrelay (recipe format 2" in text
    assert "shape.json is not a recipe: it holds no JSON object" in text
    assert "fields.json is not a valid recipe: created: Field required" in text
    assert "bad name!.json: not a recipe name" in text
    # The unreadable ones are still named, and loading one says why.
    assert store.names() == ["fields", "garbage", "good", "half", "newer", "shape"]
    with pytest.raises(RecipeError, match="newer Tabrelay"):
        store.load("newer")


def recipe_file_text(r: Recipe) -> bytes:
    from tabrelay.recipes.model import recipe_text

    return recipe_text(r).encode()


def test_saving_over_an_unreadable_file_keeps_its_bytes_in_history(store: RecipeStore) -> None:
    store.save(recipe())
    store.save(recipe())  # r1 in history
    broken = b'{"format": 1, "name": "order tea", "steps": ['
    _plant(store, "order tea.json", broken)

    written = store.save(recipe(text="Fixed"))

    history = store.folder / "history"
    kept = [p for p in history.iterdir() if p.read_bytes() == broken]
    assert len(kept) == 1, sorted(p.name for p in history.iterdir())
    assert written.revision > 2
    assert store.load("order tea") == written
    assert "Ada 0" in (history / "order tea.r1.json").read_text()


def test_a_history_file_with_other_contents_is_never_overwritten(store: RecipeStore) -> None:
    store.save(recipe())
    (store.folder / "history" / "order tea.r1.json").write_bytes(b"a note the person kept")
    # The live file still says revision 1, so its copy cannot take that history name.
    store.save(recipe(text="Next"))

    history = store.folder / "history"
    assert (history / "order tea.r1.json").read_bytes() == b"a note the person kept"
    assert "Ada 0" in (history / "order tea.r1.1.json").read_text()


def test_a_file_renamed_by_hand_loads_under_its_new_name(store: RecipeStore) -> None:
    store.save(recipe("old name"))
    os.rename(store.path_of("old name"), store.folder / "new name.json")

    assert store.load("new name").name == "new name"
    assert [r.name for r in store.list()] == ["new name"]


def test_a_file_too_large_is_a_problem_not_a_crash(
    store: RecipeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tabrelay.recipes.store as store_module

    store.save(recipe())
    monkeypatch.setattr(store_module, "MAX_FILE", 100)
    assert store.list() == []
    assert "larger than" in store.problems()[0]


def test_an_unwritable_folder_fails_with_a_clear_error_and_loses_nothing(
    store: RecipeStore,
) -> None:
    if os.geteuid() == 0:
        # Root writes through modes; a file where the folder should be blocks anyone.
        store.folder.parent.mkdir(parents=True)
        store.folder.write_text("in the way")
        with pytest.raises(RecipeError, match="recipes folder"):
            store.save(recipe())
        assert store.folder.read_text() == "in the way"
        return
    store.save(recipe())
    before = store.path_of("order tea").read_bytes()
    os.chmod(store.folder, 0o500)
    try:
        with pytest.raises(RecipeError, match="could not"):
            store.save(recipe(text="Other"))
    finally:
        os.chmod(store.folder, 0o700)
    assert store.path_of("order tea").read_bytes() == before


def test_no_half_written_file_is_ever_visible_while_saving(store: RecipeStore) -> None:
    """Saves of a large recipe race a reader: every read is a whole recipe, of one revision."""
    store.save(recipe(steps=300))
    stop = threading.Event()
    seen: list[int] = []
    failures: list[str] = []

    def read() -> None:
        while not stop.is_set():
            try:
                seen.append(store.load("order tea").revision)
            except RecipeError as exc:
                failures.append(str(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(20):
            store.save(recipe(steps=300, text=f"round {i}"))
    finally:
        stop.set()
        reader.join(timeout=30)
    assert not reader.is_alive()
    assert failures == []
    assert seen and seen == sorted(seen)
    assert store.load("order tea").revision == 21
    assert not [p for p in store.folder.iterdir() if p.name.endswith(".tmp")]


def test_two_writers_never_lose_a_revision(store: RecipeStore) -> None:
    """The app and a CLI process share the folder: each has its own store object."""
    other = RecipeStore(store.folder)
    errors: list[BaseException] = []

    def save_many(s: RecipeStore, who: str) -> None:
        try:
            for i in range(15):
                s.save(recipe(text=f"{who} {i}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=save_many, args=(store, "app")),
        threading.Thread(target=save_many, args=(other, "cli")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert store.load("order tea").revision == 30
    kept = sorted(p.name for p in (store.folder / "history").iterdir())
    assert kept == sorted(f"order tea.r{i}.json" for i in range(1, 30))


def test_secret_parameters_have_no_value_in_the_file(store: RecipeStore) -> None:
    store.save(recipe())
    data = json.loads(store.path_of("order tea").read_text())
    assert data["params"] == [{"name": "password", "secret": True}]


@pytest.mark.parametrize(
    ("words", "name"),
    [
        ("E-mail address", "e_mail_address"),
        ("  Your NAME (as on the card) ", "your_name_as_on_the_card"),
        ("2FA code", "text_2fa_code"),  # a name starts with a letter
        ("Пароль", "text"),  # nothing of it is a name
        ("", "text"),
        ("word " * 30, ("word_" * 8).rstrip("_")),  # at most 40, never ending in "_"
    ],
)
def test_a_parameter_name_is_made_from_the_words_a_person_reads(words: str, name: str) -> None:
    made = param_name_from(words, fallback="text")
    assert made == name
    assert check_param_name(made) == made


def test_a_taken_parameter_name_gets_the_next_free_number_and_stays_a_name() -> None:
    assert free_param_name("email", set()) == "email"
    assert free_param_name("email", {"email", "email_2"}) == "email_3"
    long = "a" * 40
    taken = {long, *(f"{'a' * 36}_{n}" for n in range(2, 12))}
    free = free_param_name(long, taken)
    assert free == f"{'a' * 36}_12" and free not in taken
    assert check_param_name(free) == free


@pytest.mark.parametrize("name", ["Ab c", "a b", "ab-c", "_a", "1a", "a" * 41, "ab\n", ""])
def test_a_parameter_name_is_all_of_it_checked(name: str) -> None:
    """Anywhere in the name, not only a part of it that looks like one."""
    with pytest.raises(RecipeError, match="cannot name a parameter"):
        check_param_name(name)
    with pytest.raises(ValidationError):
        Param(name=name, secret=True)


@pytest.mark.parametrize("name", ["!!tea", "tea\n", "a/b", " tea"])
def test_a_recipe_name_is_all_of_it_checked(name: str) -> None:
    with pytest.raises(RecipeError, match="cannot name a recipe"):
        check_name(name)
    with pytest.raises(ValidationError):
        recipe(name)


def test_which_steps_text_can_become_a_parameter() -> None:
    field = Locator(role="textbox", name="Name", css="#name")
    assert Step(action="type", target=field, text="Ada").why_not_nameable() is None
    assert Step(action="dialog", accept=True, text="yes").why_not_nameable() is None
    assert Step(action="click", target=field).why_not_nameable() == "types no text to name"
    assert Step(action="dialog", accept=True).why_not_nameable() == "types no text to name"
    typed = Step(action="type", target=field, text="{{name}}")
    assert typed.why_not_nameable() == "is a parameter already"
