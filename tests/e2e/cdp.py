"""A small Chrome DevTools Protocol client on the browser's own debugging port.

The e2e tests use it to see what a person would see (tabs, page contents, the badge, the
extension's state) and to act as a person would (typing into the options page). It is the
tests' eyes and hands, never part of the relay path under test.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

Event = dict[str, Any]


class CdpError(Exception):
    """Chromium answered a CDP command with an error."""


class CdpClient:
    """One browser-level connection; flat sessions address targets (``sessionId``)."""

    def __init__(self, connection: ClientConnection) -> None:
        self._connection = connection
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._listeners: list[tuple[Callable[[Event], bool], asyncio.Queue[Event]]] = []
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, url: str) -> CdpClient:
        connection = await connect(url, max_size=256 * 2**20, ping_interval=None)
        return cls(connection)

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float = 10.0,
    ) -> Any:
        message: dict[str, Any] = {"id": next(self._ids), "method": method}
        if params:
            message["params"] = params
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[message["id"]] = future
        try:
            await self._connection.send(json.dumps(message))
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._pending.pop(message["id"], None)

    def listen(self, accept: Callable[[Event], bool]) -> asyncio.Queue[Event]:
        """A queue of every event ``accept`` takes, from now on; ``unlisten`` it after."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        self._listeners.append((accept, queue))
        return queue

    def unlisten(self, queue: asyncio.Queue[Event]) -> None:
        self._listeners = [(a, q) for a, q in self._listeners if q is not queue]

    async def close(self) -> None:
        await self._connection.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _read(self) -> None:
        try:
            async for frame in self._connection:
                message = json.loads(frame)
                if "id" in message:
                    future = self._pending.get(message["id"])
                    if future is None or future.done():
                        continue
                    if "error" in message:
                        future.set_exception(CdpError(json.dumps(message["error"])))
                    else:
                        future.set_result(message.get("result", {}))
                else:
                    for accept, queue in self._listeners:
                        if accept(message):
                            queue.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(CdpError("the browser connection closed"))


class Session:
    """A flat session attached to one target (a page, the extension's service worker)."""

    def __init__(self, client: CdpClient, session_id: str, target_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.target_id = target_id

    @classmethod
    async def attach(cls, client: CdpClient, target_id: str) -> Session:
        result = await client.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        return cls(client, result["sessionId"], target_id)

    async def send(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return await self.client.send(method, params, session_id=self.session_id, **kwargs)

    async def evaluate(self, expression: str, *, timeout: float = 10.0) -> Any:
        """The value of a JavaScript expression (promises awaited), or raise on an exception."""
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError(f"JavaScript threw: {text}")
        return result["result"].get("value")

    async def detach(self) -> None:
        with contextlib.suppress(CdpError, ConnectionClosed, TimeoutError):
            await self.client.send("Target.detachFromTarget", {"sessionId": self.session_id})
