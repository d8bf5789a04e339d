"""The recordings being made (recipes/recorder.py): one private file each, listed from another
process, per agent session and tab, the newest 50 kept, full at capacity, bad files skipped
with a reason, saved as recipes with parameters and no secret value anywhere."""

from __future__ import annotations

import json
import os
import stat
import statistics
import time
from pathlib import Path

import pytest

from tabrelay.recipes import recorder as recorder_module
from tabrelay.recipes.model import Locator, Param, RecipeError, Step
from tabrelay.recipes.recorder import CAPACITY, KEPT, Recorder
from tabrelay.recipes.store import RecipeStore

NAME = Locator(role="textbox", name="Name", css="#name")
PASSWORD = Locator(label="Password", css="#pw")
SAVE = Locator(role="button", name="Save", css="#save")
START = "http://127.0.0.1:1/form.html"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def typed(text: str, target: Locator = NAME) -> Step:
    return Step(action="type", target=target, text=text)


def click() -> Step:
    return Step(action="click", target=SAVE)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "data" / "recipes" / "recordings"


@pytest.fixture
def recorder(folder: Path) -> Recorder:
    return Recorder(folder)


@pytest.fixture
def store(tmp_path: Path) -> RecipeStore:
    return RecipeStore(tmp_path / "data" / "recipes")


def agent(recorder: Recorder, session: str = "s1", tab_id: int = 7) -> str:
    return recorder.for_agent("Claude", session, "b1", tab_id, start_url=START)


def test_a_recording_is_one_private_file_another_process_lists(
    recorder: Recorder, folder: Path
) -> None:
    rid = agent(recorder)
    recorder.add(rid, [typed("Ada"), click()], final_url=START + "?done")

    (path,) = folder.iterdir()
    assert path.name == f"{rid}.json"
    assert mode(path) == 0o600
    assert mode(folder) == 0o700
    other = Recorder(folder)  # the CLI: nothing in memory
    (info,) = other.recordings()
    assert info.id == rid and info.steps == 2 and info.live
    assert (info.origin, info.client, info.session, info.browser_id, info.tab_id) == (
        "agent",
        "Claude",
        "s1",
        "b1",
        7,
    )
    assert info.start_url == START
    assert other.steps(rid) == ([typed("Ada"), click()], [])
    assert other.problems() == []


def test_an_agent_session_and_tab_keep_one_recording_others_get_their_own(
    recorder: Recorder,
) -> None:
    first = agent(recorder)
    assert agent(recorder) == first
    assert agent(recorder, tab_id=8) != first
    assert agent(recorder, session="s2") != first
    recorder.finish(first)
    again = agent(recorder)
    assert again != first  # a finished one takes no more steps: a new one begins
    assert not Recorder(recorder.folder).info(first).live


def test_an_agent_session_ending_finishes_all_its_recordings_and_no_other(
    recorder: Recorder,
) -> None:
    one, two = agent(recorder, tab_id=1), agent(recorder, tab_id=2)
    other = agent(recorder, session="s2")
    recorder.finish_agent("Claude", "s1")
    live = {i.id: i.live for i in Recorder(recorder.folder).recordings()}
    assert live == {one: False, two: False, other: True}


def test_a_tab_going_finishes_its_agents_recordings_and_no_other(recorder: Recorder) -> None:
    one, two = agent(recorder, tab_id=1), agent(recorder, session="s2", tab_id=1)
    other_tab = agent(recorder, tab_id=2)
    demo = recorder.begin("demonstration", browser_id="b1", tab_id=1, start_url=START)
    recorder.finish_tab("b1", 1)
    recorder.finish_tab("b2", 2)  # another browser's tab of the same id: nothing of b1's
    live = {i.id: i.live for i in Recorder(recorder.folder).recordings()}
    # A demonstration ends by its own owner (tools/recorders/demonstration.py), not here.
    assert live == {one: False, two: False, other_tab: True, demo: True}
    assert agent(recorder, tab_id=1) not in (one, two)  # a finished one takes no more steps


