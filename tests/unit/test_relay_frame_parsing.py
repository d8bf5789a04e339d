"""The relay parses a large extension frame with the cycle collector paused
(``relay.session.parse_frame``), and leaves the collector as it was whatever the frame holds."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator

import pytest

from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.messages import CommandResult
from tabrelay.relay.session import LARGE_FRAME, parse_frame


@contextlib.contextmanager
def collections_counted() -> Iterator[list[int]]:
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


def ax_answer(nodes: int) -> str:
    """A CDP answer shaped like Accessibility.getFullAXTree's: many small objects."""
    node = {"nodeId": "1", "role": {"type": "role", "value": "button"}, "properties": []}
    return json.dumps({"id": "7", "result": {"nodes": [dict(node, n=i) for i in range(nodes)]}})


def test_a_large_answer_is_parsed_without_the_cycle_collector_running() -> None:
    """Decoding a multi-megabyte answer makes hundreds of thousands of containers and no
    cycles: a collection meanwhile finds nothing, yet each one walks the growing heap. One
    collection may follow, once the collector is back (there were about 170 before)."""
    text = ax_answer(40_000)
    assert len(text) > 1_000_000 and gc.isenabled()
    with collections_counted() as started:
        message = parse_frame(text)
    assert len(started) <= 1, started  # of whichever generation is due
    assert isinstance(message, CommandResult) and len(message.result["nodes"]) == 40_000
    assert gc.isenabled()


def test_a_small_frame_is_parsed_as_it_comes() -> None:
    text = json.dumps({"id": "1", "result": {"n": [[0] * 10] * 10}})
    assert len(text) < LARGE_FRAME
    assert parse_frame(text) == CommandResult("1", {"n": [[0] * 10] * 10})


@pytest.mark.parametrize(
    ("spoil", "refused"),
    [
        (lambda text: text, False),
        (lambda text: text[:-1], True),  # cut short
        (lambda text: text.replace('"n": 0', '"n": NaN', 1), True),  # a bare NaN
        (lambda text: text.replace('"id": "7"', '"id": 7', 1), True),  # not a protocol answer
        (lambda text: "[" * 200 + text + "]" * 200, True),  # nested too deeply
    ],
    ids=["whole", "cut-short", "nan", "bad-id", "too-deep"],
)
@pytest.mark.parametrize("enabled", [True, False], ids=["collector-on", "collector-off"])
def test_the_cycle_collector_is_left_as_it_was_whatever_the_frame_holds(
    spoil: Callable[[str], str], refused: bool, enabled: bool
) -> None:
    text = spoil(ax_answer(20_000))
    assert len(text) >= LARGE_FRAME
    (gc.enable if enabled else gc.disable)()
    try:
        if refused:
            with pytest.raises(ProtocolViolation):
                parse_frame(text)
        else:
            assert isinstance(parse_frame(text), CommandResult)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
