"""What an agent's successful call adds to its recording (tools/recorders/recording.py): the steps
of every recorded tool, none for the others, secrets as named parameters with no value anywhere,
gaps for elements that could not be described, and the text to check at the end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tabrelay.recipes.model import PARAM_NAME, Locator, Param, Step
from tabrelay.recipes.recorder import Recorder
from tabrelay.recipes.store import RecipeStore
from tabrelay.tools import catalog
from tabrelay.tools.context import ToolResult
from tabrelay.tools.recorders.recording import final_text_of_call, record_call

RECORDED = frozenset(spec.name for spec in catalog.TOOLS if spec.recorded)
PAGE = "http://127.0.0.1:1/form.html"
NAME = Locator(role="textbox", name="Name", label="Name", css="#name")
PASSWORD = Locator(label="Password", css="#pw")
CODE = Locator(role="textbox", name="One-time code", css="#otp")
SAVE = Locator(role="button", name="Save", css="#save")
COLOUR = Locator(role="combobox", name="Colour", css="#colour")
AGREE = Locator(role="checkbox", name="I agree", css="#agree")
CANARY = "canary-5ecret-Value"
DONE = ToolResult("done")


def steps_of_call(tool: str, params: Any, locators: Any, **how: Any) -> Any:
    made = record_call(tool, params, locators, **how)
    return made.steps, made.params


def gap_of_call(tool: str, params: Any, locators: Any, **how: Any) -> str | None:
    return record_call(tool, params, locators, page_url=None, **how).gap


def params(tool: str, **arguments: Any) -> Any:
    return catalog.BY_NAME[tool].params.model_validate(arguments)


def never(path: str) -> bool:
    return False


def record(
    tool: str,
    arguments: dict[str, Any],
    locators: dict[str, Locator] | None = None,
    *,
    secret: Any = never,
    result: ToolResult = DONE,
) -> tuple[list[Step], list[Param]]:
    return steps_of_call(
        tool,
        params(tool, **arguments),
        locators or {},
        secret=secret,
        page_url=PAGE,
        result=result,
    )


def test_navigate_records_a_url_or_a_history_move() -> None:
    assert record("browser_navigate", {"url": "http://127.0.0.1:1/b.html"}) == (
        [Step(action="navigate", url="http://127.0.0.1:1/b.html", page_url=PAGE)],
        [],
    )
    for move in ("back", "forward", "reload"):
        steps, _ = record("browser_navigate", {"action": move})
        assert steps == [Step(action="navigate", history=move, page_url=PAGE)]


def test_a_new_tab_with_a_url_is_a_navigate_and_without_one_nothing() -> None:
    steps, _ = record("browser_new_tab", {"url": "http://127.0.0.1:1/a.html"})
    assert steps == [Step(action="navigate", url="http://127.0.0.1:1/a.html", page_url=PAGE)]
    assert record("browser_new_tab", {}) == ([], [])


def test_click_keeps_its_button_double_and_modifiers() -> None:
    steps, _ = record(
        "browser_click",
        {"ref": "e3", "button": "right", "double": True, "modifiers": ["Shift"]},
        {"ref": SAVE},
    )
    assert steps == [
        Step(
            action="click",
            target=SAVE,
            button="right",
            double=True,
            modifiers=["Shift"],
            page_url=PAGE,
        )
    ]


def test_type_keeps_its_text_submit_and_append() -> None:
    steps, params_ = record(
        "browser_type",
        {"selector": "#name", "text": "Ada", "submit": True, "append": True},
        {"ref": NAME},
    )
    assert steps == [
        Step(action="type", target=NAME, text="Ada", submit=True, append=True, page_url=PAGE)
    ]
    assert params_ == []


def test_fill_form_is_one_step_per_field_by_kind() -> None:
    result = ToolResult("Filled the form: e1 filled; e2 checked; e3 = Blue; e4 = Red, Green.")
    steps, _ = record(
        "browser_fill_form",
        {
            "fields": [
                {"ref": "e1", "value": "Ada"},
                {"ref": "e2", "value": True},
                {"ref": "e3", "value": "blue"},
                {"ref": "e4", "value": ["red", "green"]},
                {"ref": "e5", "value": False},
            ]
        },
        {
            "fields.0": NAME,
            "fields.1": AGREE,
            "fields.2": COLOUR,
            "fields.3": COLOUR,
            "fields.4": AGREE,
        },
        result=result,
    )
    assert [(s.action, s.text, s.checked, s.options) for s in steps] == [
        ("type", "Ada", None, []),
        ("check", None, True, []),
        ("select", None, None, ["blue"]),
        ("select", None, None, ["red", "green"]),
        ("check", None, False, []),
    ]
    assert [s.target for s in steps] == [NAME, AGREE, COLOUR, COLOUR, AGREE]


def test_select_hover_and_press_key_with_and_without_a_target() -> None:
    assert record("browser_select_option", {"ref": "e3", "values": ["Blue"]}, {"ref": COLOUR})[
        0
    ] == [Step(action="select", target=COLOUR, options=["Blue"], page_url=PAGE)]
    assert record("browser_hover", {"ref": "e4"}, {"ref": SAVE})[0] == [
        Step(action="hover", target=SAVE, page_url=PAGE)
    ]
    assert record("browser_press_key", {"key": "Escape", "repeat": 2})[0] == [
        Step(action="press", key="Escape", repeat=2, page_url=PAGE)
    ]
    assert record("browser_press_key", {"key": "Enter", "ref": "e1"}, {"element": NAME})[0] == [
        Step(action="press", key="Enter", target=NAME, page_url=PAGE)
    ]


def test_a_dialog_answer_and_a_text_waited_for() -> None:
    assert record("browser_handle_dialog", {"accept": False})[0] == [
        Step(action="dialog", accept=False, page_url=PAGE)
    ]
    assert record("browser_handle_dialog", {"accept": True, "prompt_text": "Ada"})[0] == [
        Step(action="dialog", accept=True, text="Ada", page_url=PAGE)
    ]
    assert record("browser_wait_for", {"text": "Saved"})[0] == [
        Step(action="expect_text", text="Saved", page_url=PAGE)
    ]
    for other in ({"text_gone": "Loading"}, {"selector": "#x"}, {"seconds": 1}):
        assert record("browser_wait_for", other) == ([], [])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("browser_snapshot", {}),
        ("browser_find", {"text": "Save"}),
        ("browser_get_content", {}),
        ("browser_screenshot", {}),
        ("browser_scroll", {"direction": "down"}),
        ("browser_drag", {"source_ref": "e1", "target_ref": "e2"}),
        ("browser_upload_file", {"ref": "e1", "paths": ["/tmp/x"]}),
        ("browser_evaluate", {"expression": "1"}),
        ("browser_cdp", {"method": "Page.reload"}),
        ("browser_close_tab", {"tab_id": 3}),
        ("browser_activate_tab", {"tab_id": 3}),
        ("browser_list_tabs", {}),
        ("browser_status", {}),
        ("browser_console_messages", {}),
        ("browser_network_requests", {}),
    ],
)
def test_tools_that_are_not_recorded_give_no_step(tool: str, arguments: dict[str, Any]) -> None:
    assert tool not in RECORDED
    everything = {"ref": SAVE, "source": SAVE, "target": SAVE, "element": SAVE}
    assert record(tool, arguments, everything) == ([], [])


def test_every_tool_is_either_recorded_or_named_as_not() -> None:
    names = {spec.name for spec in catalog.TOOLS}
    assert names >= RECORDED
    import tabrelay.tools.recorders.recording as recording

    doc = recording.__doc__ or ""
    for name in names - RECORDED:
        short = name.removeprefix("browser_").replace("_", " ")
        mentioned = short.split()[0] in doc or name.removeprefix("browser_") in doc
        assert mentioned, f"{name} is neither recorded nor explained"


def test_a_secret_typed_text_becomes_a_named_parameter_with_no_value() -> None:
    steps, params_ = record(
        "browser_type",
        {"ref": "e2", "text": CANARY},
        {"ref": PASSWORD},
        secret=lambda path: path == "text",
    )
    assert steps[0].text == "{{password}}"
    assert params_ == [Param(name="password", secret=True, description=params_[0].description)]
    assert CANARY not in json.dumps(
        [s.model_dump() for s in steps] + [p.model_dump() for p in params_]
    )


def test_secret_fields_of_a_form_are_named_by_kind_and_numbered_when_taken() -> None:
    fields = [
        {"ref": "e1", "value": "Ada"},
        {"ref": "e2", "value": CANARY},
        {"ref": "e3", "value": CANARY + "2"},
        {"ref": "e4", "value": "123456"},
        {"ref": "e5", "value": "blue-horse"},
    ]
    answer = Locator(label="Mother's maiden name", css="#q")
    steps, params_ = record(
        "browser_fill_form",
        {"fields": fields},
        {
            "fields.0": NAME,
            "fields.1": PASSWORD,
            "fields.2": PASSWORD,
            "fields.3": CODE,
            "fields.4": answer,
        },
        secret=lambda path: path != "fields.0.value",
    )
    assert [s.text for s in steps] == [
        "Ada",
        "{{password}}",
        "{{password_2}}",
        "{{one_time_code}}",
        "{{mother_s_maiden_name}}",
    ]
    assert [(p.name, p.secret, p.default) for p in params_] == [
        ("password", True, None),
        ("password_2", True, None),
        ("one_time_code", True, None),
        ("mother_s_maiden_name", True, None),
    ]
    dumped = json.dumps([s.model_dump() for s in steps] + [p.model_dump() for p in params_])
    assert CANARY not in dumped


def test_secret_fields_with_long_labels_alike_get_names_that_are_still_names() -> None:
    """Two labels whose first 40 name characters are the same: the second is numbered within
    the 40 a name may have, and the step's text uses it (it once typed "{{…_2}}" as text)."""
    label = "Answer to the security question you chose when "
    fields = [{"ref": "e1", "value": CANARY}, {"ref": "e2", "value": CANARY + "2"}]
    steps, params_ = record(
        "browser_fill_form",
        {"fields": fields},
        {
            "fields.0": Locator(label=label + "you signed up", css="#a"),
            "fields.1": Locator(label=label + "you last moved", css="#b"),
        },
        secret=lambda path: True,
    )
    names = [p.name for p in params_]
    assert len(names) == 2 and len(set(names)) == 2
    assert all(PARAM_NAME.fullmatch(name) for name in names), names
    assert [s.text for s in steps] == [f"{{{{{name}}}}}" for name in names]
    assert [s.params() for s in steps] == [{name} for name in names]