def test_listing_is_newest_first_and_latest_picks_by_origin(recorder: Recorder) -> None:
    one = agent(recorder)
    demo = recorder.begin("demonstration", browser_id="b1", tab_id=3, start_url=START)
    two = agent(recorder, session="s2")
    recorder.add(one, [click()])  # changed last

    ids = [i.id for i in Recorder(recorder.folder).recordings()]
    assert ids == [one, two, demo]
    latest = Recorder(recorder.folder).latest()
    assert latest is not None and latest.id == one
    shown = Recorder(recorder.folder).latest("demonstration")
    assert shown is not None and shown.id == demo


def test_only_the_newest_fifty_are_kept(recorder: Recorder, folder: Path) -> None:
    first = agent(recorder)
    recorder.finish(first)
    made = [first]
    for n in range(KEPT):
        rid = recorder.begin("demonstration", browser_id="b1", tab_id=n, start_url=None)
        recorder.finish(rid)
        made.append(rid)

    kept = {i.id for i in Recorder(folder).recordings()}
    assert len(kept) == KEPT
    assert first not in kept and set(made[1:]) == kept
    assert len(list(folder.iterdir())) == KEPT


def test_a_full_recording_takes_no_more_steps_and_says_so(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorder_module, "CAPACITY", 3)
    rid = agent(recorder)
    recorder.add(rid, [typed("a"), typed("b")])
    assert not recorder.info(rid).full
    recorder.add(rid, [typed("c"), typed("d")])

    info = Recorder(recorder.folder).info(rid)
    assert info.full and info.steps == 3
    recorder.add(rid, [click()])
    assert [s.text for s in recorder.steps(rid)[0]] == ["a", "b", "c"]


def test_capacity_leaves_room_for_the_start_navigate() -> None:
    from tabrelay.recipes.model import MAX_STEPS

    assert CAPACITY == MAX_STEPS - 1


def test_a_bad_file_is_skipped_with_a_reason_and_the_rest_listed(
    recorder: Recorder, folder: Path
) -> None:
    good = agent(recorder)
    (folder / "20260101-000000-aaaaaa.json").write_text("{not json")
    (folder / "20260101-000000-bbbbbb.json").write_text(json.dumps({"recording": 1}))
    (folder / "20260101-000000-cccccc.json").write_text(json.dumps({"recording": 9, "id": "x"}))
    (folder / "notes.json").write_text("{}")

    other = Recorder(folder)
    assert [i.id for i in other.recordings()] == [good]
    problems = "\n".join(other.problems())
    assert "aaaaaa.json is not a recording: it is not JSON" in problems
    assert "bbbbbb.json is not a valid recording" in problems
    assert "cccccc.json was written by a newer Tabrelay" in problems
    assert "notes.json: not a recording's file name" in problems
    with pytest.raises(RecipeError, match=r"aaaaaa\.json is not a recording"):
        other.steps("20260101-000000-aaaaaa")
    assert (folder / "notes.json").exists()  # never deleted


def test_a_step_that_breaks_the_model_in_a_file_is_named(folder: Path, recorder: Recorder) -> None:
    rid = agent(recorder)
    recorder.add(rid, [click()])
    path = folder / f"{rid}.json"
    data = json.loads(path.read_text())
    data["steps"][0]["action"] = "teleport"
    path.write_text(json.dumps(data))

    other = Recorder(folder)
    assert other.recordings() == []
    assert "is not a valid recording" in other.problems()[0]


def test_unknown_and_path_like_ids_are_clear_errors(recorder: Recorder) -> None:
    rid = agent(recorder)
    with pytest.raises(RecipeError, match=f"there is no recording 20990101-000000-abcdef; .*{rid}"):
        recorder.steps("20990101-000000-abcdef")
    with pytest.raises(RecipeError, match="is not a recording id"):
        recorder.steps("../../etc/passwd")
    with pytest.raises(RecipeError, match="is not a recording id"):
        recorder.forget("../x")


def test_forgetting_elsewhere_ends_the_recording_here(recorder: Recorder) -> None:
    rid = agent(recorder)
    Recorder(recorder.folder).forget(rid)

    with pytest.raises(RecipeError, match="not being made any more"):
        recorder.add(rid, [click()])
    assert agent(recorder) != rid  # the agent's next step begins a new one
    assert rid not in {i.id for i in recorder.recordings()}


