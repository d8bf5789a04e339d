"""Prompts per task (issue 25, finding 2): agent tasks on real apps of the outline corpus
(``e2e.corpus``), each end to end through a real MCP client, with the person answering every
question "allow for the session" (what a person tired of prompts does today), and again with one
plan (``browser_request_access``) approved first and every later question answered "allow
once". Per task and way: the questions the person saw, and how many named a consequential
effect. Target: with a plan, questions ≤ 1 + the consequential ones.

The tasks: in Django's admin (the person signed in), add an order and delete it again; in
TodoMVC, add two todos, tick one and clear the completed; in JupyterLab, run a cell in the
notebook and read what it printed.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from rig import app_in_process, no_standing_rules, wait_for
from stats import Row, row, verdict

from e2e import corpus as apps
from e2e.agent import Agent
from e2e.cdp import CdpError
from e2e.harness import AppUnderTest
from support.mcp import mcp_client
from tabrelay.approval.gate import Choice

GROUP = "prompts per task"
Task = Callable[[Agent, apps.Corpus], Awaitable[None]]


async def plans_benchmarks(ctx: Any) -> list[Row]:
    why = apps.missing()
    if why is not None:
        return [row(f"prompts per task not run: {why}", 0, "", group="errors")]
    rows: list[Row] = []
    with apps.Corpus.running(apps=("django", "jupyterlab")) as corpus:
        async with app_in_process(ctx.home / "app") as run:
            app = run.app
            await no_standing_rules(app)
            # The person signs in to the admin once, in a tab of their own.
            admin = _page("django", "order list")
            signing = await run.chromium.open_page(corpus.url(admin), wait_for_load=False)

            async def form() -> bool:
                try:
                    return bool(await signing.evaluate("!!document.querySelector('#id_username')"))
                except CdpError:
                    return False  # between the list and the sign-in page it redirects to

            await wait_for(form, timeout=20, message="the admin's sign-in form")
            await admin.prepare(signing)  # type: ignore[misc]
            for name, site, task in TASKS:
                for way in ("session", "plan"):
                    asked = await _run(app, corpus, name, site(corpus), task, way)
                    rows.append(_row(name, way, asked))
    return [*rows, *_totals(rows)]


async def _run(
    app: AppUnderTest,
    corpus: apps.Corpus,
    name: str,
    site: str,
    task: Task,
    way: str,
) -> list[Any]:
    """The questions the person saw while an agent, in an MCP session of its own, did ``task``
    on ``site``, answering "allow for the session" (``way="session"``) or after approving one
    plan, "allow once"."""
    person = app.harness.tool_approver
    person.answer = Choice.ALLOW_SESSION if way == "session" else Choice.ALLOW_ONCE
    before = len(person.requests)
    # A client of its own: what the person allowed another for its session does not count.
    token = await app.harness.add_client(f"bench-{way}-{uuid.uuid4().hex[:6]}")
    async with mcp_client(app.harness.base_mcp(), token, name=f"bench-{way}") as client:
        agent = Agent(client)
        if way == "plan":
            await agent.ok(
                "browser_request_access",
                purpose=f"{name} (bench)",
                sites=[site],
                actions=["navigate", "click", "type", "select", "press_key"],
                minutes=15,
            )
        await task(agent, corpus)
    return person.requests[before:]


def _page(app_name: str, name: str) -> apps.CorpusPage:
    return next(p for p in apps.PAGES if p.app == app_name and p.name == name)


def _origin(url: str) -> str:
    return "/".join(url.split("/", 3)[:3])


# --- the tasks ----------------------------------------------------------------------------


async def _django_order(agent: Agent, corpus: apps.Corpus) -> None:
    """Add an order, then delete it again."""
    customer = f"Bench {uuid.uuid4().hex[:6]}"
    base = corpus.url(_page("django", "order list"))
    tab = await agent.open(base + "add/")
    for selector, text in (
        ("#id_customer", customer),
        ("#id_email", "bench@example.org"),
        ("#id_total", "12.50"),
        ("#id_placed", "2026-11-29"),
    ):
        await agent.ok("browser_type", tab_id=tab, selector=selector, text=text)
    await agent.ok("browser_select_option", tab_id=tab, selector="#id_status", values=["paid"])
    await agent.ok("browser_click", tab_id=tab, selector="input[name=_save]")
    listing = await agent.snapshot(tab)
    link = re.search(rf'link "Order \d+ for {customer}" \[(e\d+)\]', listing)
    assert link, listing
    await agent.ok("browser_click", tab_id=tab, ref=link.group(1))
    await agent.ok("browser_click", tab_id=tab, selector="a.deletelink")
    await agent.ok("browser_click", tab_id=tab, selector="input[type=submit]")
    assert "deleted successfully" in await agent.snapshot(tab)
    await agent.ok("browser_close_tab", tab_id=tab)


async def _todos(agent: Agent, corpus: apps.Corpus) -> None:
    """Add two todos, tick one, clear the completed."""
    tab = await agent.open(corpus.url(_page("todomvc", "vanillajs")))
    run = uuid.uuid4().hex[:6]
    done, left = f"Water the plants {run}", f"Book the train {run}"
    for text in (done, left):
        await agent.ok("browser_type", tab_id=tab, selector=".new-todo, #new-todo", text=text)
        await agent.ok("browser_press_key", tab_id=tab, key="Enter")
    snapshot = await agent.snapshot(tab)
    toggle = re.search(rf"checkbox \[(e\d+)\]\n\s*text: {done}", snapshot)
    assert toggle, snapshot
    await agent.ok("browser_click", tab_id=tab, ref=toggle.group(1))
    await agent.ok("browser_click", tab_id=tab, selector=".clear-completed, #clear-completed")
    snapshot = await agent.snapshot(tab)
    assert left in snapshot and done not in snapshot, snapshot
    await agent.ok("browser_close_tab", tab_id=tab)


async def _notebook(agent: Agent, corpus: apps.Corpus) -> None:
    """Run a cell and read what it printed (the corpus' JupyterLab task)."""
    tab = await agent.open(corpus.url(_page("jupyterlab", "notebook with run cells")))
    await agent.ok("browser_wait_for", tab_id=tab, text="[ ]:", timeout=30)
    snapshot = await agent.snapshot(tab)
    cell = re.search(r"text: \[ \]:\n\s*textbox \[(e\d+)\]", snapshot)
    assert cell, snapshot
    await agent.ok("browser_click", tab_id=tab, ref=cell.group(1))
    code = "print('BENCH=' + str(6 * 7))"
    await agent.ok("browser_type", tab_id=tab, ref=cell.group(1), text=code)
    await agent.ok("browser_press_key", tab_id=tab, key="Shift+Enter")
    await agent.ok("browser_wait_for", tab_id=tab, text="BENCH=42", timeout=30)


def _site(app_name: str, name: str) -> Callable[[apps.Corpus], str]:
    return lambda corpus: _origin(corpus.url(_page(app_name, name)))


TASKS: tuple[tuple[str, Callable[[apps.Corpus], str], Task], ...] = (
    ("django admin: add and delete an order", _site("django", "order list"), _django_order),
    ("todomvc: add, tick, clear", _site("todomvc", "vanillajs"), _todos),
    ("jupyterlab: run a cell", _site("jupyterlab", "notebook with run cells"), _notebook),
)


# --- the table ----------------------------------------------------------------------------


def _row(name: str, way: str, asked: list[Any]) -> Row:
    consequential = [r for r in asked if r.effect is not None and r.effect.consequential]
    plans = [r for r in asked if r.plan is not None]
    said = ", ".join(
        f"{r.tool}" + (f" ({r.effect.kind.value})" if r in consequential else "") for r in asked
    )
    return row(
        f"{name} · {way} · {said or 'no question'}",
        len(asked),
        "questions",
        group=GROUP,
        task=name,
        way=way,
        consequential=len(consequential),
        plans=len(plans),
    )


def _totals(rows: list[Row]) -> list[Row]:
    over = [r for r in rows if r["way"] == "plan" and r["value"] > 1 + r["consequential"]]
    return [
        verdict(
            "prompts per task · tasks where a plan asked more than 1 + the consequential actions"
            + (": " + ", ".join(r["task"] for r in over) if over else ""),
            len(over),
            "tasks",
            0,
            target="≤ 1 + consequential",
        )
    ]
