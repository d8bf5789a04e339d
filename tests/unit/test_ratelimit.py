"""Failed authentication attempts are rate-limited; successes never count."""

from __future__ import annotations

from tabrelay.relay.ratelimit import FailureLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_blocks_after_too_many_failures_in_the_window_then_recovers() -> None:
    clock = Clock()
    limiter = FailureLimiter(max_failures=3, window=10, cooldown=30, clock=clock)
    assert not limiter.record_failure() and not limiter.record_failure()
    assert limiter.record_failure()  # the third starts the cool-down
    assert limiter.blocked() and limiter.retry_after() == 30
    clock.now += 29.9
    assert limiter.blocked()
    clock.now += 0.2
    assert not limiter.blocked()


def test_failures_spread_over_time_do_not_block() -> None:
    clock = Clock()
    limiter = FailureLimiter(max_failures=3, window=10, cooldown=30, clock=clock)
    for _ in range(10):
        assert not limiter.record_failure()
        clock.now += 6
    assert not limiter.blocked()
