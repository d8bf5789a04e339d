"""Rate limits on failed authentication, per offender, loopback included (THREATS R3).

Only failures count, and they count against the key they were made with (the credential
presented, the Origin, the extension id): past ``max_failures`` within ``window`` seconds that
key is refused until ``cooldown`` seconds have passed. Callers check a key only for requests
that failed to authenticate, so a caller with a valid credential is never slowed by anyone's
failures, its own included.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable


class FailureLimiter:
    """The failures of one key."""

    def __init__(
        self,
        *,
        max_failures: int = 10,
        window: float = 10.0,
        cooldown: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.cooldown = cooldown
        self._clock = clock
        self._failures: deque[float] = deque()
        self._blocked_until = 0.0

    def blocked(self) -> bool:
        return self._clock() < self._blocked_until

    def retry_after(self) -> float:
        return max(0.0, self._blocked_until - self._clock())

    def idle(self) -> bool:
        """Nothing to remember: no cool-down and no failure within the window."""
        now = self._clock()
        return now >= self._blocked_until and not (
            self._failures and self._failures[-1] > now - self.window
        )

    def record_failure(self) -> bool:
        """Count a failure; ``True`` when this one starts a cool-down."""
        now = self._clock()
        self._failures.append(now)
        while self._failures and self._failures[0] <= now - self.window:
            self._failures.popleft()
        if len(self._failures) >= self.max_failures and not self.blocked():
            self._blocked_until = now + self.cooldown
            self._failures.clear()
            return True
        return False


class FailureLimits:
    """A ``FailureLimiter`` per key, at most ``max_keys`` of them (the least recent go first)."""

    def __init__(
        self,
        *,
        max_failures: int = 10,
        window: float = 10.0,
        cooldown: float = 30.0,
        max_keys: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.cooldown = cooldown
        self.max_keys = max_keys
        self._clock = clock
        self._limiters: OrderedDict[Hashable, FailureLimiter] = OrderedDict()

    def blocked(self, key: Hashable) -> bool:
        limiter = self._limiters.get(key)
        return limiter is not None and limiter.blocked()

    def retry_after(self, key: Hashable) -> float:
        limiter = self._limiters.get(key)
        return limiter.retry_after() if limiter is not None else 0.0

    def record_failure(self, key: Hashable) -> bool:
        """Count a failure against ``key``; ``True`` when this one starts its cool-down."""
        limiter = self._limiters.pop(key, None) or FailureLimiter(
            max_failures=self.max_failures,
            window=self.window,
            cooldown=self.cooldown,
            clock=self._clock,
        )
        self._limiters[key] = limiter  # most recent last
        started = limiter.record_failure()
        while len(self._limiters) > self.max_keys:
            self._forget_one(keep=key)
        return started

    def _forget_one(self, *, keep: Hashable) -> None:
        """Drop an idle key if there is one, else the least recent one not cooling down, else
        the least recent; never ``keep`` (the key whose failure is being counted)."""
        others = [(k, limiter) for k, limiter in self._limiters.items() if k != keep]
        for choose in (FailureLimiter.idle, lambda limiter: not limiter.blocked()):
            for key, limiter in others:
                if choose(limiter):
                    del self._limiters[key]
                    return
        del self._limiters[others[0][0]]

    @property
    def tracked(self) -> int:
        """How many keys are remembered now (bounded by ``max_keys``)."""
        return len(self._limiters)
