"""Strict parsing of extension frames: each message type, and every kind of bad input."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.net import json_values
from support.scale import examples
from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.messages import (
    AuthResponse,
    CdpEvent,
    CommandError,
    CommandResult,
    HeldDownload,
    Hello,
    Ping,
    Pong,
    Status,
    TabEvent,
    TabInfo,
    decode_json,
    encode,
    parse_extension_message,
)


def parse(obj: object) -> object:
    return parse_extension_message(json.dumps(obj))


def test_each_message_type_parses_into_its_type() -> None:
    assert parse({"id": "1", "result": {"a": 1}}) == CommandResult("1", {"a": 1})
    assert parse({"id": "2", "result": None}) == CommandResult("2", None)
    assert parse({"id": "3", "error": "No tab", "code": "no_tab"}) == CommandError(
        "3", "No tab", "no_tab"
    )
    assert parse({"id": "4", "error": {"message": "boom", "code": "x"}}) == CommandError(
        "4", "boom", "x"
    )
    assert parse({"type": "auth.response", "nonce": "n", "proof": "p"}) == AuthResponse("n", "p")
    assert parse(
        {
            "type": "hello",
            "protocol": 1,
            "extension": "0.1.0",
            "browser": "Chrome 131",
            "capabilities": ["tabs.close"],
            "instance": "abc",
        }
    ) == Hello(1, "0.1.0", "Chrome 131", ("tabs.close",), "abc")
    assert parse({"type": "status", "attachedTabs": [1, 2]}) == Status((1, 2))
    assert parse(
        {"type": "cdp_event", "tabId": 4, "method": "Page.loadEventFired", "params": {"t": 1}}
    ) == CdpEvent(4, "Page.loadEventFired", {"t": 1})
    assert parse({"type": "cdp_event", "tabId": 4, "method": "X.y"}).params == {}  # type: ignore[attr-defined]
    event = parse({"type": "tab_event", "event": "removed", "tab": {"id": 9}})
    assert event == TabEvent("removed", TabInfo(id=9))
    assert parse({"type": "ping"}) == Ping()
    assert parse({"type": "pong", "extra": "ignored"}) == Pong()
    held = json.loads(held_frame(url="https://a.test/r", finalUrl="https://b.test/r.csv",
                                 filename="r.csv", mime="text/csv", totalBytes=-1))  # fmt: skip
    assert parse(held) == HeldDownload(
        3, "https://a.test/r", "https://b.test/r.csv", "r.csv", "text/csv", -1, "safe"
    )


def test_tab_info_round_trips_through_the_wire_form() -> None:
    wire = {
        "id": 3,
        "windowId": 1,
        "url": "https://a.test/",
        "title": "A",
        "active": True,
        "attached": False,
        "groupId": 7,
        "favIconUrl": "https://a.test/f.ico",
        "shared": True,
        "focused": False,
    }
    assert TabInfo.from_wire(wire).to_wire() == wire


def held_frame(**changed: object) -> str:
    """A held download's frame with some of its fields changed."""
    fields = {"id": 3, "url": "u", "finalUrl": "u", "filename": "f", "mime": "", "totalBytes": 1,
              "danger": "safe"}  # fmt: skip
    return json.dumps({"type": "download", "download": fields | changed})


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{", "invalid_json"),
        ("", "invalid_json"),
        ("[1, 2]", "not_object"),
        ('"text"', "not_object"),
        ("null", "not_object"),
        ('{"type": "ping", "x": NaN}', "invalid_json"),
        ('{"type": "ping", "x": Infinity}', "invalid_json"),
        ('{"type": "ping", "x": ' + "9" * 5000 + "}", "invalid_json"),
        ("[" * 1000 + "]" * 1000, "too_deep"),
        ('{"a":' * 300 + "1" + "}" * 300, "too_deep"),
        ("[" * 100_000, "too_deep"),
        ('{"nothing": 1}', "no_type"),
        ('{"type": 5}', "no_type"),
        ('{"type": "set_policy", "tool": "*"}', "unknown_type"),
        ('{"id": 7, "result": 1}', "bad_id"),
        ('{"id": "", "result": 1}', "bad_id"),
        ('{"id": "' + "x" * 65 + '", "result": 1}', "bad_id"),
        ('{"id": "1"}', "bad_response"),
        ('{"id": "1", "result": 1, "error": "e"}', "bad_response"),
        ('{"id": "1", "error": 5}', "bad_response"),
        ('{"type": "status", "attachedTabs": "1"}', "bad_field"),
        ('{"type": "status", "attachedTabs": [true]}', "bad_field"),
        ('{"type": "status", "attachedTabs": [1.5]}', "bad_field"),
        ('{"type": "status", "attachedTabs": [' + ",".join(["1"] * 10_001) + "]}", "bad_field"),
        ('{"type": "cdp_event", "tabId": "4", "method": "A.b"}', "bad_field"),
        ('{"type": "cdp_event", "tabId": 4, "method": "A.b", "params": []}', "not_object"),
        ('{"type": "cdp_event", "tabId": 99999999999999999, "method": "A.b"}', "bad_field"),
        ('{"type": "tab_event", "event": "exploded", "tab": {"id": 1}}', "bad_field"),
        (
            '{"type": "tab_event", "event": "created", "tab": {"id": 1, "active": "yes"}}',
            "bad_field",
        ),
        ('{"type": "download"}', "not_object"),
        ('{"type": "download", "download": []}', "not_object"),
        ('{"type": "download", "download": {"id": 3}}', "bad_field"),
        (held_frame(id=-3), "bad_field"),
        (held_frame(id=True), "bad_field"),
        (held_frame(totalBytes=-2), "bad_field"),
        (held_frame(totalBytes=1.5), "bad_field"),
        (held_frame(url="u" * 2049), "bad_field"),
        (held_frame(danger=None), "bad_field"),
        ('{"type": "hello", "protocol": "1"}', "bad_field"),
        ('{"type": "hello", "protocol": 1, "capabilities": "all"}', "bad_field"),
        ('{"type": "auth.response", "nonce": 1, "proof": "p"}', "bad_field"),
        ('{"type": "auth.response", "nonce": "n", "proof": "' + "p" * 200 + '"}', "bad_field"),
    ],
)
def test_bad_frames_are_rejected_with_a_named_reason(frame: str, code: str) -> None:
    with pytest.raises(ProtocolViolation) as raised:
        parse_extension_message(frame)
    assert raised.value.code == code
    assert raised.value.message  # a sentence for the peer
    assert frame[:30] not in raised.value.message or len(frame) < 5  # no payload echo