def test_a_secret_prompt_answer_is_a_parameter() -> None:
    steps, params_ = record(
        "browser_handle_dialog",
        {"accept": True, "prompt_text": CANARY},
        secret=lambda path: path == "prompt_text",
    )
    assert steps[0].text == "{{prompt_answer}}"
    assert params_[0].name == "prompt_answer" and params_[0].secret


def test_a_secret_choice_in_a_form_is_a_gap_not_a_step() -> None:
    call = params("browser_fill_form", fields=[{"ref": "e1", "value": ["12"]}])
    secret = lambda path: True  # noqa: E731
    assert steps_of_call(
        "browser_fill_form", call, {"fields.0": COLOUR}, secret=secret, page_url=PAGE, result=DONE
    ) == ([], [])
    gap = gap_of_call("browser_fill_form", call, {"fields.0": COLOUR}, secret=secret, result=DONE)
    assert gap is not None and "a secret choice" in gap and "12" not in gap


def test_an_element_without_a_locator_is_a_gap_not_a_guess() -> None:
    call = params("browser_click", ref="e9")
    assert steps_of_call("browser_click", call, {}, secret=never, page_url=PAGE, result=DONE) == (
        [],
        [],
    )
    gap = gap_of_call("browser_click", call, {}, secret=never, result=DONE)
    assert gap == "click e9: its element could not be described to find it again"
    form = params(
        "browser_fill_form", fields=[{"ref": "e1", "value": "Ada"}, {"ref": "e2", "value": "B"}]
    )
    steps, _ = steps_of_call(
        "browser_fill_form", form, {"fields.0": NAME}, secret=never, page_url=PAGE, result=DONE
    )
    assert [s.text for s in steps] == ["Ada"]
    assert "fill field 2: e2" in (
        gap_of_call("browser_fill_form", form, {"fields.0": NAME}, secret=never, result=DONE) or ""
    )
    assert gap_of_call("browser_click", call, {"ref": SAVE}, secret=never, result=DONE) is None


