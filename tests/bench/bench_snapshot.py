"""Snapshot size: our browser_snapshot against the peers' on the same pages, and completeness.

For each test page (tests/e2e/pages/tools) the bench takes our snapshot through MCP (following
the "call again with offset=N" continuation of pages over the response budget, so "full" is the
whole outline), Playwright MCP's browser_snapshot and chrome-devtools-mcp's take_snapshot, and
compares the text each gives the model (bytes; tokens ≈ bytes / 4, the ratio our budget uses).

Completeness is checked independently of our code: a DOM query in the page (over Chromium's own
debugging port) lists every visible interactive element — links, buttons, inputs, selects,
textareas, contenteditables, ARIA widgets, focusable elements, in open shadow roots and
same-origin frames — with the names a person would read (aria-label, labels, text, value,
placeholder, title). Each must appear in our snapshot as a line with a ref.

Then the pages of 500, 2,000 and 8,000 interactive elements, timed against the peers
(``snapshot_scale``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any

from bench_latency import Agent, open_tab, sdk_agent
from peers import PEERS, peer_session
from rig import EXTENSION_ID, AppHome, PageServer, extension_browser, wait_for
from snapshot_scale import scale_benchmarks
from stats import Row, row, verdict

from support.harness import running_core
from support.mcp import mcp_client
from tabrelay.tools.page.outline import MAX_NAME  # longer names are shortened with "…"

PAGES = ("form", "widgets", "article", "long", "dialogs", "activity", "slow", "huge")
SETTLE = {"slow": 1.0}  # seconds: slow.html reveals its content over 700 ms
BYTES_PER_TOKEN = 4

INTERACTIVE = r"""
(() => {
  const SELECTOR = [
    'a[href]', 'area[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea',
    'summary', '[contenteditable=""]', '[contenteditable=true]', '[tabindex]:not([tabindex="-1"])',
    ...['button', 'link', 'checkbox', 'radio', 'textbox', 'searchbox', 'combobox', 'listbox',
        'tab', 'menuitem', 'switch', 'slider', 'spinbutton', 'option'].map((r) => `[role=${r}]`),
  ].join(',');
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const found = [];
  const visit = (root, where) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) visit(el.shadowRoot, where + ' >> shadow');
      if (el.tagName === 'IFRAME') {
        try { if (el.contentDocument) visit(el.contentDocument, where + ' >> frame'); } catch (e) {}
      }
      if (!el.matches(SELECTOR)) continue;
      if (!el.checkVisibility({ visibilityProperty: true })) continue;
      const byId = (id) => (root.getElementById ? root.getElementById(id) : null);
      const labelledBy = (el.getAttribute('aria-labelledby') || '').split(/\s+/)
        .map((id) => (byId(id) || {}).textContent).join(' ');
      const names = [
        el.getAttribute('aria-label'), labelledBy,
        ...(el.labels ? [...el.labels].map((l) => l.textContent) : []),
        el.getAttribute('title'), el.getAttribute('placeholder'), el.getAttribute('alt'),
        el.tagName === 'INPUT' ? el.value : el.textContent,
      ].map(clean).filter(Boolean);
      found.push({ tag: el.tagName.toLowerCase(), type: el.getAttribute('type') || '', names,
                   where: where || 'page' });
    }
  };
  visit(document, '');
  return found;
})()
"""

_REF_LINE = re.compile(r'^\s*(?P<role>[^\s"]+)(?: (?P<name>".*"))? \[e\d+\]')
_OFFSET = re.compile(r"call again with offset=(\d+)")


async def our_snapshot(agent: Agent, tab: int) -> tuple[str, list[str]]:
    """The first response, and every response of the whole outline (following offsets)."""
    first = await agent("browser_snapshot", tab_id=tab)
    parts = [first]
    while (match := _OFFSET.search(parts[-1])) is not None and len(parts) < 50:
        parts.append(await agent("browser_snapshot", tab_id=tab, offset=int(match.group(1))))
    return first, parts


def ref_names(snapshot: str) -> Counter[str]:
    """How many lines with a ref carry each name ("" for unnamed)."""
    names: Counter[str] = Counter()
    for line in snapshot.splitlines():
        match = _REF_LINE.match(line)
        if match is None:
            continue
        quoted = match.group("name")
        name = json.loads(quoted) if quoted else ""
        names[" ".join(name.split())] += 1
    return names


def missing_elements(snapshot: str, elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The interactive elements without a line with a ref and one of their names."""
    available = ref_names(snapshot)
    missing = []
    for element in elements:
        for name in [*element["names"], ""]:
            key = _present(available, name)
            if key is not None:
                available[key] -= 1
                break
        else:
            missing.append(element)
    return missing


