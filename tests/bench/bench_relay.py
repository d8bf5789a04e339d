"""Relay-level figures with a scripted extension: command round trip and event throughput.

No browser: the fake extension answers at once, so these are the app's own relay costs (one
process, one loop, sender and relay sharing a CPU).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from stats import Row, percentile, row

from support.harness import running_core
from tabrelay.config.paths import Paths


async def relay_benchmarks(ctx: Any) -> list[Row]:
    commands = 200 if ctx.quick else 1000
    total = 50_000 if ctx.quick else 200_000
    rows: list[Row] = []
    async with running_core(Paths.resolve({"TABRELAY_HOME": str(ctx.home)})) as relay:
        await relay.extension()
        await relay.browser_count(1)
        browser = relay.core.registry.resolve()
        for _ in range(50):  # warm up
            await browser.cdp(1, "Runtime.evaluate", {"expression": "1+1"})
        samples = []
        for _ in range(commands):
            started = time.perf_counter()
            await browser.cdp(1, "Runtime.evaluate", {"expression": "1+1"})
            samples.append((time.perf_counter() - started) * 1000)
        for stat, fraction in (("p50", 0.5), ("p95", 0.95)):
            rows.append(
                row(f"relay cdp.send round trip {stat} (fake extension)",
                    percentile(samples, fraction), "ms", group="relay")
            )  # fmt: skip

        subscription = relay.core.hub.subscribe(maxlen=total + 1000)
        extension = relay.extensions[0]
        assert extension.connection is not None
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
            row("relay events into the hub (sender and relay on one core)", total / elapsed,
                "events/s", group="relay")
        )  # fmt: skip
    return rows
