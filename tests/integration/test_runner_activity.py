"""The tool runner tells its activity listeners (the tray's "working") each time a call starts
or ends, through ``Listeners``: a failing listener breaks no call, and stopping is idempotent."""

from __future__ import annotations

from support.harness import RelayHarness
from tabrelay.endpoint.calls import Caller
from tabrelay.tools.catalog import BY_NAME


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


async def test_activity_listeners_hear_each_call_and_a_failing_one_breaks_none(
    relay: RelayHarness,
) -> None:
    await relay.extension()
    await relay.browser_count(1)
    runner = relay.core.runner
    assert runner is not None
    heard: list[int] = []
    stop = runner.add_activity_listener(heard.append)
    runner.add_activity_listener(lambda count: 1 / 0)  # type: ignore[func-returns-value]
    evaluate = BY_NAME["browser_evaluate"]
    result = await runner.call(evaluate, {"tab_id": 1, "expression": "1"}, Caller("t"), no_progress)
    assert result.text and heard == [1, 0]

    stop()
    stop()  # stopping twice is harmless
    await runner.call(evaluate, {"tab_id": 1, "expression": "2"}, Caller("t"), no_progress)
    assert heard == [1, 0]
