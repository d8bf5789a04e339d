"""Load: many MCP clients calling tools on many tabs at once (scaled down; full size in bench)."""

from __future__ import annotations

import gc

from support import load
from support.harness import running_core
from tabrelay.config.paths import Paths

CLIENTS, CALLS, TABS = 8, 40, 10  # make bench runs 8 × 500


async def test_eight_clients_calling_at_once_get_answers_and_leave_nothing_behind(
    home: Paths,
) -> None:
    async with running_core(home) as app:
        await load.prepare(app, tabs=TABS)
        warm = await load.run(app, clients=CLIENTS, calls=CALLS, tabs=TABS)
        gc.collect()
        second = await load.run(app, clients=CLIENTS, calls=CALLS, tabs=TABS)
        gc.collect()
        for report in (warm, second):
            assert report.calls == CLIENTS * CALLS
            assert report.errors == []
        assert load.leftovers(app) == {
            "pending commands": 0,
            "pending approvals": 0,
            "running calls": 0,
            "background input": 0,
        }
        assert app.core.command_log is not None
        assert app.core.command_log.count() == 2 * CLIENTS * CALLS
        growth = second.rss_after - warm.rss_after
        assert growth < 15 * 2**20, f"memory grew by {growth / 2**20:.1f} MiB in the second round"
        print(f"load: {second.per_second:.0f} calls/s, growth {growth / 2**20:.1f} MiB")
