"""Reach (issue 26): what reading closed shadow roots and frames of other sites costs, and what
a download and a page's own tool take.

The generated page of the snapshot bench (``bench/many.html``) with each section of 40 controls
in a shadow root on a custom element (``?shadow=open`` or ``closed``), at 500, 2,000 and 8,000
controls, through ``browser_snapshot`` over MCP (the app in this process, the real extension).
The first snapshot of a page with closed roots asks Chrome for them (``shadow_roots``); the
later ones find none new. Times are of the first response (as the snapshot bench's); refs are
counted over the whole outline (every part followed). Targets: every control has a ref; closed
roots cost at most 1.2 × open ones at 2,000 controls (later snapshots); growth stays linear
(8,000 vs 500, per control, ≤ 1).
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
import urllib.parse
import uuid
from typing import Any

from bench_snapshot import our_snapshot
from rig import PageServer, app_in_process
from stats import Row, row, verdict

from e2e.agent import ref

GROUP = "reach: closed shadow roots"
SIZES = (500, 2000, 8000)
MODES = ("none", "open", "closed")
SAMPLES = 5


async def reach_benchmarks(ctx: Any) -> list[Row]:
    samples = 2 if ctx.quick else SAMPLES
    first: dict[tuple[str, int], float] = {}
    later: dict[tuple[str, int], float] = {}
    refs: dict[tuple[str, int], int] = {}
    with PageServer() as pages:
        async with app_in_process(ctx.home / "reach") as run:
            agent = run.agent
            tab = await agent.open(pages.url("index.html?side=reach"))
            for n in SIZES:
                for mode in MODES:
                    shadow = "" if mode == "none" else f"&shadow={mode}"
                    await agent.ok("browser_navigate", tab_id=tab,
                                   url=pages.url(f"bench/many.html?n={n}{shadow}"))  # fmt: skip
                    started = time.perf_counter()
                    await agent.snapshot(tab)
                    first[mode, n] = (time.perf_counter() - started) * 1000
                    _, parts = await our_snapshot(agent.ok, tab)
                    refs[mode, n] = len(set(re.findall(r"\[e\d+\]", "".join(parts))))
                    times = []
                    for _ in range(samples):
                        started = time.perf_counter()
                        await agent.snapshot(tab)
                        times.append((time.perf_counter() - started) * 1000)
                    later[mode, n] = statistics.median(times)
    rows: list[Row] = []
    for (mode, n), ms in later.items():
        where = "the document" if mode == "none" else f"{mode} shadow roots"
        label = f"snapshot {n:,} controls, sections in {where}"
        rows.append(row(f"{label} · first", first[mode, n], "ms", group=GROUP))
        rows.append(row(f"{label} · later p50", ms, "ms", group=GROUP))
        rows.append(row(f"{label} · refs", refs[mode, n], f"of ≥ {n}", group=GROUP))
    missing = sum(max(0, n - refs["closed", n]) for n in SIZES)
    rows.append(verdict("closed shadow roots: controls without a ref", missing, "", 0))
    ratio = later["closed", 2000] / later["open", 2000]
    rows.append(
        verdict("closed shadow roots: snapshot 2,000 controls, closed / open", ratio, "×", 1.2,
                target=f"≤ 1.2 ({later['closed', 2000]:.0f} vs {later['open', 2000]:.0f} ms)")
    )  # fmt: skip
    growth = (later["closed", 8000] / 8000) / (later["closed", 500] / 500)
    rows.append(
        verdict("closed shadow roots: cost per control, 8,000 vs 500 (linear: ≤ 1)", growth,
                "×", 1.0)
    )  # fmt: skip
    return rows


FRAMES_GROUP = "reach: frames of other sites"
FRAME_COUNT, FRAME_CONTROLS = 5, 200


async def frames_benchmarks(ctx: Any) -> list[Row]:
    """5 frames of 200 controls each (``bench/frames.html``), from the page's own origin or
    each from a site of its own (a process of its own, read through a child session): the
    same content, so the ratio is what reaching other processes costs. Target ≤ 1.5 ×."""
    samples = 3 if ctx.quick else SAMPLES * 2
    first: dict[str, float] = {}
    later: dict[str, float] = {}
    refs: dict[str, int] = {}
    with PageServer() as pages:
        async with app_in_process(ctx.home / "frames") as run:
            agent = run.agent
            tab = await agent.open(pages.url("index.html?side=frames"))
            for sites in ("same", "other"):
                query = f"frames={FRAME_COUNT}&n={FRAME_CONTROLS}&sites={sites}"
                await agent.ok("browser_navigate", tab_id=tab,
                               url=pages.url(f"bench/frames.html?{query}"))  # fmt: skip
                await _frames_loaded(agent, tab)
                started = time.perf_counter()
                await agent.snapshot(tab)
                first[sites] = (time.perf_counter() - started) * 1000
                _, parts = await our_snapshot(agent.ok, tab)
                refs[sites] = len(set(re.findall(r"\[e\d+\]", "".join(parts))))
                times = []
                for _ in range(samples):
                    started = time.perf_counter()
                    await agent.snapshot(tab)
                    times.append((time.perf_counter() - started) * 1000)
                later[sites] = statistics.median(times)
    rows: list[Row] = []
    for sites, where in (("same", "the page's origin"), ("other", "5 other sites")):
        label = f"snapshot {FRAME_COUNT} frames × {FRAME_CONTROLS} controls from {where}"
        rows.append(row(f"{label} · first", first[sites], "ms", group=FRAMES_GROUP))
        rows.append(row(f"{label} · later p50", later[sites], "ms", group=FRAMES_GROUP))
        rows.append(row(f"{label} · refs", refs[sites], "", group=FRAMES_GROUP))
    wanted = FRAME_COUNT * FRAME_CONTROLS
    rows.append(verdict("frames of other sites: controls without a ref",
                        max(0, wanted - refs["other"]), "", 0))  # fmt: skip
    ratio = later["other"] / later["same"]
    rows.append(
        verdict("frames of other sites: snapshot, other sites / same origin", ratio, "×", 1.5,
                target=f"≤ 1.5 ({later['other']:.0f} vs {later['same']:.0f} ms)")
    )  # fmt: skip
    return rows


async def _frames_loaded(agent: Any, tab: int) -> None:
    """Until every frame shows its last control (frames load after the page's load event)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = await agent.ok("browser_find", tab_id=tab, text=f"Option {FRAME_CONTROLS - 1}")
        if found.startswith(f"{FRAME_COUNT} match"):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the frames did not load")


DOWNLOADS_GROUP = "reach: downloads and page tools"
DOWNLOAD_SIZES = (1_000, 1_000_000, 16_000_000)
_NAMED = re.compile(
    r"download (d\d+): report-\d+[^./]*\.csv \(([\d,]+) bytes, text/csv\) from http"
)


async def downloads_benchmarks(ctx: Any) -> list[Row]:
    """A click on *Export CSV* (``reach/export.html``, a CSV served as an attachment of 1 kB,
    1 MB and 16 MB) until its answer names the file (held by the extension for the app's word,
    let go, followed, moved into the private folder), and ``browser_get_content`` reading it
    back (the first response's worth); a page's own tool (``reach/webmcp.html``, WebMCP) called
    through ``browser_page_tool``. The bench home allows everything, so nobody is asked: the
    times are Tabrelay's, not a person's. Target: every answer names the file with its size."""
    samples = 2 if ctx.quick else SAMPLES
    rows: list[Row] = []
    named = 0
    with PageServer() as pages:
        async with app_in_process(ctx.home / "downloads") as run:
            agent = run.agent
            for size in DOWNLOAD_SIZES:
                body = _csv(size)
                clicks, reads, said, read = [], [], "", ""
                for _ in range(samples):
                    name = f"report-{size}.csv"
                    url = pages.serve(f"files/{uuid.uuid4().hex[:8]}/r", body, "text/csv",
                                      attachment=name)  # fmt: skip
                    query = urllib.parse.urlencode({"csv": url})
                    tab = await agent.open(pages.url(f"reach/export.html?{query}"))
                    link = ref(await agent.snapshot(tab), "link", "Export CSV")
                    started = time.perf_counter()
                    said = await agent.ok("browser_click", tab_id=tab, ref=link)
                    clicks.append((time.perf_counter() - started) * 1000)
                    match = _NAMED.search(said)
                    if match is None or int(match.group(2).replace(",", "")) != size:
                        raise AssertionError(f"the download was not named: {said}")
                    named += 1
                    started = time.perf_counter()
                    read = await agent.ok("browser_get_content", download_id=match.group(1))
                    reads.append((time.perf_counter() - started) * 1000)
                    await agent.ok("browser_close_tab", tab_id=tab)
                label = f"download a {size:,}-byte CSV"
                rows += [
                    row(f"{label} · click to answer p50", statistics.median(clicks), "ms",
                        group=DOWNLOADS_GROUP),
                    row(f"{label} · answer", len(said.encode()), "bytes", group=DOWNLOADS_GROUP),
                    row(f"{label} · read back p50", statistics.median(reads), "ms",
                        group=DOWNLOADS_GROUP),
                    row(f"{label} · read back", len(read.encode()), "bytes", group=DOWNLOADS_GROUP),
                ]  # fmt: skip
            tab = await agent.open(pages.url("reach/webmcp.html"))
            calls, answer = [], ""
            for _ in range(samples * 2):
                started = time.perf_counter()
                answer = await agent.ok("browser_page_tool", tab_id=tab, name="search_teas",
                                        arguments={"q": "green"})  # fmt: skip
                calls.append((time.perf_counter() - started) * 1000)
            rows += [
                row("a page's own tool (search_teas) · call p50", statistics.median(calls), "ms",
                    group=DOWNLOADS_GROUP),
                row("a page's own tool (search_teas) · answer", len(answer.encode()), "bytes",
                    group=DOWNLOADS_GROUP),
            ]  # fmt: skip
    wanted = samples * len(DOWNLOAD_SIZES)
    rows.append(verdict("downloads: answers without the file's name and size",
                        wanted - named, "", 0))  # fmt: skip
    return rows


def _csv(size: int) -> bytes:
    """A CSV of exactly ``size`` bytes."""
    line = b"1,Ada Lovelace,12.50\n"
    head = b"id,name,total\n"
    body = head + line * ((size - len(head)) // len(line))
    return body + b"x" * (size - len(body))
