"""The bench's output: the console table, the machine description, and docs/benchmarks.md.

``write_docs`` regenerates only the part of docs/benchmarks.md between the ``results`` markers
(tables built from the rows); the analysis around it is written by hand and kept.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from bench_tools_list import tools_list_tables
from peers import PEERS
from stats import Row

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- results:begin (written by tests/bench/run.py; edit outside these markers) -->"
END = "<!-- results:end -->"
NAME_WIDTH = 78


# --- the console ----------------------------------------------------------------------------


def _value(value: float, unit: str) -> str:
    if unit in ("B", "events", "objects", "tokens") or (unit == "" and float(value).is_integer()):
        return f"{value:,.0f}"
    if unit == "events/s":
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}" if abs(value) < 0.01 and value else f"{value:.2f}"


def _line(item: Row) -> str:
    name = item["name"]
    if len(name) > NAME_WIDTH:
        name = name[: NAME_WIDTH - 1] + "…"
    target = item.get("target", "")
    verdict = "" if "met" not in item else ("  met" if item["met"] else "  NOT MET")
    value = _value(item["value"], item["unit"])
    return f"{name.ljust(NAME_WIDTH)} {value:>12} {item['unit']:<8} {target}{verdict}"


def print_table(rows: list[Row]) -> None:
    """Rows by benchmark and group; every target again at the end, with the count."""
    sections: dict[str, list[Row]] = {}
    for item in rows:
        if "met" not in item:
            key = f"{item.get('benchmark', '')} · {item.get('group', '')}"
            sections.setdefault(key, []).append(item)
    for heading, items in sections.items():
        print(f"\n## {heading}")
        for item in items:
            print(_line(item))
    met = [r for r in rows if "met" in r]
    print("\n## targets")
    for item in met:
        print(_line(item))
    print(f"\ntargets: {sum(r['met'] for r in met)} met, {sum(not r['met'] for r in met)} not met")


# --- the machine ----------------------------------------------------------------------------


def _run(*argv: str) -> str:
    if shutil.which(argv[0]) is None:
        return "missing"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        match = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
        cpu = match.group(1).strip() if match else cpu
    memory = 0
    with contextlib.suppress(OSError, AttributeError, ValueError):
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    changed: list[str] = []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        status = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "desktop", "extension"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        changed = [line[3:] for line in status.stdout.splitlines() if line.strip()]
    return {
        "commit": _run("git", "-C", str(REPO), "rev-parse", "--short", "HEAD"),
        "uncommitted": sorted(changed),  # the bench measures the working tree
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "chromium": _run("chromium", "--version"),
        "node": _run("node", "--version"),
        "packages": {
            name: _version(name)
            for name in (
                "tabrelay",
                "mcp",
                "PySide6-Essentials",
                "qasync",
                "websockets",
                "uvicorn",
                "pydantic",
            )
        },
        "peers": {peer.package: peer.version for peer in PEERS},
    }


# --- docs/benchmarks.md ---------------------------------------------------------------------


def write_docs(record: dict[str, Any]) -> None:
    tables = render(record)
    text = DOCS.read_text() if DOCS.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text = f"{text.rstrip()}\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(f"{head}{BEGIN}\n\n{tables}\n{END}{tail}")


def _table(header: list[str], lines: Iterable[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out) + "\n"


def _pick(rows: list[Row], **match: Any) -> list[Row]:
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def _one(rows: list[Row], **match: Any) -> Row | None:
    found = _pick(rows, **match)
    return found[0] if found else None


def _cell(item: Row | None, fmt: Callable[[float], str] | None = None) -> str:
    if item is None:
        return "–"
    return fmt(item["value"]) if fmt else _value(item["value"], item["unit"])


def render(record: dict[str, Any]) -> str:
    from bench_latency import OPS, PARTS, RATIOS, SIDES, VARIANTS

    rows: list[Row] = record["rows"]
    m = record["machine"]
    measured = f"commit {m.get('commit', '?')}"
    if m.get("uncommitted"):
        measured += " with uncommitted changes to " + ", ".join(
            f"`{path}`" for path in m["uncommitted"]
        )
    parts = [
        f"Measured: {measured}.\n",
        f"Run {record['time']} on {m['cpu']} ({m['cpus']} CPUs, {m['memory_gib']} GiB), "
        f"{m['platform']}; load average at start {m['load_average_at_start']}. "
        f"{m['chromium']}; Python {m['python']}; node {m['node']}; "
        + ", ".join(f"{k} {v}" for k, v in m["packages"].items())
        + "; peers "
        + ", ".join(f"{k} {v}" for k, v in m["peers"].items())
        + f". Whole run: {record['seconds'].get('total', 0):.0f} s; load average (1 min) at the"
        " end of each benchmark: "
        + ", ".join(f"{r['benchmark']} {r['value']:.2f}" for r in _pick(rows, group="machine"))
        + " (2 CPUs: above ≈ 1, something else was running).\n",
        "### Targets\n",
        _table(
            ["target", "measured", "", "verdict"],
            [
                [
                    r["name"],
                    _value(r["value"], r["unit"]),
                    r.get("target", ""),
                    "met" if r["met"] else "**not met**",
                ]
                for r in rows
                if "met" in r
            ],
        ),
    ]
    latency = _pick(rows, group="latency")
    if latency:
        sides = [s for s in SIDES if _pick(latency, side=s)]
        parts.append("### Latency, ms (p50 / p95)\n")
        lines = []
        for side in sides:
            cells = [SIDES[side]]
            for op in OPS:
                p50, p95 = (_one(latency, side=side, op=op, stat=s) for s in ("p50", "p95"))
                cells.append(f"{_cell(p50)} / {_cell(p95)}" if p50 else "–")
            samples = _pick(latency, side=side)
            cells.append(str(max(r["samples"] for r in samples)))
            lines.append(cells)
        parts.append(_table(["side", *OPS, "samples"], lines))
        parts.append("### Pairwise ratios of p50\n")
        parts.append(
            _table(
                ["ratio", *OPS],
                [
                    [
                        label,
                        *(
                            _cell(
                                _one(rows, group="ratios", op=op, pair=label), lambda v: f"{v:.2f}×"
                            )
                            for op in OPS
                        ),
                    ]
                    for _, _, label in RATIOS
                ],
            )
        )
    breakdown = _pick(rows, group="breakdown")
    if breakdown:
        parts.append("### Where an MCP tool call's time goes (in-process, medians, ms)\n")
        header = ["layer"]
        columns = []
        for side, variant in VARIANTS.items():
            for op in OPS:
                if _pick(breakdown, side=side, op=op):
                    header.append(op if len(VARIANTS) == 1 else f"{op}, {variant}")
                    columns.append((side, op))
        lines = [
            [label, *(_cell(_one(breakdown, side=s, op=o, part=part)) for s, o in columns)]
            for part, label in PARTS.items()
        ]
        parts.append(_table(header, lines))
    steps = _pick(rows, group="steps")
    if steps:
        parts.append("### Relay round trips of one tool call, in order (in-process)\n")
        lines = []
        for op in OPS:
            mine = sorted(_pick(steps, op=op), key=lambda r: r["position"])
            if mine:
                lines.append([op, ", ".join(f"{r['command']} {r['value']:.1f}" for r in mine)])
        parts.append(_table(["tool", "relay calls (ms, median)"], lines))
    commands = _pick(rows, group="commands")
    if commands:
        parts.append("### The tools' CDP commands, straight to Chromium and through the relay\n")
        names = list(dict.fromkeys(r["command"] for r in commands))
        parts.append(
            _table(
                ["command", "floor p50 ms", "relay p50 ms"],
                [
                    [
                        name,
                        _cell(_one(commands, command=name, side="floor")),
                        _cell(_one(commands, command=name, side="relay")),
                    ]
                    for name in names
                ],
            )
        )
    decode = _pick(rows, group="decode")
    if decode:
        parts.append("### Parsing one relay answer in the app\n")
        parts.append(
            _table(
                ["answer · step", "ms (median)"],
                [[r["name"].removeprefix("relay parse · "), _cell(r)] for r in decode],
            )
        )
    sequence = _pick(rows, group="sequence")
    if sequence:
        parts.append(
            "CDP commands per call: "
            + "; ".join(f"{r['op']}: {', '.join(r['sequence'])}" for r in sequence)
            + ".\n"
        )
    parts += _snapshot_tables(rows)
    parts += _outline_corpus_tables(rows)
    parts += _effects_tables(rows)
    parts += _listed(
        rows,
        "snapshot scale",
        "Snapshot on generated pages of 500, 2,000 and 8,000 interactive elements",
    )
    parts += _listed(
        rows, "snapshot breakdown", "Where our snapshot's time goes where it misses its target"
    )
    parts += tools_list_tables(rows)
    parts += _events_tables(rows)
    parts += _idle_tables(rows)
    parts += _listed(rows, "where idle memory goes", "Where idle memory and start-up imports go")
    parts += _reliability_table(rows)
    errors = _pick(rows, group="errors")
    if errors:
        parts.append("### Errors\n\n" + "".join(f"- {r['name']}\n" for r in errors))
    return "\n".join(parts)


def _listed(rows: list[Row], group: str, title: str) -> list[str]:
    """The rows of one group as a two-column table, in the order measured."""
    found = [r for r in _pick(rows, group=group) if "met" not in r]
    if not found:
        return []
    return [
        f"### {title}\n",
        _table(["", "measured"], [[r["name"], f"{_cell(r)} {r['unit']}".strip()] for r in found]),
    ]


def _snapshot_tables(rows: list[Row]) -> list[str]:
    snapshot = _pick(rows, group="snapshot")
    if not snapshot:
        return []
    pages = list(dict.fromkeys(r["page"] for r in snapshot if r["page"] != "all"))
    lines = []
    for page in pages:

        def size(side: str, page: str = page) -> Row | None:
            return _one(snapshot, page=page, side=side)

        ours, pw = size("ours"), size("playwright")
        interactive = size("interactive")
        ratio = f"{ours['value'] / pw['value']:.2f}" if ours and pw else "–"
        found = f"{interactive['value']:.0f} / {interactive['total']}" if interactive else "–"
        lines.append(
            [
                f"{page}.html",
                _cell(size("ours-first")),
                _cell(ours),
                _cell(size("calls")),
                _cell(pw),
                _cell(size("devtools")),
                ratio,
                f"≈ {ours['value'] / 4:,.0f} / {pw['value'] / 4:,.0f}" if ours and pw else "–",
                found,
            ]
        )
    return [
        "### Snapshot size, bytes of text the model reads\n",
        _table(
            [
                "page",
                "ours, first call",
                "ours, whole outline",
                "our calls",
                "Playwright MCP",
                "chrome-devtools-mcp",
                "ours / Playwright",
                "≈ tokens ours / Playwright",
                "interactive elements with a ref",
            ],
            lines,
        ),
    ]


def _outline_corpus_tables(rows: list[Row]) -> list[str]:
    pages = _pick(rows, group="outline corpus")
    if not pages:
        return []
    columns = ("chrome_lines", "our_lines", "extra", "without_ref", "bare", "duplicated")
    lines = [
        [
            r["page"] + ("" if r["fast"] else " (bench only)"),
            *(f"{r[c]:,}" for c in columns[:2]),
            f"{r['value']:.0f}",
            *(f"{r[c]:,}" for c in columns[2:]),
            f"{r['ms']:,.0f}",
            f"{r['bytes']:,}",
        ]
        for r in pages
    ]
    out = [
        "### The outline against Chrome's accessibility tree, on real apps\n",
        _table(
            [
                "app: page",
                "Chrome's lines",
                "our lines",
                "missing",
                "extra",
                "controls without a ref",
                "bare lines",
                "controls twice",
                "snapshot ms",
                "snapshot bytes",
            ],
            lines,
        ),
    ]
    task = _pick(rows, group="outline task")
    if task:
        out.append(
            _table(["", "measured"], [[r["name"], _cell(r) + f" {r['unit']}"] for r in task])
        )
    return out


def _effects_tables(rows: list[Row]) -> list[str]:
    """What each control does (rows) against what Tabrelay decided (columns)."""
    pairs = _pick(rows, group="effects")
    if not pairs:
        return []
    expected = sorted({r["expected"] for r in pairs}, key=lambda k: (k == "routine", k))
    decided = sorted({r["decided"] for r in pairs}, key=lambda k: (k == "routine", k))
    count = {(r["expected"], r["decided"]): int(r["value"]) for r in pairs}
    lines = [
        [
            e,
            *(str(count.get((e, d), "")) for d in decided),
            str(sum(count.get((e, d), 0) for d in decided)),
        ]
        for e in expected
    ]
    return [
        "### Effects under a site grant: what each control does (rows) and what Tabrelay "
        "decided (columns: the effect its question named, or routine: it ran)\n",
        _table(["does \\ decided", *decided, "controls"], lines),
    ]


def _events_tables(rows: list[Row]) -> list[str]:
    events = _pick(rows, group="events")
    if not events:
        return []
    phases = list(dict.fromkeys(r["phase"] for r in events))
    metrics = list(dict.fromkeys(r["name"].split(" · ", 1)[1] for r in events))
    lines = []
    for metric in metrics:
        cells = [_one(events, phase=p, name=f"events {p} · {metric}") for p in phases]
        unit = next((c["unit"] for c in cells if c), "")
        lines.append([f"{metric} ({unit})" if unit else metric, *(_cell(c) for c in cells)])
    out = ["### Events from the relay into the dashboard's model\n", _table(["", *phases], lines)]
    stalls = _pick(rows, group="stalls")
    if stalls:
        out.append(
            "Where the loop thread was while the heartbeat was over 40 ms late (5 ms samples; "
            "`[Qt]`: inside Qt's C++ event processing, `[gc]`: a garbage collection):\n\n"
            + "".join(f"- {r['phase']}: {r['value']:.0f} ms in `{r['stack']}`\n" for r in stalls)
        )
    return out


def _reliability_table(rows: list[Row]) -> list[str]:
    found = [r for r in _pick(rows, benchmark="reliability") if r.get("group") != "machine"]
    if not found:
        return []
    return [
        "### Reliability suites at full size\n",
        _table(
            ["", "measured"],
            [[r["name"], f"{_value(r['value'], r['unit'])} {r['unit']}".rstrip()] for r in found],
        ),
    ]


def _idle_tables(rows: list[Row]) -> list[str]:
    idle = _pick(rows, group="idle")
    if not idle:
        return []
    apps = list(dict.fromkeys(r["app"] for r in idle))
    labels = {r["app"]: r["name"].split(" · ", 1)[0] for r in idle}
    metrics = list(dict.fromkeys(r["name"].split(" · ", 1)[1] for r in idle))
    lines = []
    for metric in metrics:
        cells = [_one(idle, app=a, name=f"{labels[a]} · {metric}") for a in apps]
        unit = next((c["unit"] for c in cells if c), "")
        lines.append([f"{metric} ({unit})" if unit else metric, *(_cell(c) for c in cells)])
    out = ["### Start-up and idle\n", _table(["", *(labels[a] for a in apps)], lines)]
    baseline = _pick(rows, group="baseline")
    if baseline:
        whats = list(dict.fromkeys(r["what"] for r in baseline))
        out.append("Baselines (a fresh interpreter that imports only this):\n")
        out.append(
            _table(
                ["imports", "RSS MiB", "USS MiB", "import s"],
                [
                    [
                        w,
                        *(
                            _cell(_one(baseline, what=w, name=f"baseline · {w} · {k}"))
                            for k in ("RSS", "USS", "import time")
                        ),
                    ]
                    for w in whats
                ],
            )
        )
    return out