def test_listeners_are_told_of_each_change(recorder: Recorder) -> None:
    told: list[int] = []
    stop = recorder.add_listener(lambda: told.append(1))
    rid = agent(recorder)
    recorder.add(rid, [click()])
    recorder.finish(rid)
    recorder.forget(rid)
    assert len(told) == 4
    stop()
    agent(recorder)
    assert len(told) == 4


def test_parameters_taken_twice_are_renamed_in_steps_too(recorder: Recorder) -> None:
    rid = agent(recorder)
    secret = Param(name="password", secret=True)
    recorder.add(rid, [typed("{{password}}", PASSWORD)], [secret])
    recorder.add(rid, [typed("{{password}}", PASSWORD)], [secret])

    steps, params = Recorder(recorder.folder).steps(rid)
    assert [s.text for s in steps] == ["{{password}}", "{{password_2}}"]
    assert params == [secret, Param(name="password_2", secret=True)]


def test_a_step_with_an_undeclared_parameter_is_refused(recorder: Recorder) -> None:
    rid = agent(recorder)
    with pytest.raises(RecipeError, match="undeclared parameter: password"):
        recorder.add(rid, [typed("{{password}}", PASSWORD)])
    assert recorder.info(rid).steps == 0


def test_a_gap_is_counted_and_named(recorder: Recorder) -> None:
    rid = agent(recorder)
    recorder.add(rid, [click()])
    recorder.add(rid, [], gap="browser_click on e9: its element could not be described")

    other = Recorder(recorder.folder)
    assert other.info(rid).gaps == 1
    assert other.gaps(rid) == [
        "after step 1: browser_click on e9: its element could not be described"
    ]


def test_save_as_makes_a_recipe_that_starts_where_the_recording_did(
    recorder: Recorder, store: RecipeStore
) -> None:
    rid = agent(recorder)
    recorder.add(rid, [typed("Ada"), click()], final_url=START + "?ok", final_text="Saved Ada")

    recipe = Recorder(recorder.folder).save_as(rid, "save ada", store)
    assert recipe.steps[0] == Step(action="navigate", url=START)
    assert recipe.steps[1:] == [typed("Ada"), click()]
    assert (recipe.final_url, recipe.final_text) == (START + "?ok", "Saved Ada")
    assert (recipe.origin, recipe.client, recipe.session) == ("agent", "Claude", "s1")
    assert store.load("save ada") == recipe


def test_save_as_keeps_a_first_navigate_as_it_is(recorder: Recorder, store: RecipeStore) -> None:
    rid = agent(recorder)
    go = Step(action="navigate", url="http://127.0.0.1:1/other.html")
    recorder.add(rid, [go, click()])
    assert recorder.save_as(rid, "other", store).steps == [go, click()]


def test_save_as_turns_typed_text_into_parameters(
    recorder: Recorder, store: RecipeStore, tmp_path: Path
) -> None:
    rid = agent(recorder)
    recorder.add(rid, [typed("Ada"), typed("hunter2-typed", PASSWORD), typed("Ada"), click()])

    recipe = recorder.save_as(
        rid, "login", store, params={0: "name", 2: "name", 1: "pin"}, secret=[1]
    )
    assert [s.text for s in recipe.steps[1:4]] == ["{{name}}", "{{pin}}", "{{name}}"]
    assert {p.name: (p.secret, p.default) for p in recipe.params} == {
        "name": (False, "Ada"),
        "pin": (True, None),
    }
    saved = store.path_of("login").read_text()
    assert "hunter2-typed" not in saved
    assert recipe.filled({"pin": "0000"})[2].text == "0000"


