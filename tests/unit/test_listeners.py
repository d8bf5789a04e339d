"""Listeners: told in order, a failing one logged and the rest still told, removal idempotent."""

from __future__ import annotations

import logging

import pytest

from tabrelay.listeners import Listeners


def test_listeners_are_told_in_order_with_the_change() -> None:
    heard: list[tuple[str, int]] = []
    changes: Listeners[[int]] = Listeners("numbers")
    changes.add(lambda n: heard.append(("first", n)))
    changes.add(lambda n: heard.append(("second", n)))
    changes.tell(7)
    assert heard == [("first", 7), ("second", 7)]


def test_a_failing_listener_is_logged_and_the_others_are_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[int] = []
    changes: Listeners[[int]] = Listeners("numbers")

    def broken(n: int) -> None:
        raise RuntimeError("the UI is gone")

    changes.add(broken)
    changes.add(heard.append)
    with caplog.at_level(logging.ERROR):
        changes.tell(1)
    assert heard == [1]
    assert "a listener of numbers failed" in caplog.text
    assert "the UI is gone" in caplog.text


def test_a_listener_removed_while_telling_is_not_told_again_and_removal_is_idempotent() -> None:
    heard: list[str] = []
    changes: Listeners[[]] = Listeners("nothing")

    def once() -> None:
        heard.append("once")
        stop()

    stop = changes.add(once)
    changes.add(lambda: heard.append("always"))
    changes.tell()
    changes.tell()
    stop()  # a second time does nothing
    assert heard == ["once", "always", "always"]
    assert len(changes) == 1
