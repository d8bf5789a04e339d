"""Frames of other processes reached through child sessions: object ids marked with their session
and commands routed by them (``object_ids``), the bookkeeping of which frame has which session
(``child_sessions.learn``), and held ids of frames read in worlds of their own (``FrameWorlds``,
``page_outline.decode``). End to end in real Chromium: tests/e2e/test_reach_frames.py."""

from __future__ import annotations

import json

import pytest

from tabrelay.errors import CommandFailed
from tabrelay.tools.page import child_sessions, page_outline
from tabrelay.tools.state.object_ids import (
    holds_object,
    may_make,
    routed,
    session_of,
    tag_objects,
    tagged,
)
from tabrelay.tools.state.tab_state import ATTACHED, DETACHED, FrameWorlds, SessionState


def test_a_command_naming_an_object_of_a_child_session_goes_there_unmarked() -> None:
    mine = tagged("1.2.3", "S1")
    assert session_of(mine) == "S1" and session_of("1.2.3") is None
    assert routed(None, {"objectId": mine, "x": 1}) == ("S1", {"objectId": "1.2.3", "x": 1})
    params = {"functionDeclaration": "f", "objectId": mine, "arguments": [
        {"value": 1}, {"objectId": tagged("4.5.6", "S1")}]}  # fmt: skip
    assert routed(None, params) == ("S1", {**params, "objectId": "1.2.3", "arguments": [
        {"value": 1}, {"objectId": "4.5.6"}]})  # fmt: skip
    assert routed("S2", {"backendNodeId": 5}) == ("S2", {"backendNodeId": 5})
    assert routed(None, None) == (None, None)
    assert routed(None, {"objectId": "7.8.9"}) == (None, {"objectId": "7.8.9"})


@pytest.mark.parametrize(
    "params",
    [
        {"objectId": tagged("1", "S1"), "arguments": [{"objectId": "2"}]},  # the tab's and S1's
        {"objectId": tagged("1", "S1"), "arguments": [{"objectId": tagged("2", "S2")}]},
    ],
)
def test_objects_of_two_sessions_in_one_command_are_refused(params: dict[str, object]) -> None:
    with pytest.raises(CommandFailed, match="different frames"):
        routed(None, params)
    with pytest.raises(CommandFailed, match="different frames"):
        routed("S3", {"objectId": tagged("1", "S1")})


def test_answers_of_a_child_session_mark_every_object_but_the_pages_own_values() -> None:
    answer = {
        "result": {"type": "object", "objectId": "1.1.1"},
        "object": {"type": "object", "subtype": "node", "objectId": "1.1.2"},
        "props": [{"name": "0", "value": {"type": "object", "objectId": "1.1.3"}}],
        # By value, the page's data: an "objectId" the page wrote stays as the page wrote it.
        "byValue": {"type": "object", "value": {"objectId": "page-made"}},
    }
    marked = tag_objects(answer, "S")
    assert marked["result"]["objectId"] == "S~1.1.1"
    assert marked["object"]["objectId"] == "S~1.1.2"
    assert marked["props"][0]["value"]["objectId"] == "S~1.1.3"
    assert marked["byValue"]["value"] == {"objectId": "page-made"}
    assert answer["result"]["objectId"] == "1.1.1", "the answer itself is left as it was"


def attached(frame: str, session: str, kind: str = "iframe") -> dict[str, object]:
    return {"sessionId": session, "targetInfo": {"targetId": frame, "type": kind, "url": "x"}}


def test_frames_come_and_go_with_their_sessions_and_a_fresh_session_forgets_them() -> None:
    state = SessionState()
    state.learn(ATTACHED, attached("F1", "S1"), None)
    state.learn(ATTACHED, attached("F2", "S2"), "S1")  # nested
    state.learn(ATTACHED, attached("W", "S3", "worker"), None)
    state.learn(ATTACHED, attached("F4", "bad~id"), None)
    state.learn(ATTACHED, {"sessionId": 5}, None)  # odd: skipped
    assert state.children == {"F1": "S1", "F2": "S2"}
    assert state.parents == {"F1": None, "F2": "S1"}
    state.auto_attached |= {"", "S2"}
    state.within["F3"] = "S2"  # a frame of another origin in F2's process, read through S2
    state.learn(DETACHED, {"sessionId": "S2"}, "S1")
    assert state.children == {"F1": "S1"} and state.auto_attached == {""}
    assert state.within == {}
    state.within["F5"] = "S1"
    state.fresh()
    assert (state.children, state.parents, state.auto_attached, state.within) == ({}, {}, set(), {})


