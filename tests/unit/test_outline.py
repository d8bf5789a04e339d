"""The snapshot outline built from a recorded accessibility tree (Chromium 156, a form page
with a shadow root and a same-origin iframe; see tests/unit/data/ax_form.json)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from tabrelay.tools.outline import FrameTree, Outline, build_outline, search

DATA = json.loads((Path(__file__).parent / "data" / "ax_form.json").read_text())


def outline(**options: Any) -> tuple[Outline, dict[tuple[int, str], str]]:
    frames = [FrameTree("main", DATA["main"], DATA["url"])]
    frames += [FrameTree(f["id"], f["nodes"], f["url"], f["owner"]) for f in DATA["frames"]]
    counter = itertools.count(1)
    refs: dict[tuple[int, str], str] = {}

    def assign(backend: int, frame: str) -> str:
        return refs.setdefault((backend, frame), f"e{next(counter)}")

    built = build_outline(
        frames,
        assign_ref=assign,
        clickable=frozenset(DATA["clickable"]),
        base_url=DATA["url"],
        **options,
    )
    return built, refs


def test_the_outline_reads_like_the_page() -> None:
    built, _ = outline()
    assert built.text == "\n".join(
        [
            "banner",
            " nav",
            '  link "Home" [e1] → /',
            '  link "Shop" [e2] → /shop',
            "main",
            ' heading[1] "Place an order"',
            " text: Fill in the form below. Fields marked * are required.",
            " form",
            '  textbox "Name *" [e3] required',
            '  textbox "Email" [e4]',
            '  textbox "Password" [e5]',
            '  textbox "Notes" [e6] value="hello" multiline',
            '  combobox "Size" [e7] value="Medium" options: Small | Medium | Large',
            '  checkbox "Gift wrap" [e8] checked',
            '  group "Delivery"',
            '   radio "Standard" [e9] checked',
            '   radio "Express" [e10]',
            '  textbox "Message" [e11] value="Editable" richtext',
            '  button "Place order" [e12]',
            '  button "Disabled" [e13] disabled',
            ' button "Shadow button" [e14]',
            ' textbox "Shadow input" [e15]',
            ' iframe "Inner"',
            "  text: Inside the frame",
            '  button "Frame button" [e16]',
            '  link "Frame link" [e17] → /frame.html#x',
            "contentinfo",
            " text: © 2026 Shop",
        ]
    )


def test_every_interactive_element_has_a_ref_bound_to_its_node_and_frame() -> None:
    built, refs = outline()
    assert [e.ref for e in built.elements] == [f"e{n}" for n in range(1, 18)]
    frame_button = next(e for e in built.elements if e.name == "Frame button")
    assert frame_button.frame_id == DATA["frames"][0]["id"]
    assert refs[(frame_button.backend_node_id, frame_button.frame_id)] == frame_button.ref
    again, _ = outline()
    assert again.text == built.text  # stable for the same page


def test_depth_cuts_nesting_and_counts_what_it_left_out() -> None:
    assert outline(max_depth=1)[0].text.splitlines() == ["banner", "main", "contentinfo"]
    built, _ = outline(max_depth=2)
    assert built.text.splitlines() == [
        "banner",
        " nav",
        "main",
        ' heading[1] "Place an order"',
        " text: Fill in the form below. Fields marked * are required.",
        " form",
        ' button "Shadow button" [e1]',
        ' textbox "Shadow input" [e2]',
        ' iframe "Inner"',
        "contentinfo",
        " text: © 2026 Shop",
    ]
    assert built.omitted_below_depth == 18


def test_viewport_filter_keeps_only_on_screen_nodes() -> None:
    heading = next(n for n in DATA["main"] if n.get("name", {}).get("value") == "Place an order")
    built, _ = outline(visible=frozenset({heading["backendDOMNodeId"]}))
    assert 'heading[1] "Place an order"' in built.text
    assert "Place order" not in built.text


def test_a_frame_that_cannot_be_read_says_how_to_reach_it() -> None:
    frames = [
        FrameTree("main", DATA["main"], DATA["url"]),
        FrameTree("x", [], "https://ads.example/frame", DATA["frames"][0]["owner"], error="no"),
    ]
    built = build_outline(frames, assign_ref=lambda b, f: f"e{b}")
    assert (
        "  (cross-origin frame https://ads.example/frame is not included; open that URL with "
        "browser_new_tab to read it)" in built.lines
    )


def test_search_by_text_and_role() -> None:
    built, _ = outline()
    assert search(built, text="order", role=None) == [
        'heading[1] "Place an order"',
        'button "Place order" [e12]',
    ]
    assert search(built, text=None, role="radio") == [
        'radio "Standard" [e9] checked',
        'radio "Express" [e10]',
    ]
    assert search(built, text="shadow", role="button") == ['button "Shadow button" [e14]']
    assert search(built, text="nothing like it", role=None) == []
