"""The outline corpus (issue 24): every page of the real apps in ``e2e.corpus``, our snapshot
held against Chrome's own accessibility tree (``e2e.against_chrome``), and the JupyterLab task
an agent runs end to end.

Per page: the lines Chrome's tree prints (its non-ignored nodes) and the lines of our outline,
what a screen-reader user gets from Chrome that ours lost (missing, or out of order), what ours
says that Chrome's tree does not (extra: a code editor's text read through its API, for one),
Chrome's controls without a ref, bare ``clickable [eN]`` lines, controls shown twice; and the
snapshot's time through MCP and its bytes. Totals carry the targets: nothing missing, no
control without a ref or twice, bare lines at most 1 % of lines.
"""

from __future__ import annotations

import time
from typing import Any

from rig import app_in_process
from stats import Row, row, verdict

from e2e import corpus as apps
from e2e.against_chrome import hold_against_chrome, visit
from e2e.agent import Agent
from e2e.harness import AppUnderTest

GROUP = "outline corpus"
CODE = "m = sum(i * i for i in range(2000)); print(f'TOTAL={m}')"


async def outline_corpus_benchmarks(ctx: Any) -> list[Row]:
    why = apps.missing()
    if why is not None:
        return [row(f"outline corpus not run: {why}", 0, "", group="errors")]
    rows: list[Row] = []
    with apps.Corpus.running() as corpus:
        async with app_in_process(ctx.home / "app") as run:
            for page in apps.PAGES:
                rows.append(await _page(run.app, run.agent, run.chromium, corpus, page))
            rows += await _notebook_task(run.agent, corpus)
    return [*rows, *_totals(rows)]


async def _page(
    app: AppUnderTest, agent: Agent, chromium: Any, corpus: apps.Corpus, page: apps.CorpusPage
) -> Row:
    tab, seen = await visit(agent, chromium, corpus, page)
    report = await hold_against_chrome(app, seen.session, tab)
    started = time.perf_counter()
    text = await agent.snapshot(tab)
    ms = (time.perf_counter() - started) * 1000
    await agent.ok("browser_close_tab", tab_id=tab)
    counts = report.row()
    return row(
        f"outline {page.key} · missing of Chrome's items",
        counts["missing"],
        "",
        group=GROUP,
        page=page.key,
        fast=page.fast,
        ms=round(ms, 1),
        bytes=len(text.encode()),
        **{k: v for k, v in counts.items() if k != "missing"},
    )


async def _notebook_task(agent: Agent, corpus: apps.Corpus) -> list[Row]:
    """The task of issue 24's finding 1, as an agent runs it: open the notebook, type into its
    empty cell, run it, read the output. Calls and wall time from the first call to the read."""
    notebook = next(p for p in apps.PAGES if p.app == "jupyterlab" and p.fast)
    expected = sum(i * i for i in range(2000))
    calls = 0

    async def call(tool: str, **arguments: Any) -> str:
        nonlocal calls
        calls += 1
        return await agent.ok(tool, **arguments)

    started = time.perf_counter()
    calls += 1
    opened = await agent.call("browser_new_tab", url=corpus.url(notebook))
    tab = int(opened.structured_content["tab_id"])
    # JupyterLab draws a notebook's cells a few at a time: the last one, empty, comes last.
    await call("browser_wait_for", tab_id=tab, text="[ ]:", timeout=30)
    snapshot = await call("browser_snapshot", tab_id=tab)
    cell = snapshot.split("text: [ ]:", 1)[1].split("[", 1)[1].split("]", 1)[0]
    await call("browser_click", tab_id=tab, ref=cell)
    await call("browser_type", tab_id=tab, ref=cell, text=CODE)
    await call("browser_press_key", tab_id=tab, key="Shift+Enter")
    await call("browser_wait_for", tab_id=tab, text=f"TOTAL={expected}", timeout=30)
    read = await call("browser_snapshot", tab_id=tab)
    seconds = time.perf_counter() - started
    # The tab stays open: the notebook has unsaved changes, and JupyterLab asks before leaving.
    done = f"text: TOTAL={expected}" in read
    common = {"group": "outline task"}
    return [
        row("JupyterLab: run a cell, read its output · read it", int(done), "", **common),
        row("JupyterLab: run a cell, read its output · calls", calls, "", **common),
        row("JupyterLab: run a cell, read its output · time", seconds, "s", **common),
    ]


def _totals(rows: list[Row]) -> list[Row]:
    pages = [r for r in rows if r.get("group") == GROUP]
    if not pages:
        return []
    total = {k: sum(int(r[k]) for r in pages) for k in ("chrome_lines", "our_lines", "extra")}
    missing = sum(int(r["value"]) for r in pages)
    bare = sum(int(r["bare"]) for r in pages)
    share = 100 * bare / max(1, total["our_lines"])
    return [
        row("outline corpus · pages", len(pages), "", group=GROUP + " totals"),
        row("outline corpus · Chrome's lines", total["chrome_lines"], "", group=GROUP + " totals"),
        row("outline corpus · our lines", total["our_lines"], "", group=GROUP + " totals"),
        row("outline corpus · extra texts", total["extra"], "", group=GROUP + " totals"),
        verdict("outline corpus · Chrome's items missing from ours", missing, "", 0),
        verdict(
            "outline corpus · Chrome's controls without a ref",
            sum(int(r["without_ref"]) for r in pages),
            "",
            0,
        ),
        verdict(
            "outline corpus · controls shown twice", sum(int(r["duplicated"]) for r in pages), "", 0
        ),
        verdict("outline corpus · bare clickable lines", share, "%", 1.0),
    ]
