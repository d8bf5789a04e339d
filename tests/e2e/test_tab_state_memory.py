"""Per-tab state dies with what it describes (tools/state/tab_state.py), through a real MCP client,
real Chromium and the real extension: a thousand navigations with snapshots of a large page, in
tabs an agent opens and closes, leave the app's memory flat, and a ref of a page the tab no
longer shows is refused as stale.

Memory is the resident set of this process, which runs the app's core and the MCP client (the
harness's app is in-process); the registry's own counts are checked too, since they say where
memory would go.
"""

from __future__ import annotations

import gc
import os
import re
import time

import pytest

from e2e.agent import Agent
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, PageServer, wait_until
from tabrelay.tools.page.refs import STALE

pytestmark = [*E2E, pytest.mark.timeout(1800)]  # a thousand navigations on a busy machine

NAVIGATIONS = 1000
PER_TAB = 20  # navigations in a tab before the agent closes it
SECTIONS = 100  # four interactive elements each: 400 refs per page
WARM_UP = 100  # navigations before the first measurement (caches, pools, the SDK's sessions)
RSS_SLACK_MIB = 10.0
REF = re.compile(r"\[(e\d+)\]")


def rss_mib() -> float:
    """This process's resident set (the app's core and the client), after a full collection."""
    gc.collect()
    with open(f"/proc/{os.getpid()}/statm") as statm:
        resident = int(statm.read().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


async def test_a_thousand_navigations_with_snapshots_keep_memory_flat(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    core = app.harness.core
    browser = await app.browser()
    start: float | None = None
    done = 0
    began = time.monotonic()

    def url() -> str:
        return pages.url(f"tabstate/large.html?n={SECTIONS}&v={done}")

    while done < NAVIGATIONS:
        tab = await agent.open(url())
        while True:
            text = await agent.snapshot(tab)
            done += 1
            state = core.tabs.get(browser.id, tab)
            assert state is not None
            assert len(state.refs) <= 4 * SECTIONS + 10, "refs of pages the tab left are kept"
            if done == WARM_UP:
                start = rss_mib()
            if done % PER_TAB == 0 or done == NAVIGATIONS:
                break
            old = REF.findall(text)[-1]
            await agent.ok("browser_navigate", tab_id=tab, url=url())
        if done == PER_TAB:  # once: an old page's ref is refused as stale, not acted on
            stale = await agent.fails("browser_click", tab_id=tab, ref=old)
            assert stale == STALE.format(ref=old)
        await agent.ok("browser_close_tab", tab_id=tab)
        await wait_until(
            lambda: core.tabs.get(browser.id, tab) is None,  # noqa: B023 - awaited here
            timeout=10,
            message=f"tab {tab}'s state dropped",
        )
    assert start is not None
    grown = rss_mib() - start
    assert len(core.tabs) <= len(browser.tabs), "state is kept only for tabs that exist"
    assert grown <= RSS_SLACK_MIB, f"RSS grew {grown:.1f} MiB over {NAVIGATIONS} navigations"
    print(
        f"{NAVIGATIONS} navigations in {time.monotonic() - began:.0f} s: RSS after warm-up "
        f"{start:.1f} MiB, growth over the run {grown:+.1f} MiB"
    )