@pytest.mark.parametrize(
    ("params", "secret", "message"),
    [
        ({5: "x"}, (), "has no step 5"),
        ({1: "x"}, (), r"step 1 \(click button \"Save\"\) types no text"),
        ({0: "Bad-Name"}, (), "cannot name a parameter"),
        ({0: "x", 2: "x"}, (), "steps that typed different texts"),
        ({}, (0,), "marked secret but has no parameter name"),
        ({3: "password"}, (), "is a parameter already"),
        ({0: "password"}, (), "has a parameter named 'password' already"),
    ],
)
def test_save_as_refuses_bad_parameters_and_saves_nothing(
    recorder: Recorder,
    store: RecipeStore,
    params: dict[int, str],
    secret: tuple[int, ...],
    message: str,
) -> None:
    rid = agent(recorder)
    recorder.add(rid, [typed("Ada"), click(), typed("Bob")])
    recorder.add(rid, [typed("{{password}}", PASSWORD)], [Param(name="password", secret=True)])

    with pytest.raises(RecipeError, match=message):
        recorder.save_as(rid, "r", store, params=params, secret=secret)
    assert store.names() == []
    assert recorder.steps(rid)[0][0].text == "Ada"  # the recording is unchanged


def test_save_as_refuses_a_bad_name_or_an_empty_recording(
    recorder: Recorder, store: RecipeStore
) -> None:
    rid = agent(recorder)
    with pytest.raises(RecipeError, match="has no steps to save yet"):
        recorder.save_as(rid, "empty", store)
    recorder.add(rid, [click()])
    with pytest.raises(RecipeError, match="cannot name a recipe"):
        recorder.save_as(rid, "../x", store)
    assert store.names() == []


def test_a_recording_with_a_secret_parameter_holds_no_value_in_any_file(
    recorder: Recorder, store: RecipeStore, tmp_path: Path
) -> None:
    rid = agent(recorder)
    recorder.add(rid, [typed("{{password}}", PASSWORD)], [Param(name="password", secret=True)])
    recorder.save_as(rid, "login", store)

    recipe = store.load("login")
    assert recipe.params == [Param(name="password", secret=True)]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert mode(path) == 0o600, path
            assert b'"default"' not in path.read_bytes(), path


def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    recorder = Recorder(blocked / "recordings")
    with pytest.raises(RecipeError, match="could not keep recording"):
        recorder.begin("demonstration", browser_id="b1", tab_id=1, start_url=None)


def test_a_recording_is_never_waited_for_on_the_disk_and_is_whole_at_each_write(
    recorder: Recorder, store: RecipeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step is kept in the middle of an agent's tool call, and a recording ends as its tab
    closes, on the event loop: an fsync there (a tenth of a second and more on a busy disk)
    would stall every client. Every write is whole for another process at once; the recipe
    saved from it is the one file waited for."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    rid = agent(recorder)
    for n in range(3):
        recorder.add(rid, [typed(f"Ada {n}")])
        assert len(Recorder(recorder.folder).steps(rid)[0]) == n + 1  # the CLI sees it whole
    recorder.finish_agent("Claude", "s1")
    ended = Recorder(recorder.folder)
    assert not ended.info(rid).live and len(ended.steps(rid)[0]) == 3
    assert synced == []
    recorder.save_as(rid, "kept", store)
    assert len(synced) == 1 and store.names() == ["kept"]


def test_one_add_is_one_small_write_even_near_capacity(recorder: Recorder) -> None:
    """Measured per add(): a step is one atomic replace of the recording's file, each step
    encoded once. Printed with pytest -s; bounded loosely for a loaded
    machine (quiet: about 0.5 ms at 2 steps, 1.7 ms at 999 steps / 330 KB)."""
    rid = agent(recorder)
    where = Locator(
        role="textbox", name="Address line 1", label="Address", css="form > div > input#a1"
    )
    times: list[float] = []
    for n in range(CAPACITY):
        started = time.perf_counter()
        recorder.add(rid, [Step(action="type", target=where, text=f"12 Long Street {n}")])
        times.append(time.perf_counter() - started)
    size = os.path.getsize(recorder.folder / f"{rid}.json")
    first, last = statistics.median(times[:20]), statistics.median(times[-20:])
    print(f"add(): {first * 1e3:.2f} ms at 20 steps, {last * 1e3:.2f} ms at {CAPACITY} ({size} B)")
    assert last < 0.05
    assert len(Recorder(recorder.folder).steps(rid)[0]) == CAPACITY
