"""Relay-level figures: command round trip through a real socket, and event throughput."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from stats import percentile

from support.harness import running_core
from tabrelay.config.paths import Paths


async def relay_benchmarks(ctx: Any) -> list[dict[str, Any]]:
    home: Path = ctx.home
    rows: list[dict[str, Any]] = []
    async with running_core(Paths.resolve({"TABRELAY_HOME": str(home)})) as relay:
        await relay.extension()
        await relay.browser_count(1)
        browser = relay.core.registry.resolve()
        for _ in range(50):  # warm up
            await browser.cdp(1, "Runtime.evaluate", {"expression": "1+1"})
        samples = []
        for _ in range(1000):
            started = time.perf_counter()
            await browser.cdp(1, "Runtime.evaluate", {"expression": "1+1"})
            samples.append((time.perf_counter() - started) * 1000)
        rows.append(
            {
                "name": "relay cdp.send round trip p50 (fake extension)",
                "value": percentile(samples, 0.5),
                "unit": "ms",
            }
        )
        rows.append(
            {
                "name": "relay cdp.send round trip p95 (fake extension)",
                "value": percentile(samples, 0.95),
                "unit": "ms",
            }
        )

        subscription = relay.core.hub.subscribe(maxlen=300_000)
        extension = relay.extensions[0]
        assert extension.connection is not None
        total = 200_000
        frame = '{"type":"cdp_event","tabId":1,"method":"Network.dataReceived","params":{"n":%d}}'
        started = time.perf_counter()
        for n in range(total):
            await extension.connection.send(frame % n)
        received = 0
        async with asyncio.timeout(120):
            while received < total:
                received += len(await subscription.wait())
        elapsed = time.perf_counter() - started
        rows.append(
            {
                "name": "relay events into the hub (sender and relay on one core)",
                "value": total / elapsed,
                "unit": "events/s",
            }
        )
    return rows