def _present(available: Counter[str], name: str) -> str | None:
    if available[name] > 0:
        return name
    if len(name) >= MAX_NAME:  # shortened with "…" in the outline
        for candidate, count in available.items():
            if count > 0 and candidate.startswith(name[: MAX_NAME - 5]):
                return candidate
    return None


async def snapshot_benchmarks(ctx: Any) -> list[Row]:
    ours: dict[str, tuple[str, list[str]]] = {}
    elements: dict[str, list[dict[str, Any]]] = {}
    theirs: dict[str, dict[str, str]] = {}
    errors: list[Row] = []
    with PageServer() as pages:
        home = AppHome.create(ctx.home / "app")
        async with (
            running_core(home.paths, paired=(EXTENSION_ID,)) as harness,
            extension_browser(harness.port) as chromium,
        ):
            await wait_for(lambda: len(harness.core.registry), timeout=20, message="extension")
            async with mcp_client(harness.base_mcp(), home.token, name="bench") as client:
                agent = sdk_agent(client)
                start = pages.url("index.html?side=snapshot")
                tab = await open_tab(agent, start)
                page = await chromium.attach_page(start)
                for name in PAGES:
                    await agent("browser_navigate", url=pages.url(f"tools/{name}.html"), tab_id=tab)
                    await asyncio.sleep(SETTLE.get(name, 0))
                    ours[name] = await our_snapshot(agent, tab)
                    elements[name] = await page.evaluate(INTERACTIVE)
        for peer in PEERS:
            try:
                async with peer_session(peer, log_dir=ctx.log_dir) as session:
                    theirs[peer.key] = {}
                    for name in PAGES:
                        await session.navigate(pages.url(f"tools/{name}.html"))
                        await asyncio.sleep(SETTLE.get(name, 0))
                        theirs[peer.key][name] = await session.snapshot()
            # A peer is someone else's program fetched from npm: report its failure, go on.
            except Exception as exc:
                theirs.pop(peer.key, None)
                errors.append(row(f"{peer.label} snapshots failed: {exc}", 0, "", group="errors"))
        scale = await scale_benchmarks(ctx, pages)
    return [*size_rows(ours, elements, theirs), *errors, *scale]


def size_rows(
    ours: dict[str, tuple[str, list[str]]],
    elements: dict[str, list[dict[str, Any]]],
    theirs: dict[str, dict[str, str]],
) -> list[Row]:
    rows: list[Row] = []
    totals = Counter[str]()
    for name in PAGES:
        first, parts = ours[name]
        full = "".join(parts)
        size = {
            "ours-first": len(first.encode()),
            "ours": len(full.encode()),
            **{key: len(text[name].encode()) for key, text in theirs.items()},
        }
        totals.update(size)
        missing = missing_elements(full, elements[name])
        found = len(elements[name]) - len(missing)
        common = {"group": "snapshot", "page": name}
        for key, value in size.items():
            rows.append(row(f"snapshot {name}.html · {key} bytes", value, "B", side=key, **common))
        rows.append(
            row(f"snapshot {name}.html · our calls (response budget)", len(parts), "",
                side="calls", **common)
        )  # fmt: skip
        rows.append(
            row(f"snapshot {name}.html · interactive elements with a ref in ours", found,
                f"of {len(elements[name])}", side="interactive", total=len(elements[name]),
                missing=[e["names"][:1] or [e["tag"]] for e in missing], **common)
        )  # fmt: skip
        if "playwright" in size:
            ratio = size["ours"] / size["playwright"]
            complete = not missing
            rows.append(
                row(
                    f"snapshot {name}.html ≤ 50 % of Playwright MCP's bytes, all interactive",
                    ratio,
                    "×",
                    target=f"≤ 0.5, {found}/{len(elements[name])} with a ref",
                    met=ratio <= 0.5 and complete,
                    group="targets",
                    page=name,
                )
            )
    if "playwright" in totals:
        rows.append(
            verdict(
                "snapshot, all pages: our bytes / Playwright MCP's",
                totals["ours"] / totals["playwright"],
                "×",
                0.5,
                target=f"≤ 0.5 ({totals['ours']:,} vs {totals['playwright']:,} B)",
            )
        )
    for key, value in totals.items():
        rows.append(
            row(f"snapshot all pages · {key} ≈ tokens", value / BYTES_PER_TOKEN, "tokens",
                group="snapshot", page="all", side=key)
        )  # fmt: skip
    return rows
