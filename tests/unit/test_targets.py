"""What a call touches, as the person reads it: which arguments name elements, how an element
is described, what the log keeps, and how a picture's size is bounded (tools/targets.py)."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

from tabrelay.tools import targets
from tabrelay.tools.catalog import BY_NAME, TOOLS
from tabrelay.tools.context import Target
from tabrelay.tools.redaction import mask
from tabrelay.tools.targets import (
    MAX_PICTURE_BYTES,
    PICTURE_SIZE,
    TargetView,
    Touches,
    action_of,
    named_elements,
)

CANARY = "hunter2-canary"


def params(tool: str, **arguments: object) -> BaseModel:
    return BY_NAME[tool].params.model_validate(arguments)


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("browser_click", {"ref": "e2"}, [("ref", "e2", None)]),
        ("browser_type", {"selector": "#pw", "text": CANARY}, [("selector", None, "#pw")]),
        ("browser_hover", {"ref": "e3"}, [("ref", "e3", None)]),
        ("browser_select_option", {"ref": "e4", "values": ["a"]}, [("ref", "e4", None)]),
        ("browser_press_key", {"key": "Enter"}, []),
        ("browser_press_key", {"key": "Enter", "selector": "#q"}, [("selector", None, "#q")]),
        ("browser_scroll", {"direction": "to_element", "ref": "e5"}, [("ref", "e5", None)]),
        ("browser_upload_file", {"ref": "e6", "paths": ["/x"]}, [("ref", "e6", None)]),
        ("browser_screenshot", {"ref": "e7"}, [("ref", "e7", None)]),
        ("browser_get_content", {"selector": "main"}, [("selector", None, "main")]),
        ("browser_wait_for", {"selector": "#later"}, []),  # a condition, not a target
        ("browser_navigate", {"url": "https://example.com/"}, []),
        (
            "browser_drag",
            {"source_ref": "e8", "target_selector": "#bin"},
            [("source_ref", "e8", None), ("target_selector", None, "#bin")],
        ),
        (
            "browser_fill_form",
            {"fields": [{"ref": "e9", "value": CANARY}, {"selector": "#c", "value": True}]},
            [("fields.0.ref", "e9", None), ("fields.1.selector", None, "#c")],
        ),
    ],
)
def test_every_argument_that_names_an_element_is_found(
    tool: str, arguments: dict[str, object], named: list[tuple[str, str | None, str | None]]
) -> None:
    assert named_elements(BY_NAME[tool].touches, params(tool, **arguments)) == named


def test_every_tool_that_takes_an_element_says_what_it_does_to_it() -> None:
    """A tool with a ref or selector says what it does to it (its spec's ``touches``, the label
    "… wants to <action> this"), unless the element is a condition it waits for; a tool with
    none says nothing."""

    def takes_elements(model: type[BaseModel]) -> bool:
        for name, info in model.model_fields.items():
            if name.endswith(("ref", "selector")):
                return True
            for inner in typing.get_args(info.annotation):
                if isinstance(inner, type) and issubclass(inner, Target):
                    return True
        return False

    conditions = {"browser_wait_for"}
    for spec in TOOLS:
        takes = takes_elements(spec.params) and spec.name not in conditions
        assert (spec.touches is not None) == takes, spec.name
    drag = BY_NAME["browser_drag"].touches
    assert drag is not None and action_of(drag, "source_ref") == "drag"
    assert action_of(drag, "target_selector") == "drop something onto"


def test_a_description_says_role_name_text_and_frame_without_repeating_itself() -> None:
    button = TargetView(
        "ref", "e2", "click", role="button", name="Buy", text="Buy", frame="main frame"
    )
    assert button.describe() == 'e2: button "Buy", in the main frame'
    field = TargetView(
        "fields.0.ref",
        "e5",
        "fill in",
        role="textbox",
        name="Password",
        text="Your password",
        frame="frame http://127.0.0.1:8000/login.html",
        kind="password",
    )
    assert field.describe() == (
        'e5: textbox "Password", password field, text "Your password", in the frame '
        "http://127.0.0.1:8000/login.html"
    )
    bare = TargetView("selector", "#x", "click", text="Some words", frame="main frame")
    assert bare.describe() == '#x: text "Some words", in the main frame'


def test_an_element_that_could_not_be_described_says_so_and_why() -> None:
    stale = TargetView("ref", "e2", "click", problem="the page did not answer in time")
    assert stale.describe() == "e2: could not be described (the page did not answer in time)"


def test_a_picture_is_never_part_of_what_is_printed_or_compared() -> None:
    view = TargetView("ref", "e2", "click", role="button", picture=b"\xff\xd8" + b"x" * 100)
    assert "picture" not in repr(view)
    assert view == TargetView("ref", "e2", "click", role="button")


def test_the_log_summary_names_the_destination_each_element_and_how_many_more() -> None:
    touches = Touches(
        targets=(
            TargetView("fields.0.ref", "e1", "fill in", role="textbox", name="Name"),
            TargetView("fields.1.ref", "e2", "fill in", problem="ref e2 is stale"),
        ),
        unnamed=80,
    )
    assert touches.summary() == (
        'e1: textbox "Name"; e2: could not be described (ref e2 is stale); and 80 more elements'
    )
    assert Touches(destination="https://example.org").summary() == "goes to https://example.org"
    assert Touches().summary() is None


def test_a_secret_the_page_echoes_is_masked_in_the_description() -> None:
    echoed = TargetView(
        "fields.0.ref", "e1", "fill in", role="textbox", name=f"Hint: {CANARY}", text=CANARY
    )
    scrubbed = Touches(targets=(echoed,)).scrubbed(frozenset({CANARY, "ab"}))
    [view] = scrubbed.targets
    assert view.name == f"Hint: {mask(CANARY)}" and view.text == mask(CANARY)
    assert CANARY not in repr(scrubbed) and CANARY not in (scrubbed.summary() or "")


def test_a_picture_shows_the_element_and_a_margin_within_the_screen_and_a_small_size() -> None:
    metrics = {
        "cssVisualViewport": {"pageX": 0, "pageY": 500, "clientWidth": 1200, "clientHeight": 800},
        "cssLayoutViewport": {"clientWidth": 1200},
        "layoutViewport": {"clientWidth": 2400},  # a HiDPI screen: 2 device pixels per CSS px
    }
    small = targets._clip([[100, 100, 180, 100, 180, 130, 100, 130]], metrics)
    assert small == {"x": 76, "y": 576, "width": 128, "height": 78, "scale": 1.0}
    huge = targets._clip([[-50, -50, 1500, -50, 1500, 2000, -50, 2000]], metrics)
    assert huge is not None and (huge["x"], huge["y"], huge["width"], huge["height"]) == (
        0,
        500,
        1200,
        800,
    )
    # The picture's pixels: the clip's CSS size times its scale times the device pixel ratio.
    assert round(huge["width"] * huge["scale"] * 2) <= PICTURE_SIZE[0]
    assert round(huge["height"] * huge["scale"] * 2) <= PICTURE_SIZE[1]
    off_screen = targets._clip([[100, 900, 180, 900, 180, 930, 100, 930]], metrics)
    assert off_screen is None
    # Just below the fold: its margin is on screen but it is not; a picture would show
    # whatever sits above it as what will be touched (found in the screenshots).
    below = targets._clip([[100, 805, 180, 805, 180, 835, 100, 835]], metrics)
    assert below is None
    assert targets._clip([[100, 790, 180, 790, 180, 830, 100, 830]], metrics) is None  # a quarter
    half = targets._clip([[100, 780, 180, 780, 180, 820, 100, 820]], metrics)
    assert half is not None and half["y"] == 500 + 756 and half["height"] == 44
    assert targets._clip([], metrics) is None
    assert MAX_PICTURE_BYTES <= 64_000


def test_a_frame_is_named_by_origin_and_path_never_its_query() -> None:
    assert (
        targets._frame_url("https://pay.EXAMPLE.com:443/checkout/card?session=s3cr3t#x")
        == "https://pay.example.com/checkout/card"
    )
    assert targets._frame_url("about:srcdoc") == "about:srcdoc"
    assert len(targets._frame_url("https://example.com/" + "a" * 500)) == targets.MAX_FRAME
