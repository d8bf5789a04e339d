"""Tool-call latency, side by side on one Chromium binary and the same local pages.

Five operations — evaluate ``1+1``, navigate to a local page (until its load event), snapshot,
click, type (a name into a form's field, in place of what it holds) — through every layer and
every peer:

- ``floor``: the same CDP commands straight to Chromium's debugging port (one Runtime.evaluate;
  Page.navigate and the load event; for snapshot, click and type, the exact CDP commands our
  tool sent, recorded and replayed with fresh object ids);
- ``relay``: those CDP commands through the relay (app → WebSocket → extension →
  chrome.debugger) from an in-process core;
- ``inproc``: the MCP tool call with client and core in this process, with probes on every
  layer (the per-hop breakdown);
- ``serve`` / ``gui``: the MCP tool call over Streamable HTTP to ``tabrelay serve`` and to the
  tray app (qasync, offscreen) running as their own processes, with the MCP SDK client; and
  ``serve-raw``: the same with a minimal HTTP client (the server's share without the SDK's);
- ``playwright`` / ``devtools``: the peers over stdio with the same SDK client.

Each side runs alone: our Chromium closes before a peer starts its own.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import statistics
import timeit
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from httpmcp import RawMcp
from mcp import Client
from peers import PEERS, Peer, PeerSession, peer_session
from probe import CallTimes, Probe, RelayCommand, cdp_sequence, purpose, replay
from rig import EXTENSION_ID, AppHome, PageServer, app_process, extension_browser, wait_for
from stats import Row, percentile, row, timed, verdict

from e2e.harness import ExtensionBrowser, Page
from support.harness import RelayHarness, running_core
from support.mcp import mcp_client, raw_text_of
from tabrelay.protocol.messages import decode_json, encode
from tabrelay.relay.browser import Browser

OPS = ("evaluate", "navigate", "snapshot", "click", "type")
SIDES = {
    "floor": "CDP floor (straight to Chromium)",
    "relay": "relay command (app → extension → CDP)",
    "inproc": "Tabrelay MCP, in-process SDK client",
    "inproc-raw": "Tabrelay MCP, in-process raw HTTP client",
    "serve": "Tabrelay MCP: tabrelay serve",
    "serve-raw": "Tabrelay MCP: tabrelay serve, raw HTTP client",
    "gui": "Tabrelay MCP: tray app (qasync)",
    "gui-raw": "Tabrelay MCP: tray app, raw HTTP client",
    "playwright": "Playwright MCP 0.0.83",
    "devtools": "chrome-devtools-mcp 1.11.0",
}
FORM = "tools/form.html"
WIDGETS = "tools/widgets.html"
ARTICLE = "tools/article.html"
COUNTER = ("button", "Clicked 0 times")
NAME_FIELD = ("#name", "textbox", "Name *")  # form.html's first field: selector, role, name
TYPED = "Ada Lovelace"
EVALUATE = {"expression": "1+1", "returnByValue": True}
SAMPLE_TIMEOUT = 30.0

Samples = dict[str, list[float]]
Agent = Callable[..., Awaitable[str]]


@dataclass(frozen=True)
class Plan:
    """Samples per side and operation (navigation takes longer, peers much longer)."""

    cdp: int = 200  # floor and relay: evaluate, snapshot, click, type
    cdp_nav: int = 50
    fast: int = 100  # MCP tool calls: evaluate, snapshot, click, type
    nav: int = 40
    peer_fast: int = 50
    peer_nav: int = 30
    warmup: int = 10

    @classmethod
    def quick(cls) -> Plan:
        return cls(cdp=40, cdp_nav=15, fast=30, nav=10, peer_fast=10, peer_nav=8, warmup=3)

    def raw(self) -> Plan:
        """The raw-client sides: half the samples (they only separate the client's share)."""
        return replace(self, fast=max(10, self.fast // 2), nav=max(5, self.nav // 2))


_nav_counter = itertools.count()


def nav_url(pages: PageServer) -> str:
    """A new URL each time (same page, new query): a real cross-document navigation."""
    return pages.url(f"{ARTICLE}?n={next(_nav_counter)}")


async def bounded(awaitable: Awaitable[Any]) -> Any:
    async with asyncio.timeout(SAMPLE_TIMEOUT):
        return await awaitable


# --- MCP agents -------------------------------------------------------------------------------


class ToolFailed(Exception):
    pass


def sdk_agent(client: Client) -> Agent:
    async def call(tool: str, **arguments: Any) -> str:
        result = await bounded(client.call_tool(tool, arguments))
        if result.is_error:
            raise ToolFailed(f"{tool}: {raw_text_of(result)}")
        return raw_text_of(result)  # what the model reads, page-text boundary and all

    return call


def raw_agent(client: RawMcp) -> Agent:
    async def call(tool: str, **arguments: Any) -> str:
        result = await bounded(client.call_tool(tool, arguments))
        text = "".join(part.get("text", "") for part in result.get("content", []))
        if result.get("isError"):
            raise ToolFailed(f"{tool}: {text}")
        return text

    return call


def our_ref(snapshot: str, role: str, name: str) -> str:
    match = re.search(
        rf"^\s*{re.escape(role)} {re.escape(json.dumps(name))} \[(e\d+)\]", snapshot, re.M
    )
    if match is None:
        raise ToolFailed(f"no {role} {name!r} in the snapshot:\n{snapshot}")
    return match.group(1)


async def open_tab(agent: Agent, url: str) -> int:
    text = await agent("browser_new_tab", url=url)
    match = re.search(r"Opened tab (\d+)", text)
    if match is None:
        raise ToolFailed(f"browser_new_tab said: {text}")
    return int(match.group(1))


async def mcp_op(
    agent: Agent,
    op: str,
    tab: int,
    pages: PageServer,
    plan: Plan,
    *,
    before: Callable[[], None] | None = None,
    after: Callable[[float], None] | None = None,
) -> list[float]:
    """Time one operation through MCP tools; the tab is put on the op's page first."""
    hooks = {"before": before, "after": after}
    if op == "navigate":
        return await timed(
            lambda _: agent("browser_navigate", url=nav_url(pages), tab_id=tab),
            plan.nav,
            warmup=plan.warmup // 2,
            **hooks,
        )
    if op == "click":
        await agent("browser_navigate", url=pages.url(WIDGETS), tab_id=tab)
        ref = our_ref(await agent("browser_snapshot", tab_id=tab), *COUNTER)
        return await timed(
            lambda _: agent("browser_click", ref=ref, tab_id=tab),
            plan.fast,
            warmup=plan.warmup,
            **hooks,
        )
    await agent("browser_navigate", url=pages.url(FORM), tab_id=tab)
    if op == "evaluate":
        action = lambda _: agent("browser_evaluate", expression="1+1", tab_id=tab)  # noqa: E731
    elif op == "type":
        field = our_ref(await agent("browser_snapshot", tab_id=tab), *NAME_FIELD[1:])
        action = lambda _: agent("browser_type", ref=field, text=TYPED, tab_id=tab)  # noqa: E731
    else:
        action = lambda _: agent("browser_snapshot", tab_id=tab)  # noqa: E731
    return await timed(action, plan.fast, warmup=plan.warmup, **hooks)


async def mcp_ops(agent: Agent, tab: int, pages: PageServer, plan: Plan) -> Samples:
    return {op: await mcp_op(agent, op, tab, pages, plan) for op in OPS}


# --- the in-process phases: floor, relay, MCP with probes ------------------------------------

Calls = dict[str, list[tuple[float, CallTimes]]]  # op → (total ms, layers) per MCP call


@dataclass
class InProcess:
    samples: dict[str, Samples] = field(default_factory=dict)  # side → op → ms
    calls: dict[str, Calls] = field(default_factory=dict)  # side → op → per-call layers
    sequences: dict[str, list[RelayCommand]] = field(default_factory=dict)  # the tool's CDP
    commands: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # side → per cmd


async def cdp_phase(
    harness: RelayHarness,
    chromium: ExtensionBrowser,
    home: AppHome,
    pages: PageServer,
    plan: Plan,
    out: InProcess,
) -> None:
    """Record the CDP commands each tool sends, then time them straight to Chromium (floor)
    and through the relay; navigation on both until the tab's load event."""
    probe = Probe().install()
    try:
        async with mcp_client(harness.base_mcp(), home.token, name="bench") as client:
            agent = sdk_agent(client)
            start_url = pages.url(f"{FORM}?side=cdp")
            tab = await open_tab(agent, start_url)
            page = await chromium.attach_page(start_url)
            browser = harness.core.registry.resolve()
            await _cdp_phase(agent, probe, browser, harness, page, tab, pages, plan, out)
    finally:
        probe.remove()


async def _cdp_phase(
    agent: Agent,
    probe: Probe,
    browser: Browser,
    harness: RelayHarness,
    page: Page,
    tab: int,
    pages: PageServer,
    plan: Plan,
    out: InProcess,
) -> None:
    session = page.session
    out.samples.update(floor={}, relay={})
    out.commands.update(floor={}, relay={})

    async def direct(method: str, params: dict[str, Any]) -> Any:
        return await session.send(method, params)

    async def relayed(method: str, params: dict[str, Any]) -> Any:
        return await browser.cdp(tab, method, params)

    sends = (("floor", direct), ("relay", relayed))

    async def record(op: str, call: Callable[[], Awaitable[str]]) -> None:
        await call()  # warm: domains enabled, refs known
        probe.reset()
        await call()
        out.sequences[op] = cdp_sequence(probe.reset())

    async def time_replays(op: str) -> None:
        for side, send in sends:
            per_command = out.commands[side]

            def note(
                method: str, ms: float, per_command: dict[str, list[float]] = per_command
            ) -> None:
                per_command.setdefault(f"{op}: {method}", []).append(ms)

            out.samples[side][op] = await timed(
                lambda _, send=send, note=note: bounded(replay(out.sequences[op], send, note)),
                plan.cdp,
                warmup=plan.warmup,
            )

    await agent("browser_navigate", url=pages.url(FORM), tab_id=tab)
    await record("evaluate", lambda: agent("browser_evaluate", expression="1+1", tab_id=tab))
    await record("snapshot", lambda: agent("browser_snapshot", tab_id=tab))
    field = our_ref(await agent("browser_snapshot", tab_id=tab), *NAME_FIELD[1:])
    await record("type", lambda: agent("browser_type", ref=field, text=TYPED, tab_id=tab))
    for side, send in sends:
        out.samples[side]["evaluate"] = await timed(
            lambda _, send=send: bounded(send("Runtime.evaluate", EVALUATE)),
            plan.cdp,
            warmup=plan.warmup,
        )
    await time_replays("snapshot")
    await time_replays("type")

    await agent("browser_navigate", url=pages.url(WIDGETS), tab_id=tab)
    ref = our_ref(await agent("browser_snapshot", tab_id=tab), *COUNTER)
    await record("click", lambda: agent("browser_click", ref=ref, tab_id=tab))
    await time_replays("click")

    await session.send("Page.enable")
    loads = page.browser.cdp.listen(
        lambda e: (
            e.get("sessionId") == session.session_id and e.get("method") == "Page.loadEventFired"
        )
    )
    subscription = harness.core.hub.subscribe(
        maxlen=100,
        accept=lambda e: e.kind == "cdp" and e.tab_id == tab and e.method == "Page.loadEventFired",
    )

    async def floor_navigate(_: int) -> None:
        while not loads.empty():
            loads.get_nowait()
        await bounded(session.send("Page.navigate", {"url": nav_url(pages)}))
        await bounded(loads.get())

    async def relay_navigate(_: int) -> None:
        subscription.drain()
        await bounded(browser.cdp(tab, "Page.navigate", {"url": nav_url(pages)}))
        await bounded(subscription.wait())

    try:
        out.samples["floor"]["navigate"] = await timed(floor_navigate, plan.cdp_nav, warmup=3)
        out.samples["relay"]["navigate"] = await timed(relay_navigate, plan.cdp_nav, warmup=3)
    finally:
        page.browser.cdp.unlisten(loads)
        subscription.close()


async def mcp_phase(
    harness: RelayHarness, home: AppHome, pages: PageServer, plan: Plan, side: str, out: InProcess
) -> None:
    """MCP tool calls from this process with probes on every layer; and a raw client."""
    probe = Probe().install()
    calls: Calls = {}

    def probed(op: str) -> dict[str, Any]:
        calls[op] = []
        return {"before": probe.reset, "after": lambda ms: calls[op].append((ms, probe.reset()))}

    try:
        async with mcp_client(harness.base_mcp(), home.token, name="bench") as client:
            agent = sdk_agent(client)
            tab = await open_tab(agent, pages.url(f"{FORM}?side={side}"))
            out.samples[side] = {
                op: await mcp_op(agent, op, tab, pages, plan, **probed(op)) for op in OPS
            }
            async with RawMcp(harness.mcp_port, home.token) as raw:
                await raw.initialize()
                out.samples[f"{side}-raw"] = await mcp_ops(raw_agent(raw), tab, pages, plan.raw())
    finally:
        probe.remove()
    out.calls[side] = calls


# --- the apps as processes ---------------------------------------------------------------------


async def app_side(
    gui: bool, chromium: ExtensionBrowser, home: AppHome, pages: PageServer, plan: Plan
) -> dict[str, Samples]:
    key = "gui" if gui else "serve"
    async with app_process(home, gui=gui) as app:
        await app.wait_ready()
        await chromium.set_relay_port(home.relay_port)
        await wait_for(app.browsers, timeout=20, message=f"the extension connects to {app.label}")
        async with mcp_client(home.mcp_base, home.token, name="bench") as client:
            agent = sdk_agent(client)
            tab = await open_tab(agent, pages.url(f"{FORM}?side={key}"))
            sdk = await mcp_ops(agent, tab, pages, plan)
            async with RawMcp(home.mcp_port, home.token) as raw:
                await raw.initialize()
                raw_samples = await mcp_ops(raw_agent(raw), tab, pages, plan.raw())
    return {key: sdk, f"{key}-raw": raw_samples}


# --- the peers ----------------------------------------------------------------------------------


async def peer_side(peer: Peer, pages: PageServer, plan: Plan, log_dir: Path) -> Samples:
    async with peer_session(peer, log_dir=log_dir) as session:
        return await _peer_ops(session, pages, plan)


async def _peer_ops(session: PeerSession, pages: PageServer, plan: Plan) -> Samples:
    out: Samples = {}
    await session.navigate(pages.url(f"{FORM}?side={session.peer.key}"))
    out["evaluate"] = await timed(
        lambda _: bounded(session.evaluate()), plan.peer_fast, warmup=plan.warmup // 2
    )
    out["snapshot"] = await timed(
        lambda _: bounded(session.snapshot()), plan.peer_fast, warmup=plan.warmup // 2
    )
    field = await session.click_target(*NAME_FIELD)
    out["type"] = await timed(
        lambda _: bounded(session.type(field, "the name field", TYPED)),
        plan.peer_fast,
        warmup=plan.warmup // 2,
    )
    await session.navigate(pages.url(WIDGETS))
    target = await session.click_target("#counter", *COUNTER)
    out["click"] = await timed(
        lambda _: bounded(session.click(target, "the counter button")),
        plan.peer_fast,
        warmup=plan.warmup // 2,
    )
    out["navigate"] = await timed(
        lambda _: bounded(session.navigate(nav_url(pages))), plan.peer_nav, warmup=2
    )
    return out


# --- the benchmark ------------------------------------------------------------------------------


async def latency_benchmarks(ctx: Any) -> list[Row]:
    plan = Plan.quick() if ctx.quick else Plan()
    measured = InProcess()
    errors: list[Row] = []
    with PageServer() as pages:
        home = AppHome.create(ctx.home / "inproc")
        async with AsyncExitStack() as outer:
            async with running_core(home.paths, paired=(EXTENSION_ID,)) as harness:
                chromium = await outer.enter_async_context(extension_browser(harness.port))
                await wait_for(
                    lambda: len(harness.core.registry), timeout=20, message="the extension"
                )
                await cdp_phase(harness, chromium, home, pages, plan, measured)
                await mcp_phase(harness, home, pages, plan, "inproc", measured)
            # The two apps in alternating rounds, half the samples each time: a machine whose
            # load changes during the run then weighs on both alike.
            half = replace(plan, fast=max(10, plan.fast // 2), nav=max(5, plan.nav // 2))
            for round_ in range(2):
                for gui in (False, True):
                    key = "gui" if gui else "serve"
                    app_home = AppHome.create(
                        ctx.home / f"{key}-{round_}", relay_token=home.relay_token
                    )
                    found = await app_side(gui, chromium, app_home, pages, half)
                    for side, ops in found.items():
                        for op, values in ops.items():
                            measured.samples.setdefault(side, {}).setdefault(op, []).extend(values)
        for peer in PEERS:
            try:
                measured.samples[peer.key] = await peer_side(peer, pages, plan, ctx.log_dir)
            # A peer is someone else's program fetched from npm: report its failure, go on.
            except Exception as exc:
                errors.append(
                    row(f"{peer.label} could not be measured: {leaf(exc)}", 0, "", group="errors")
                )
    samples = measured.samples
    return [
        *latency_rows(samples),
        *breakdown_rows(measured),
        *command_rows(measured),
        *decode_rows(measured),
        *ratio_rows(samples),
        *target_rows(samples),
        *errors,
    ]


def leaf(exc: BaseException) -> str:
    """The first real error inside (anyio wraps a peer's failure in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def p50(samples: dict[str, Samples], side: str, op: str) -> float | None:
    values = samples.get(side, {}).get(op)
    return percentile(values, 0.5) if values else None


def latency_rows(samples: dict[str, Samples]) -> list[Row]:
    rows = []
    for op in OPS:
        for side, label in SIDES.items():
            values = samples.get(side, {}).get(op)
            if not values:
                continue
            for stat, fraction in (("p50", 0.5), ("p95", 0.95)):
                rows.append(
                    row(
                        f"{op} {stat} · {label}",
                        percentile(values, fraction),
                        "ms",
                        group="latency",
                        op=op,
                        side=side,
                        stat=stat,
                        samples=len(values),
                    )
                )
    return rows


VARIANTS = {"inproc": "in-process"}
PARTS = {
    "total": "total, in-process SDK client",
    "transport": "client SDK + HTTP transport (total − server)",
    "sdk": "MCP SDK server: session, JSON-RPC, SSE (server − tool)",
    "runner": "tool runner: validate, tab, policy, waiting for events",
    "log": "command log row (handed to the log's writer thread)",
    "relay_other": "relay: tabs.get and other non-CDP calls (wall time)",
    "relay_cdp": "relay: the tool's CDP commands (wall time)",
    "floor": "the same CDP commands straight to Chromium",
    "round_trips": "relay round trips per call",
    "overlap": "most relay commands in flight at once",
}


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def breakdown_rows(measured: InProcess) -> list[Row]:
    """Where one in-process MCP call's time goes, by layer (medians of per-call figures)."""
    rows = []
    floor = measured.samples.get("floor", {})
    for side in VARIANTS:
        for op in OPS:
            calls = measured.calls.get(side, {}).get(op, [])
            if not calls:
                continue
            parts = {
                "total": _median([t for t, _ in calls]),
                "transport": _median([t - c.asgi for t, c in calls]),
                "sdk": _median([c.asgi - c.endpoint for _, c in calls]),
                "runner": _median([c.endpoint - c.relay - c.log for _, c in calls]),
                "log": _median([c.log for _, c in calls]),
                "relay_other": _median([c.relay_other for _, c in calls]),
                "relay_cdp": _median([c.relay_cdp for _, c in calls]),
                "floor": percentile(floor[op], 0.5) if op in floor else 0.0,
                "round_trips": _median([float(len(c.commands)) for _, c in calls]),
                "overlap": _median([float(c.overlap) for _, c in calls]),
            }
            for part, value in parts.items():
                rows.append(
                    row(f"{op} · {PARTS[part]}", value,
                        "" if part in ("round_trips", "overlap") else "ms",
                        group="breakdown", op=op, side=side, part=part)
                )  # fmt: skip
    for op in OPS:
        calls = measured.calls.get("inproc", {}).get(op, [])
        if not calls:
            continue
        steps: dict[tuple[int, str], list[float]] = {}
        for _, times in calls:
            ordered = sorted(times.commands, key=lambda c: c.started)
            for position, command in enumerate(ordered, 1):
                name = command.cdp_method or command.method
                steps.setdefault((position, f"{name} ({purpose(command)})"), []).append(command.ms)
        for (position, name), values in sorted(steps.items()):
            rows.append(
                row(f"{op} · relay step {position}: {name}", _median(values), "ms",
                    group="steps", op=op, position=position, command=name)
            )  # fmt: skip
    for op, sequence in measured.sequences.items():
        methods = [c.cdp_method or c.method for c in sequence]
        rows.append(
            row(f"{op} · CDP commands the tool sends: {', '.join(methods)}", len(methods), "",
                group="sequence", op=op, sequence=methods)
        )  # fmt: skip
    return rows


def command_rows(measured: InProcess) -> list[Row]:
    """Each CDP command of the snapshot, click and type tools, straight and through the
    relay."""
    rows = []
    for side in ("floor", "relay"):
        for command, values in measured.commands.get(side, {}).items():
            rows.append(
                row(f"{command} p50 · {SIDES[side]}", percentile(values, 0.5), "ms",
                    group="commands", side=side, command=command)
            )  # fmt: skip
    return rows


def decode_rows(measured: InProcess) -> list[Row]:
    """What parsing one large relay answer costs the app (the snapshot's CDP results)."""
    rows = []
    for command in measured.sequences.get("snapshot", []):
        frame = encode({"id": "1", "result": command.result})
        loads = timeit.repeat(lambda frame=frame: json.loads(frame), number=1, repeat=30)
        checked = timeit.repeat(lambda frame=frame: decode_json(frame), number=1, repeat=30)
        label = f"{command.cdp_method} answer ({len(frame) / 1024:.0f} KiB)"
        for what, values in (
            ("json.loads", loads),
            ("decode_json (json.loads + depth walk)", checked),
        ):
            rows.append(
                row(f"relay parse · {label} · {what}", statistics.median(values) * 1000, "ms",
                    group="decode", command=command.cdp_method, bytes=len(frame), step=what)
            )  # fmt: skip
    return rows


RATIOS = (
    ("relay", "floor", "relay / floor"),
    ("serve", "floor", "Tabrelay MCP / floor"),
    ("serve", "relay", "Tabrelay MCP / relay"),
    ("serve-raw", "serve", "raw HTTP client / SDK client"),
    ("serve", "playwright", "Tabrelay MCP / Playwright MCP"),
    ("serve", "devtools", "Tabrelay MCP / chrome-devtools-mcp"),
    ("gui", "serve", "tray app / tabrelay serve"),
)


def ratio_rows(samples: dict[str, Samples]) -> list[Row]:
    rows = []
    for op in OPS:
        for top, bottom, label in RATIOS:
            a, b = p50(samples, top, op), p50(samples, bottom, op)
            if a is None or b is None or b == 0:
                continue
            rows.append(
                row(f"{op} p50 ratio · {label}", a / b, "×", group="ratios", op=op, pair=label)
            )
    return rows


def target_rows(samples: dict[str, Samples]) -> list[Row]:
    rows = []
    ours = {op: p50(samples, "serve", op) for op in OPS}
    floor = p50(samples, "floor", "evaluate")
    server_side = p50(samples, "serve-raw", "evaluate")
    if ours["evaluate"] is not None and floor is not None:
        rows.append(
            verdict(
                "MCP evaluate p50 ≤ 3 × CDP floor + 2 ms",
                ours["evaluate"],
                "ms",
                3 * floor + 2,
                target=f"≤ {3 * floor + 2:.2f} ms (floor {floor:.2f} ms)",
            )
        )
    if server_side is not None and floor is not None:  # issue 16: the server's share alone
        rows.append(
            verdict(
                "server-side evaluate p50 (raw HTTP client) ≤ 3 × CDP floor + 1 ms",
                server_side,
                "ms",
                3 * floor + 1,
                target=f"≤ {3 * floor + 1:.2f} ms (floor {floor:.2f} ms)",
            )
        )
    for peer in PEERS:
        for op, limit in (("evaluate", 0.05), ("navigate", 0.5)):
            theirs = p50(samples, peer.key, op)
            if ours[op] is None or theirs is None:
                rows.append(
                    row(f"MCP {op} p50 ≤ {limit} × {peer.label}", 0, "×", group="targets",
                        target=f"≤ {limit}", note="peer not measured")
                )  # fmt: skip
                continue
            rows.append(
                verdict(
                    f"MCP {op} p50 ≤ {limit} × {peer.label}",
                    ours[op] / theirs,
                    "×",
                    limit,
                    target=f"≤ {limit} ({ours[op]:.1f} vs {theirs:.1f} ms)",
                )
            )
    theirs = p50(samples, "devtools", "snapshot")
    if ours["snapshot"] is not None and theirs is not None:
        rows.append(
            verdict(
                "MCP snapshot p50 no slower than chrome-devtools-mcp",
                ours["snapshot"] / theirs,
                "×",
                1.0,
                target=f"≤ 1 ({ours['snapshot']:.1f} vs {theirs:.1f} ms)",
            )
        )
    for op in ("click", "type"):  # issue 27, on a page that stays
        acted, op_floor = ours[op], p50(samples, "floor", op)
        if acted is not None and op_floor is not None:
            rows.append(
                verdict(
                    f"MCP {op} p50 ≤ 2 × its CDP floor + 5 ms",
                    acted,
                    "ms",
                    2 * op_floor + 5,
                    target=f"≤ {2 * op_floor + 5:.2f} ms (floor {op_floor:.2f} ms)",
                )
            )
    for op in OPS:
        gui, serve = p50(samples, "gui", op), ours[op]
        if gui is not None and serve is not None:
            rows.append(
                verdict(
                    f"tray app {op} p50 within 1.3 × tabrelay serve",
                    gui / serve,
                    "×",
                    1.3,
                    target=f"≤ 1.3 ({gui:.1f} vs {serve:.1f} ms)",
                )
            )
    return rows