def test_text_longer_than_a_recipe_holds_is_a_gap() -> None:
    call = params("browser_type", ref="e1", text="x" * 10_001)
    assert steps_of_call("browser_type", call, {"ref": NAME}, secret=never, page_url=PAGE,
                         result=DONE) == ([], [])  # fmt: skip
    gap = gap_of_call("browser_type", call, {"ref": NAME}, secret=never, result=DONE)
    assert gap is not None and "the typing cannot be a step (text:" in gap


def test_the_final_text_is_what_the_agent_waited_for_and_nothing_it_merely_read() -> None:
    assert final_text_of_call("browser_wait_for", params("browser_wait_for", text="Saved"), DONE)
    assert (
        final_text_of_call("browser_wait_for", params("browser_wait_for", text="Saved"), DONE)
        == "Saved"
    )
    for tool, arguments in (
        ("browser_wait_for", {"text_gone": "Loading"}),
        ("browser_find", {"text": "Saved"}),
        ("browser_get_content", {}),
        ("browser_snapshot", {}),
    ):
        assert final_text_of_call(tool, params(tool, **arguments), DONE) is None


def test_steps_from_two_calls_with_secrets_save_as_a_recipe_without_their_values(
    tmp_path: Any,
) -> None:
    recorder = Recorder(tmp_path / "recordings")
    store = RecipeStore(tmp_path / "recipes")
    rid = recorder.for_agent("Claude", "s1", "b1", 1, start_url=PAGE)
    for value in (CANARY, CANARY + "again"):
        steps, params_ = record(
            "browser_type", {"ref": "e2", "text": value}, {"ref": PASSWORD},
            secret=lambda path: True,
        )  # fmt: skip
        recorder.add(rid, steps, params_)
    recipe = recorder.save_as(rid, "twice", store)
    assert [s.text for s in recipe.steps[1:]] == ["{{password}}", "{{password_2}}"]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes()


async def test_values_given_to_a_recipe_run_are_all_masked_by_its_secret_fields() -> None:
    from tabrelay.tools.groups.recipes import RunRecipeParams, clear_nothing
    from tabrelay.tools.redaction import redact

    arguments = {"name": "login", "params": {"password": CANARY, "user": "ada-lovelace"}}
    call = RunRecipeParams.model_validate(arguments)
    cleared = await clear_nothing(None, call)  # type: ignore[arg-type]
    shown = redact(arguments, frozenset({"params"}), cleared)
    assert shown == {
        "name": "login",
        "params": {"password": "[secret: 19 characters]", "user": "[secret: 12 characters]"},
    }


def test_a_recipe_run_takes_at_most_100_values_of_at_most_10000_characters() -> None:
    from pydantic import ValidationError

    from tabrelay.tools.groups.recipes import RunRecipeParams

    RunRecipeParams(name="r", params={f"p{i}": "x" * 10_000 for i in range(100)})
    with pytest.raises(ValidationError, match="at most 100 items"):
        RunRecipeParams(name="r", params={f"p{i}": "x" for i in range(101)})
    with pytest.raises(ValidationError, match="at most 10000 characters"):
        RunRecipeParams(name="r", params={"p": "x" * 10_001})
