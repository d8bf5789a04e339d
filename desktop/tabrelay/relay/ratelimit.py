"""Rate limit on failed authentication attempts, loopback included (THREATS R3).

Only failures count, so a correct extension is never slowed; past ``max_failures`` within
``window`` seconds every attempt is refused until ``cooldown`` seconds have passed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class FailureLimiter:
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
