"""Start-up time, idle memory and idle CPU of ``tabrelay serve`` and of the tray app.

Each app runs as its own process with a fresh TABRELAY_HOME and fixed free ports (the tray app
with Qt's offscreen platform: no tray, so it opens its dashboard, as on a desktop without one).
Ready = from spawn to the relay's /healthz answering 200 and an MCP ``initialize`` answered,
polled every 5 ms; the median of several starts. Then the app idles (no browser, no client) and
psutil reads its resident memory (RSS, and USS: the pages only it uses) and the CPU time it
spent. Baselines say where the memory goes: a bare interpreter, and one that only imported the
core (the MCP SDK, uvicorn, starlette, pydantic, websockets) or the Qt UI. Where a target is
missed, the phase breakdown says what the memory and start-up time are spent on: one process
imports what ``tabrelay serve`` imports, a group at a time in that order, and each row is what
the group added; the last row is what serving itself adds (the app's idle RSS minus all of it).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

import psutil
from rig import AppHome, AppProcess, tray_display
from stats import Row, row, verdict

MIB = 1024 * 1024
BASELINES = {
    "python": "",
    "python + pydantic": "import pydantic",
    "python + MCP SDK server": "import mcp.server.mcpserver, uvicorn",
    "python + tabrelay.core": "import tabrelay.core",
    "python + tabrelay.core + Qt UI": (
        "import tabrelay.core, tabrelay.ui.desktop; from PySide6.QtWidgets import QApplication;"
        " app = QApplication([])"
    ),
}
# What `tabrelay serve` imports, in groups, in the order a breakdown attributes them.
PHASES = {
    "stdlib the app uses (asyncio, ssl, sqlite3, logging, argparse)": (
        "import asyncio, ssl, sqlite3, logging.handlers, argparse, json, urllib.request"
    ),
    "pydantic": "import pydantic",
    "keyring, platformdirs, websockets": "import keyring, platformdirs, websockets",
    "tabrelay without its MCP layer (settings, relay, tools, approval, log)": (
        "import tabrelay.config.settings, tabrelay.relay.server, tabrelay.tools.catalog,"
        " tabrelay.approval.gate, tabrelay.store.commandlog, tabrelay.endpoint.calls"
    ),
    "MCP SDK: `import mcp_types` (protocol models; the server loads more)": "import mcp_types",
    "MCP SDK: cryptography (mcp.server imports it for request state)": (
        "import cryptography.hazmat.primitives.ciphers.aead"
    ),
    "MCP SDK: httpx2 (client side: `import mcp` loads it)": "import httpx2",
    "MCP SDK: the rest (server and client, more mcp_types, starlette, uvicorn, anyio)": (
        "import mcp.server.mcpserver, uvicorn"
    ),
    "tabrelay MCP endpoint, core, command line": "import tabrelay.core, tabrelay.cli",
}
QT_PHASE = (
    "Qt UI modules and a QApplication",
    "import tabrelay.app, tabrelay.ui.desktop; from PySide6.QtWidgets import QApplication;"
    " app = QApplication([])",
)
BREAKDOWN = (
    "import json, sys, time\n"
    "def rss():\n"
    "    with open('/proc/self/statm') as f:\n"
    "        return int(f.read().split()[1]) * {page}\n"
    "found = [('python', rss(), 0.0)]\n"
    "for label, code in {phases!r}:\n"
    "    started = time.perf_counter()\n"
    "    exec(code)\n"
    "    found.append((label, rss(), time.perf_counter() - started))\n"
    "print(json.dumps(found))\n"
)
PROBE = (
    "import time, json, psutil; started = time.perf_counter(); {code}; "
    "seconds = time.perf_counter() - started; info = psutil.Process().memory_full_info(); "
    "print(json.dumps({{'seconds': seconds, 'rss': info.rss, 'uss': info.uss}}))"
)


async def idle_benchmarks(ctx: Any) -> list[Row]:
    starts = 1 if ctx.quick else 3
    idle = 4.0 if ctx.quick else 10.0
    rows: list[Row] = []
    async with tray_display() as display:
        variants = [("serve", False, None), ("gui", True, None)]
        if display is not None:
            variants.append(("gui-tray", True, display))
        for key, gui, on_display in variants:
            rows += await app_rows(ctx, key, gui, on_display, starts, idle)
    rows += await baseline_rows()
    idle_rss = {r["app"]: r["value"] for r in rows if r.get("app") and "idle RSS" in r["name"]}
    rows += await breakdown_rows(idle_rss)
    return rows


async def app_rows(
    ctx: Any, key: str, gui: bool, display: str | None, starts: int, idle: float
) -> list[Row]:
    ready: list[dict[str, float]] = []
    use: dict[str, float] = {}
    label = key
    for attempt in range(starts):
        app = AppProcess(AppHome.create(ctx.home / f"{key}-{attempt}"), gui=gui, display=display)
        label = app.label
        app.spawn()
        try:
            ready.append(await app.wait_ready())
            if attempt == starts - 1:
                use = await idle_use(app, idle)
        finally:
            await app.stop()
    common = {"group": "idle", "app": key}
    relay = statistics.median(r["relay"] for r in ready)
    both = statistics.median(max(r.values()) for r in ready)
    rows = [
        row(f"{label} · start to relay /healthz 200", relay, "s", **common),
        row(f"{label} · start to relay and MCP ready", both, "s", **common),
        row(f"{label} · idle RSS", use["rss"], "MiB", **common),
        row(f"{label} · idle USS (pages only it uses)", use["uss"], "MiB", **common),
        row(f"{label} · idle CPU ({idle:g} s, no browser)", use["cpu"], "%", **common),
        row(f"{label} · threads", use["threads"], "", **common),
    ]
    limit = 120 if gui else 60
    rows.append(verdict(f"{label} idle RSS ≤ {limit} MiB", use["rss"], "MiB", limit))
    if not gui:
        rows.append(verdict(f"{label} ready ≤ 1 s", both, "s", 1.0))
    return rows


async def idle_use(app: AppProcess, seconds: float) -> dict[str, float]:
    process = psutil.Process(app.pid)
    await asyncio.sleep(1.0)  # let the start-up work finish before the idle window
    before = process.cpu_times()
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    after = process.cpu_times()
    wall = time.perf_counter() - started
    memory = process.memory_full_info()
    busy = (after.user - before.user) + (after.system - before.system)
    return {
        "rss": memory.rss / MIB,
        "uss": memory.uss / MIB,
        "cpu": 100 * busy / wall,
        "threads": float(process.num_threads()),
    }


async def baseline_rows() -> list[Row]:
    rows = []
    for label, code in BASELINES.items():
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            PROBE.format(code=code or "pass"),
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
        out, _ = await process.communicate()
        result = json.loads(out)
        common = {"group": "baseline", "what": label}
        rows += [
            row(f"baseline · {label} · RSS", result["rss"] / MIB, "MiB", **common),
            row(f"baseline · {label} · USS", result["uss"] / MIB, "MiB", **common),
        ]
        if code:
            rows.append(row(f"baseline · {label} · import time", result["seconds"], "s", **common))
    return rows


async def breakdown_rows(idle_rss: dict[str, float]) -> list[Row]:
    """Where the idle memory and the start-up imports go, phase by phase (see the docstring);
    ``idle_rss`` is each app's measured idle RSS in MiB, by key (serve, gui)."""
    phases = [*PHASES.items(), QT_PHASE]
    code = BREAKDOWN.format(page=os.sysconf("SC_PAGE_SIZE"), phases=phases)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    out, _ = await process.communicate()
    found: list[tuple[str, int, float]] = json.loads(out)
    rows: list[Row] = []
    previous = 0.0
    totals: dict[str, float] = {}
    for label, rss, seconds in found:
        mib = rss / MIB
        common = {"group": "where idle memory goes", "phase": label}
        rows.append(row(f"+ {label} · RSS", mib - previous, "MiB", **common))
        if seconds:
            rows.append(row(f"+ {label} · import time", seconds, "s", **common))
        previous = mib
        if label == PHASES_LAST:
            totals["serve"] = mib
    totals["gui"] = previous
    for key, loaded in totals.items():
        if key in idle_rss:
            what = "tabrelay serve" if key == "serve" else "the tray app (qasync, offscreen)"
            rows.append(
                row(
                    f"+ serving, idle ({what}: its idle RSS minus the imports above)",
                    idle_rss[key] - loaded,
                    "MiB",
                    group="where idle memory goes",
                    phase=f"runtime {key}",
                )
            )
    return rows


PHASES_LAST = list(PHASES)[-1]
