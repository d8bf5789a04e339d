"""The reliability suites at full size (issue 8; ``make test`` runs them scaled down).

- Load: the scenario of tests/integration/test_load.py at 8 MCP clients × 500 calls over 10
  tabs, twice, against the app with a scripted extension: no errors, nothing left pending,
  every call in the command log, memory flat from the first round to the second.
- Fuzz: the property-based suites (protocol parser, relay frames, config endpoint, MCP tool
  arguments) run by pytest with ten times their examples (tests/support/scale.py).
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from stats import Row, percentile, row, verdict

from support import load
from support.harness import running_core
from support.scale import FUZZ_FACTOR
from tabrelay.config.paths import Paths

ROOT = Path(__file__).resolve().parents[2]
CLIENTS, CALLS, TABS = 8, 500, 10
FUZZ_SUITES = (
    "tests/unit/test_protocol_messages.py",
    "tests/integration/test_relay_bad_input.py",
    "tests/integration/test_fuzz.py",
)
MAX_GROWTH_MIB = 15.0  # the same bound as the scaled-down test


async def reliability_benchmarks(ctx: Any) -> list[Row]:
    return [*await _load(ctx), *await _fuzz(ctx)]


async def _load(ctx: Any) -> list[Row]:
    calls = 100 if ctx.quick else CALLS
    async with running_core(Paths.resolve({"TABRELAY_HOME": str(ctx.home)})) as app:
        await load.prepare(app, tabs=TABS)
        first = await load.run(app, clients=CLIENTS, calls=calls, tabs=TABS)
        gc.collect()
        second = await load.run(app, clients=CLIENTS, calls=calls, tabs=TABS)
        gc.collect()
        left = sum(load.leftovers(app).values())
        assert app.core.command_log is not None
        logged = app.core.command_log.count()
    size = f"{CLIENTS} clients × {calls} calls, {TABS} tabs"
    latencies = first.latencies_ms + second.latencies_ms
    growth = (second.rss_after - first.rss_after) / 2**20
    errors = first.errors + second.errors
    for error in sorted(set(errors))[:5]:
        print(f"load error: {error}", file=sys.stderr)
    return [
        row(f"load ({size}): calls per second", second.per_second, "calls/s", group="load"),
        row("load: call p50", percentile(latencies, 0.5), "ms", group="load"),
        row("load: call p95", percentile(latencies, 0.95), "ms", group="load"),
        verdict("load: calls that failed", len(errors), "", 0, target="none"),
        verdict("load: left pending afterwards", left, "", 0, target="none"),
        verdict(
            "load: calls missing from the command log",
            2 * CLIENTS * calls - logged,
            "",
            0,
            target="none",
        ),
        verdict("load: RSS growth, first round to second", growth, "MiB", MAX_GROWTH_MIB),
    ]


async def _fuzz(ctx: Any) -> list[Row]:
    factor = 1 if ctx.quick else FUZZ_FACTOR
    env = {**os.environ, "TABRELAY_FULL_SIZE": "0" if ctx.quick else "1"}
    env.pop("TABRELAY_HOME", None)  # the tests make their own
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *FUZZ_SUITES,
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await process.communicate()
    seconds = time.perf_counter() - started
    text = output.decode(errors="replace")
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|error)", text)}
    if process.returncode != 0:
        print(text[-4000:], file=sys.stderr)
    return [
        row(
            f"fuzz suites at {factor}× examples: tests run", sum(counts.values()), "", group="fuzz"
        ),
        row("fuzz suites: time", seconds, "s", group="fuzz"),
        verdict(
            "fuzz suites: tests failed (crash, hang or unclear rejection)",
            # A run that failed with no test named failing (a crash, a hang) counts once.
            max(counts.get("failed", 0) + counts.get("error", 0), int(process.returncode != 0)),
            "",
            0,
            target="none",
        ),
    ]
