"""Timing probes on the app's own layers, for the per-hop breakdown of one tool call.

The probes wrap, in this process only, the places a call passes through: the MCP endpoint's
ASGI entry (``BearerAuth``), ``McpEndpoint.call``, the command log write, and every relay
command (``Browser.send_command``). Nothing under ``desktop/`` is changed; ``Probe.remove``
puts the originals back. The same wrapper records the relay commands of a tool call, so the
bench can replay exactly those CDP commands straight to Chromium (the floor).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tabrelay.endpoint.auth import BearerAuth
from tabrelay.endpoint.calls import ToolRunner
from tabrelay.endpoint.server import McpEndpoint
from tabrelay.relay.browser import Browser


@dataclass
class RelayCommand:
    method: str  # the relay method (cdp.send, tabs.get…)
    params: dict[str, Any]
    result: Any
    started: float  # perf_counter seconds
    ended: float

    @property
    def ms(self) -> float:
        return (self.ended - self.started) * 1000

    @property
    def cdp_method(self) -> str | None:
        return str(self.params["method"]) if self.method == "cdp.send" else None


@dataclass
class CallTimes:
    """What one tool call spent in each layer (ms)."""

    asgi: float = 0.0  # POST /mcp handled by the server, request in to last byte out
    endpoint: float = 0.0  # McpEndpoint.call: our tool runner, after the MCP SDK's dispatch
    log: float = 0.0  # handing the command log row to the log's writer thread
    commands: list[RelayCommand] = field(default_factory=list)

    @property
    def relay(self) -> float:
        """Time with at least one relay command in flight (commands may overlap)."""
        return _covered(self.commands)

    @property
    def relay_cdp(self) -> float:
        return _covered([c for c in self.commands if c.cdp_method])

    @property
    def relay_other(self) -> float:
        return _covered([c for c in self.commands if not c.cdp_method])

    @property
    def overlap(self) -> int:
        """The most relay commands in flight at once."""
        edges = sorted(
            [(c.started, 1) for c in self.commands] + [(c.ended, -1) for c in self.commands]
        )
        most = current = 0
        for _, step in edges:
            current += step
            most = max(most, current)
        return most


def _covered(commands: list[RelayCommand]) -> float:
    """Milliseconds covered by the union of the commands' intervals."""
    total, end = 0.0, float("-inf")
    for command in sorted(commands, key=lambda c: c.started):
        if command.ended > end:
            total += command.ended - max(command.started, end)
            end = command.ended
    return total * 1000


