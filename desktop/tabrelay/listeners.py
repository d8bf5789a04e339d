"""Listeners: how a room tells the rooms above it that something changed, without knowing them.

One list of callbacks per kind of change, told in the order they were added. A listener is
another room's code (the core, the UI, MCP notifications): one that fails is logged and the
others are still told, so it can neither undo the change nor keep it from the rest.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

P = ParamSpec("P")
logger = logging.getLogger(__name__)


class Listeners(Generic[P]):
    """The listeners of one kind of change; ``what`` names it in the log of a failure."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._listeners: list[Callable[P, object]] = []

    def __len__(self) -> int:
        return len(self._listeners)

    def add(self, listener: Callable[P, object]) -> Callable[[], None]:
        """Tell ``listener`` of every change from now on; returns the way to stop (which may
        be called more than once)."""
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    def tell(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every listener with the change, in order; a failing one is logged."""
        for listener in list(self._listeners):  # one may remove itself, or another
            try:
                listener(*args, **kwargs)
            except Exception:
                logger.exception("a listener of %s failed", self.what)