def test_each_frame_world_has_its_own_span_of_held_ids() -> None:
    worlds = FrameWorlds()
    first, second = worlds.number("F1"), worlds.number("F2")
    assert first != second and 0 not in (first, second)  # 0: the top frame's world
    assert worlds.number("F1") == first and worlds.frame(first) == "F1"
    assert worlds.frame(999) is None
    small = FrameWorlds()
    small.LIMIT = 2  # type: ignore[misc]
    kept, dropped = small.number("kept"), small.number("dropped")
    small.number("kept")  # used again: the other one is the longest unused
    small.number("new")
    assert small.frame(kept) == "kept" and small.frame(dropped) is None


def test_an_outline_read_in_a_frames_own_world_carries_its_span() -> None:
    base = 3 * FrameWorlds.SPAN
    text = json.dumps({
        "frames": [
            {"owner": None, "url": "https://pay.test/card", "nodes": [
                [1, -1, "RootWebArea", "Card", 0, None, None, 0],
                [2, 0, "textbox", "Name on card", 0, "", {"secret": "card detail"}, 1],
                [3, 0, "Iframe", "Verification", 0, None, None, 0],
            ]},
            {"owner": 3, "url": "https://verify.test/", "nodes": [], "error": "cross-origin"},
        ],
        "editors": [],
        "withheld": {},
    })  # fmt: skip
    page = page_outline.decode(text, "F1", 0, base=base)
    held = [n.get("backendDOMNodeId") for n in page.frames[0].nodes]
    assert held == [base + 1, base + 2, base + 3]
    assert page.frames[1].owner == base + 3
    assert page.secrets == {base + 2: "card detail"}


def box(border: list[float], content: list[float], width: float, height: float) -> dict:
    return {"border": border, "content": content, "width": width, "height": height}


def test_where_a_frame_is_drawn_maps_its_points_out_and_back_through_a_transform() -> None:
    Placement = child_sessions.Placement
    # Moved only: a 400×200 <iframe> with a 1 px border at (10, 20).
    moved = Placement.of(box([10, 20, 410, 20, 410, 220, 10, 220],
                             [11, 21, 409, 21, 409, 219, 11, 219], 400, 200))  # fmt: skip
    assert moved.out(5, 6) == (16, 27) and moved.into(16, 27) == (5, 6)
    assert moved.scale() == (1, 1)
    # translate(30px, 12px) scale(0.6), from its top left: a CSS pixel is drawn 0.6 px long.
    inner = [30.6, 12.6, 269.4, 12.6, 269.4, 131.4, 30.6, 131.4]
    scaled = Placement.of(box([30, 12, 270, 12, 270, 132, 30, 132], inner, 400, 200))
    assert scaled.out(100, 50) == pytest.approx((90.6, 42.6))
    assert scaled.into(90.6, 42.6) == pytest.approx((100, 50))
    assert scaled.scale() == pytest.approx((0.6, 0.6))
    # Turned a quarter clockwise: the frame's x runs down the page, its y to the left.
    turned = Placement.of(box([300, 0, 300, 400, 100, 400, 100, 0],
                              [300, 0, 300, 400, 100, 400, 100, 0], 400, 200))  # fmt: skip
    assert turned.out(10, 20) == pytest.approx((280, 10))
    assert turned.into(280, 10) == pytest.approx((10, 20))
    # Drawn flat (scale(0)) or with no size: nothing in it is reached, nothing divides by zero.
    flat = Placement.of(box([5, 5, 5, 5, 5, 5, 5, 5], [5, 5, 5, 5, 5, 5, 5, 5], 400, 200))
    assert flat.into(5, 5) == (float("inf"), float("inf"))
    assert Placement.of(box([1] * 8, [2, 3, 2, 3, 2, 3, 2, 3], 0, 0)).out(4, 5) == (6, 8)


def test_a_call_releases_its_group_only_when_a_command_may_have_put_an_object_in_it() -> None:
    assert may_make({"expression": "x", "objectGroup": "g"})
    assert may_make({"objectId": "1.2", "functionDeclaration": "f"})  # joins that object's group
    assert not may_make({"objectId": "1.2", "returnByValue": True})
    assert not may_make({"executionContextId": 3, "returnByValue": True}) and not may_make(None)
    assert holds_object({"result": {"type": "object", "objectId": "1.2"}})
    assert holds_object({"result": [{"name": "0", "value": {"type": "object", "objectId": "4"}}]})
    assert holds_object({"exceptionDetails": {"exception": {"type": "object", "objectId": "9"}}})
    assert not holds_object({"result": {"type": "object", "subtype": "null", "value": None}})
    # The page's own data by value is not looked into, whatever it holds.
    assert not holds_object({"result": {"type": "object", "value": {"objectId": "page's"}}})


def test_the_box_around_quads_holds_every_corner() -> None:
    turned = [10, 0, 20, 10, 10, 20, 0, 10]  # a square turned by 45°
    assert child_sessions.bounds([turned, [30, 5, 31, 5, 31, 6, 30, 6]]) == (0, 0, 31, 20)