class Probe:
    def __init__(self) -> None:
        self.current = CallTimes()
        self._originals: list[tuple[type, str, Any]] = []

    def reset(self) -> CallTimes:
        done, self.current = self.current, CallTimes()
        return done

    def install(self) -> Probe:
        probe = self
        send_command = Browser.send_command
        endpoint_call = McpEndpoint.call
        record = ToolRunner._record
        asgi = BearerAuth.__call__

        async def timed_send(self: Browser, method: str, params: Any = None, **kw: Any) -> Any:
            started = time.perf_counter()
            result = await send_command(self, method, params, **kw)
            command = RelayCommand(method, dict(params or {}), result, started, time.perf_counter())
            probe.current.commands.append(command)
            return result

        async def timed_call(self: McpEndpoint, *args: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return await endpoint_call(self, *args, **kw)
            finally:
                probe.current.endpoint += (time.perf_counter() - started) * 1000

        def timed_record(self: ToolRunner, *args: Any, **kw: Any) -> None:
            started = time.perf_counter()  # handing the row to the log's writer thread
            try:
                record(self, *args, **kw)
            finally:
                probe.current.log += (time.perf_counter() - started) * 1000

        async def timed_asgi(self: BearerAuth, scope: Any, receive: Any, send: Any) -> None:
            started = time.perf_counter()
            try:
                await asgi(self, scope, receive, send)
            finally:
                if scope.get("type") == "http" and scope.get("method") == "POST":
                    probe.current.asgi += (time.perf_counter() - started) * 1000

        for owner, name, wrapper in (
            (Browser, "send_command", timed_send),
            (McpEndpoint, "call", timed_call),
            (ToolRunner, "_record", timed_record),
            (BearerAuth, "__call__", timed_asgi),
        ):
            self._originals.append((owner, name, getattr(owner, name)))
            setattr(owner, name, wrapper)
        return self

    def remove(self) -> None:
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()


def cdp_sequence(times: CallTimes) -> list[RelayCommand]:
    """The CDP commands of a recorded call, in the order they were sent (the floor replays
    these)."""
    return sorted((c for c in times.commands if c.cdp_method), key=lambda c: c.started)


def waves(sequence: list[RelayCommand]) -> list[list[RelayCommand]]:
    """The commands grouped as the tool sent them: a command sent while others were still in
    flight joins their wave, so a replay can send each wave at once, as the tool did."""
    grouped: list[list[RelayCommand]] = []
    end = float("-inf")
    for command in sequence:
        if grouped and command.started < end:
            grouped[-1].append(command)
            end = max(end, command.ended)
        else:
            grouped.append([command])
            end = command.ended
    return grouped


async def replay(
    sequence: list[RelayCommand], send: Any, note: Callable[[str, float], None] | None = None
) -> None:
    """Send the recorded CDP commands again through ``send(method, params)``, each wave at
    once; ``note`` gets each command's method and milliseconds.

    Remote object ids are per session and per call: an ``objectId`` the recording got back is
    mapped to the one this replay got back, and substituted in later parameters.
    """
    ids: dict[str, Any] = {}

    async def one(command: RelayCommand) -> Any:
        params = _substitute(command.params.get("params") or {}, ids)
        started = time.perf_counter()
        result = await send(command.cdp_method, params)
        if note is not None:
            note(str(command.cdp_method), (time.perf_counter() - started) * 1000)
        return result

    for wave in waves(sequence):
        results = await asyncio.gather(*(one(command) for command in wave))
        for command, result in zip(wave, results, strict=True):
            _map_ids(command.result, result, ids)


# Execution context ids are per session too (Tabrelay's world in the page): mapped alike.
_CONTEXT_KEYS = ("executionContextId", "contextId")


def _substitute(value: Any, ids: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {
            k: ids.get(f"context {v}", v) if k in _CONTEXT_KEYS else _substitute(v, ids)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_substitute(v, ids) for v in value]
    if isinstance(value, str):
        return ids.get(value, value)
    return value


def _map_ids(recorded: Any, fresh: Any, ids: dict[str, Any]) -> None:
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        for key, value in recorded.items():
            if key == "objectId" and isinstance(value, str) and isinstance(fresh.get(key), str):
                ids[value] = fresh[key]
            elif key in _CONTEXT_KEYS and isinstance(value, int):
                ids[f"context {value}"] = fresh.get(key)
            elif key in fresh:
                _map_ids(value, fresh[key], ids)
    elif isinstance(recorded, list) and isinstance(fresh, list):
        for old, new in zip(recorded, fresh, strict=False):
            _map_ids(old, new, ids)


def _scripts() -> list[tuple[str, str]]:
    """(script, what a relay command that runs it is for), the longest first."""
    from tabrelay.tools.acting import aftermath
    from tabrelay.tools.page import editor_text, page_outline, refs, shadow_roots

    known = [
        (page_outline._KEEP_AND_RUN, "the outline, sent whole and kept in the world"),
        (page_outline._RUN_KEPT, "the outline, kept in the world"),
        (page_outline._RUN_SEALED, "the outline of the document read last, in its world"),
        (editor_text.SCRIPT, "code editors' text, in the page's world"),
        (shadow_roots.CANDIDATES, "closed shadow roots looked for"),
        (shadow_roots.REMEMBER, "closed shadow roots opened to Tabrelay's world"),
        (refs._CHECK, "the element checked: there, shown, enabled, on top"),
        (page_outline.ELEMENT, "the element a ref names"),
        (page_outline.ID_OF, "the id the world holds the element by"),
        (aftermath._PROBE, "what the action started"),
        (aftermath._FOLLOWED, "where the page went"),
    ]
    return sorted(known, key=lambda k: -len(k[0]))


_PURPOSES = {
    "tabs.get": "the tab's title and address",
    "Page.getFrameTree": "the frames and their documents",
    "Page.createIsolatedWorld": "Tabrelay's world in the document",
    "DOM.getDocument": "the document's root",
    "DOM.resolveNode": "a node as an object of a world",
    "DOM.describeNode": "a node's backend id",
    "DOM.getContentQuads": "where the element is drawn",
    "DOM.scrollIntoViewIfNeeded": "the element scrolled into view",
    "Input.dispatchMouseEvent": "the mouse",
    "Input.dispatchKeyEvent": "a key",
    "Runtime.releaseObjectGroup": "the call's page objects let go",
    "Page.navigate": "the navigation",
    "Page.enable": "the load events",
    "Fetch.continueRequest": "the guard lets the document through",
}


def purpose(command: RelayCommand) -> str:
    """What a tool's relay command is for, as the bench's step rows say it."""
    params = command.params.get("params") or {}
    source = params.get("functionDeclaration") or params.get("expression")
    if isinstance(source, str):
        for script, what in _scripts():
            if source == script or (len(script) > 200 and script.strip() in source):
                return what
        return "the agent's code" if command.cdp_method == "Runtime.evaluate" else "a page script"
    return _PURPOSES.get(command.cdp_method or command.method, "")
