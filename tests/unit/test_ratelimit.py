"""Failed authentication attempts are rate-limited per key; successes never count."""

from __future__ import annotations

from tabrelay.relay.ratelimit import FailureLimiter, FailureLimits


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


def test_each_key_has_its_own_failures_and_cool_down() -> None:
    clock = Clock()
    limits = FailureLimits(max_failures=3, window=10, cooldown=30, clock=clock)
    assert [limits.record_failure("page") for _ in range(3)] == [False, False, True]
    assert limits.record_failure("guesser") is False
    assert limits.blocked("page") and limits.retry_after("page") == 30
    assert not limits.blocked("guesser") and limits.retry_after("guesser") == 0
    clock.now += 30
    assert not limits.blocked("page")


def test_a_key_never_seen_is_not_blocked() -> None:
    limits = FailureLimits(max_failures=1, clock=Clock())
    assert limits.record_failure("page")
    assert not limits.blocked("valid client") and limits.retry_after("valid client") == 0
    assert limits.tracked == 1


def test_thousands_of_keys_are_bounded() -> None:
    clock = Clock()
    limits = FailureLimits(max_failures=3, window=10, cooldown=30, max_keys=64, clock=clock)
    for n in range(5000):
        limits.record_failure(f"token {n}")
        clock.now += 0.001
    assert limits.tracked == 64


def test_an_idle_key_is_forgotten_before_one_cooling_down() -> None:
    clock = Clock()
    limits = FailureLimits(max_failures=2, window=10, cooldown=30, max_keys=2, clock=clock)
    limits.record_failure("page")
    assert limits.record_failure("page")
    limits.record_failure("once")
    clock.now += 11  # "once" is outside the window; "page" still cools down
    limits.record_failure("new")
    assert limits.tracked == 2
    assert limits.blocked("page")
    assert limits.record_failure("new")  # its first failure was remembered


def test_when_no_key_is_idle_the_least_recent_is_forgotten() -> None:
    clock = Clock()
    limits = FailureLimits(max_failures=2, window=10, cooldown=30, max_keys=2, clock=clock)
    limits.record_failure("a")
    limits.record_failure("b")
    limits.record_failure("c")
    assert limits.record_failure("c")  # its second failure within the window
