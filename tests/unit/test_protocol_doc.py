"""The protocol document's frame examples are the typed frames, both directions.

Every fenced block of ``docs/protocol.md`` whose info string is exactly ``json frame`` holds one
frame. Each parses into its frame class and writes back to the same JSON object, and every frame
class of ``AppMessage`` and ``ExtensionMessage`` has an example, so the document, the app and
(with ``extension/test/protocol_doc.test.js``) the extension cannot drift apart.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from support.app_frames import parse_app_message, parse_frame
from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.constants import MAX_CODE_LENGTH, MAX_ERROR_LENGTH, MAX_PROOF_LENGTH
from tabrelay.protocol.messages import (
    AppMessage,
    AuthOk,
    Command,
    CommandError,
    ErrorNotice,
    ExtensionMessage,
    parse_extension_message,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
BLOCK = re.compile(r"^```json frame\n(.*?)\n```$", re.MULTILINE | re.DOTALL)
APP_FRAMES = set(typing.get_args(AppMessage))
EXTENSION_FRAMES = set(typing.get_args(ExtensionMessage))


def examples() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_document_has_frame_examples_and_no_block_is_left_unread() -> None:
    text = DOC.read_text(encoding="utf-8")
    # A block with a near-miss info string would silently escape the checks below.
    opened = [line for line in text.splitlines() if line.startswith("```json")]
    assert len(opened) == len(examples()) >= len(APP_FRAMES | EXTENSION_FRAMES)
    assert all(line == "```json frame" for line in opened)


@pytest.mark.parametrize("text", examples())
def test_each_example_parses_into_its_frame_and_writes_back_the_same_object(text: str) -> None:
    frame = parse_frame(text)
    assert frame.to_wire() == json.loads(text)
    # The direction's own parser reads it the same way (the relay reads only the extension's).
    if type(frame) in EXTENSION_FRAMES:
        assert parse_extension_message(text) == frame
    if type(frame) in APP_FRAMES:
        assert parse_app_message(text) == frame


def test_every_frame_type_of_both_directions_has_an_example() -> None:
    shown = {type(parse_frame(text)) for text in examples()}
    missing = {cls.__name__ for cls in (APP_FRAMES | EXTENSION_FRAMES) - shown}
    assert not missing, f"docs/protocol.md has no json frame example of {sorted(missing)}"


def test_each_frame_parses_only_as_the_direction_it_travels() -> None:
    for text in examples():
        frame = parse_frame(text)
        if type(frame) not in EXTENSION_FRAMES:  # the app never takes its own frames
            with pytest.raises(ProtocolViolation) as refused:
                parse_extension_message(text)
            assert refused.value.code in {"unknown_type", "bad_response"}
        if type(frame) not in APP_FRAMES:
            with pytest.raises(ProtocolViolation):
                parse_app_message(text)


@pytest.mark.parametrize(
    ("wire", "code"),
    [
        ({"id": 17, "method": "tabs.list"}, "bad_id"),
        ({"id": "1", "method": 5}, "bad_field"),
        ({"id": "1", "method": "tabs.get", "params": [1]}, "not_object"),
        ({"type": "auth.challenge", "protocol": "1", "nonce": "A"}, "bad_field"),
        ({"type": "auth.ok"}, "bad_field"),
        ({"type": "relay.port", "port": "23005"}, "bad_field"),
        ({"type": "error", "code": "x"}, "bad_field"),
        ({"type": "error", "code": "x", "message": 5}, "bad_field"),
        ({"type": "error", "code": "x" * (MAX_CODE_LENGTH + 1), "message": "m"}, "bad_field"),
        ({"type": "error", "code": "x", "message": "m" * (MAX_ERROR_LENGTH + 1)}, "bad_field"),
        ({"type": "auth.ok", "proof": "P" * (MAX_PROOF_LENGTH + 1)}, "bad_field"),
        ({"type": "hello-there"}, "unknown_type"),
    ],
)
def test_a_malformed_app_frame_is_refused_with_its_code(wire: dict[str, Any], code: str) -> None:
    with pytest.raises(ProtocolViolation) as refused:
        parse_app_message(json.dumps(wire))
    assert refused.value.code == code
    assert json.dumps(wire) not in refused.value.message  # names the fault, never the frame


def test_commands_and_errors_keep_what_the_wire_omits_absent() -> None:
    assert parse_app_message('{"id": "1", "method": "tabs.list"}') == Command("1", "tabs.list")
    assert Command("1", "tabs.list").to_wire() == {"id": "1", "method": "tabs.list", "params": {}}
    assert CommandError("2", "gone").to_wire() == {"id": "2", "error": "gone"}


def test_app_frames_are_kept_whole_up_to_the_documented_limits() -> None:
    """The same limits as the extension's parseAppFrame (extension/test/validation.test.js)."""
    longest = ErrorNotice("x" * MAX_CODE_LENGTH, "m" * MAX_ERROR_LENGTH)
    assert parse_app_message(json.dumps(longest.to_wire())) == longest
    proof = AuthOk("P" * MAX_PROOF_LENGTH)
    assert parse_app_message(json.dumps(proof.to_wire())) == proof