def test_nesting_up_to_the_limit_is_accepted() -> None:
    deep = '{"id": "1", "result": ' + "[" * 250 + "]" * 250 + "}"
    assert isinstance(parse_extension_message(deep), CommandResult)


def test_encode_is_compact_and_refuses_nan() -> None:
    assert encode({"id": "1", "method": "tabs.list", "params": {}}) == (
        '{"id":"1","method":"tabs.list","params":{}}'
    )
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode({"x": float("nan")})


def test_an_answer_may_carry_its_tab_and_one_that_does_not_parse_is_left_out() -> None:
    tab = {"id": 5, "windowId": 1, "url": "https://example.com/", "title": "Example"}
    carried = parse({"id": "1", "result": {}, "tab": tab})
    assert carried == CommandResult("1", {}, TabInfo.from_wire(tab))
    assert isinstance(carried, CommandResult)
    assert parse(carried.to_wire()) == carried
    for bad in ({"id": "5"}, {"id": 5, "title": 7}, ["tab"], "tab", 5, True):
        assert parse({"id": "1", "result": {"a": 1}, "tab": bad}) == CommandResult("1", {"a": 1})
    assert parse({"id": "1", "result": None, "tab": None}) == CommandResult("1", None)


def test_decode_json_keeps_unicode() -> None:
    assert decode_json('{"t": "ü‮"}') == {"t": "ü\u202e"}


@settings(max_examples=examples(400))
@given(st.text(max_size=400))
def test_arbitrary_text_is_parsed_or_rejected_never_crashes(text: str) -> None:
    with contextlib.suppress(ProtocolViolation):
        parse_extension_message(text)


@settings(max_examples=examples(400))
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "type",
                "result",
                "error",
                "tabId",
                "method",
                "params",
                "tab",
                "event",
                "attachedTabs",
                "protocol",
                "capabilities",
                "nonce",
                "proof",
            ]
        ),
        json_values
        | st.sampled_from(
            ["ping", "status", "hello", "cdp_event", "tab_event", "auth.response", "1"]
        ),
        max_size=6,
    )
)
def test_structured_garbage_is_parsed_or_rejected_never_crashes(obj: dict[str, object]) -> None:
    with contextlib.suppress(ProtocolViolation):
        parse_extension_message(json.dumps(obj))


@given(
    st.text(min_size=1, max_size=64),
    json_values,
)
def test_results_round_trip(command_id: str, result: object) -> None:
    assert parse_extension_message(encode({"id": command_id, "result": result})) == CommandResult(
        command_id, result
    )
