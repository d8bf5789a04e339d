"""A tab that answers CDP from a script, for unit tests of the tools' CDP conversations."""

from __future__ import annotations

import asyncio
from typing import Any


class ScriptedTab:
    """``answers[method]`` (dots as underscores: ``DOM_describeNode``) is a value, a list of
    values (one per call), an exception to raise, a function of the params, or a future to
    wait for; what was sent is kept in ``sent``."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def cdp(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        self.sent.append((method, params or {}))
        answer = self.answers.get(method.replace(".", "_"), {})
        if isinstance(answer, list):
            answer = answer.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, asyncio.Future):
            return await answer
        if callable(answer):
            return answer(params or {})
        return answer

    def methods(self) -> list[str]:
        return [m for m, _ in self.sent]
