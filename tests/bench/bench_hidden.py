"""Hidden text (issue 25, finding 4): the page of 36 sentences a sighted person cannot see
(``tests/e2e/pages/hidden/techniques.html``: 34 ways of hiding text, a picture's alt text pushed
off the page, and an accessible name that contradicts its button), read by our snapshot, find
and content, and by each peer's snapshot. Per reader, how many of the 36 reached the model.
Target: none of ours.
"""

from __future__ import annotations

import re
from typing import Any

from peers import PEERS, peer_session
from rig import PageServer, app_in_process
from stats import Row, row, verdict

GROUP = "hidden text"
PAGE = "hidden/techniques.html"
SENTENCES = 36


def reached(text: str) -> set[str]:
    return set(re.findall(r"HIDDEN-\d\d", text))


async def hidden_benchmarks(ctx: Any) -> list[Row]:
    rows: list[Row] = []
    with PageServer() as pages:
        url = pages.url(PAGE)
        async with app_in_process(ctx.home / "app") as run:
            agent = run.agent
            tab = await agent.open(url)
            ours = {
                "Tabrelay browser_snapshot": await agent.snapshot(tab),
                "Tabrelay browser_find 'HIDDEN'": await agent.ok(
                    "browser_find", tab_id=tab, text="HIDDEN"
                ),
                "Tabrelay browser_get_content markdown": await agent.ok(
                    "browser_get_content", tab_id=tab
                ),
                "Tabrelay browser_get_content text": await agent.ok(
                    "browser_get_content", tab_id=tab, format="text"
                ),
            }
        for name, text in ours.items():
            rows.append(_row(name, text))
        for peer in PEERS:
            try:
                async with peer_session(peer, log_dir=ctx.log_dir) as session:
                    await session.navigate(url)
                    rows.append(_row(f"{peer.label} snapshot", await session.snapshot()))
            # A peer is someone else's program fetched from npm: report its failure, go on.
            except Exception as exc:
                rows.append(row(f"{peer.label} failed: {exc}", 0, "", group="errors"))
    worst = max((r["value"] for r in rows if r.get("ours")), default=0)
    rows.append(
        verdict(
            f"hidden text · of {SENTENCES} hidden sentences, the most our tools let through",
            worst,
            "sentences",
            0,
            target="none",
        )
    )
    return rows


def _row(name: str, text: str) -> Row:
    found = reached(text)
    return row(
        f"{name}: {len(found)} of {SENTENCES}",
        len(found),
        "sentences",
        group=GROUP,
        ours=name.startswith("Tabrelay"),
        which=sorted(found),
    )
