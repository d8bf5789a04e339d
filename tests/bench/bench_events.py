"""Events per second from the relay into the dashboard's Events model, with the UI's stalls.

The app side (``events_app.py``) is the real core and desktop UI on a qasync loop, offscreen,
in its own process, with the dashboard open on the Events page. This process is the browser: a
scripted extension over a real WebSocket that authenticates like the real one and sends CDP
events. Three runs: a steady 10,000 events/s for a few seconds; a burst as fast as this process
can send; the same burst with the dashboard closed (what the view costs). Rate = events
that reached the model / (time the end marker reached the model − time the first event was
sent), on the machine-wide monotonic clock.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from rig import AppHome, RigError
from stats import Row, row, verdict

from support.fake_extension import EXTENSION_ID, FakeExtension

HERE = Path(__file__).resolve().parent
STEADY_RATE = 10_000
# Typical CDP events of a busy page, by size (params as Chromium sends them, shortened).
TEMPLATES = (
    '{"type":"cdp_event","tabId":1,"method":"Network.dataReceived","params":{"requestId":'
    '"1000.%d","timestamp":1234.5678,"dataLength":4096,"encodedDataLength":1200}}',
    '{"type":"cdp_event","tabId":1,"method":"Network.responseReceived","params":{"requestId":'
    '"1000.%d","loaderId":"4F2C1B0A9E8D7C6B","timestamp":1234.56,"type":"XHR","response":{"url":'
    '"https://example.com/api/items?page=2","status":200,"statusText":"OK","headers":{'
    '"content-type":"application/json","cache-control":"no-cache"},"mimeType":"application/json",'
    '"connectionReused":true,"encodedDataLength":320,"protocol":"h2"}}}',
    '{"type":"cdp_event","tabId":1,"method":"Runtime.consoleAPICalled","params":{"type":"log",'
    '"args":[{"type":"string","value":"tick %d"}],"executionContextId":1,"timestamp":1.7e12}}',
)
MARKER = '{"type":"cdp_event","tabId":1,"method":"%s","params":{}}'


class EventsApp:
    """The app-side process and its line protocol."""

    def __init__(self, home: AppHome, log_path: Path) -> None:
        self.home = home
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                str(HERE / "events_app.py"),
                str(self.home.root),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=self.home.env(QT_QPA_PLATFORM="offscreen"),
            )
        return int((await self.read(timeout=60))["relay_port"])

    async def read(self, *, timeout: float) -> dict[str, Any]:
        assert self.process is not None and self.process.stdout is not None
        async with asyncio.timeout(timeout):
            line = await self.process.stdout.readline()
        if not line:
            raise RigError(f"the events app exited; see {self.log_path}")
        return json.loads(line)  # type: ignore[no-any-return]

    async def tell(self, command: str) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(command.encode() + b"\n")
        await self.process.stdin.drain()

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        try:
            await self.tell("quit")
            await asyncio.wait_for(self.process.wait(), 15)
        except (TimeoutError, ConnectionError):
            self.process.kill()
            await self.process.wait()


async def send_events(extension: FakeExtension, total: int, rate: float | None) -> float:
    """Send ``total`` events (at ``rate`` per second, or as fast as possible); the monotonic
    time the first one left."""
    connection = extension.connection
    assert connection is not None
    await connection.send(MARKER % "Bench.start")
    started = time.monotonic()
    sent = 0
    while sent < total:
        due = total if rate is None else min(total, int((time.monotonic() - started) * rate) + 50)
        while sent < due:
            await connection.send(TEMPLATES[sent % len(TEMPLATES)] % sent)
            sent += 1
        if rate is not None:
            await asyncio.sleep(0.002)
    await connection.send(MARKER % "Bench.end")
    return started


async def run_phase(
    app: EventsApp, extension: FakeExtension, total: int, rate: float | None
) -> dict[str, Any]:
    await app.tell("arm")
    assert (await app.read(timeout=10)).get("armed")
    started = await send_events(extension, total, rate)
    result = await app.read(timeout=120)
    result["seconds"] = result["end"] - started
    result["offered"] = total
    result["rate"] = result["events"] / result["seconds"]
    return result


async def events_benchmarks(ctx: Any) -> list[Row]:
    home = AppHome.create(ctx.home / "app", paired=(EXTENSION_ID,))
    app = EventsApp(home, ctx.log_dir / "events_app.log")
    steady_total = STEADY_RATE * (1 if ctx.quick else 4)
    burst_total = 30_000 if ctx.quick else 150_000
    try:
        port = await app.start()
        extension = FakeExtension(port, home.relay_token)
        await extension.connect()
        try:
            await run_phase(app, extension, 2_000, None)  # warm up: imports, first paints
            steady = await run_phase(app, extension, steady_total, STEADY_RATE)
            burst = await run_phase(app, extension, burst_total, None)
            await app.tell("hide")
            assert (await app.read(timeout=10)).get("hidden")
            hidden = await run_phase(app, extension, burst_total, None)
        finally:
            await extension.close()
    finally:
        await app.stop()
    rows: list[Row] = []
    phases = (
        ("steady 10,000/s", steady),
        ("burst", burst),
        ("burst, dashboard closed", hidden),
    )
    for label, result in phases:
        common = {"group": "events", "phase": label}
        rows += [
            row(f"events {label} · offered", result["offered"], "events", **common),
            row(f"events {label} · into the model", result["events"], "events", **common),
            row(f"events {label} · dropped for the UI (hub queue full)", result["dropped"],
                "events", **common),
            row(f"events {label} · rate into the model", result["rate"], "events/s", **common),
            row(f"events {label} · model batches", result["batches"], "", **common),
            row(f"events {label} · UI stall p99", result["p99_stall_ms"], "ms", **common),
            row(f"events {label} · longest UI stall", result["worst_stall_ms"], "ms", **common),
            row(f"events {label} · longest batch delivery (hub → model, one call)",
                result["worst_drain_ms"], "ms", batch=result["worst_drain_batch"], **common),
            row(f"events {label} · largest batch", result["largest_batch"], "events", **common),
            row(f"events {label} · longest garbage collection", result["worst_gc_ms"], "ms",
                generation=result["worst_gc_generation"], **common),
            row(f"events {label} · all garbage collections", result["gc_ms"], "ms", **common),
            row(f"events {label} · objects the collector tracks, at the end",
                result["gc_tracked"], "objects", **common),
            *[
                row(f"events {label} · stalled in {stack}", count * 5, "ms", group="stalls",
                    phase=label, stack=stack)
                for stack, count in result["stall_stacks"]
            ],
        ]  # fmt: skip
    rows.append(
        row(
            "events into the model ≥ 10,000/s (burst)",
            burst["rate"],
            "events/s",
            target="≥ 10,000 events/s",
            met=burst["rate"] >= 10_000,
            group="targets",
        )
    )
    for label, result in (("steady 10,000/s", steady), ("burst", burst)):
        rows.append(
            verdict(f"longest UI stall < 100 ms ({label})", result["worst_stall_ms"], "ms", 100,
                    target="< 100 ms")
        )  # fmt: skip
    return rows
