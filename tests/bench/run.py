"""``make bench``: run the benchmarks, print a table, write JSON and docs/benchmarks.md.

Each benchmark is a coroutine taking a ``Context`` and returning rows ``{"name", "value",
"unit", "target"?, "met"?}`` (plus fields the report groups by). Benchmarks measure; they do not
assert. Run alone on a quiet machine: numbers double when another Chromium runs
(ENVIRONMENT.md). ``--quick`` takes fewer samples (a smoke run; not for docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # tests/bench and tests/ (for `support`, `e2e`)
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")

from bench_effects import effects_benchmarks  # noqa: E402
from bench_events import events_benchmarks  # noqa: E402
from bench_hidden import hidden_benchmarks  # noqa: E402
from bench_idle import idle_benchmarks  # noqa: E402
from bench_latency import latency_benchmarks  # noqa: E402
from bench_outline_corpus import outline_corpus_benchmarks  # noqa: E402
from bench_pdf import pdf_benchmarks  # noqa: E402
from bench_plans import plans_benchmarks  # noqa: E402
from bench_reach import downloads_benchmarks, frames_benchmarks, reach_benchmarks  # noqa: E402
from bench_relay import relay_benchmarks  # noqa: E402
from bench_reliability import reliability_benchmarks  # noqa: E402
from bench_snapshot import snapshot_benchmarks  # noqa: E402
from bench_tools_list import tools_list_benchmarks  # noqa: E402
from report import DOCS, machine, print_table, write_docs  # noqa: E402
from stats import Row  # noqa: E402

RESULTS = HERE / "results"


@dataclass(frozen=True)
class Context:
    home: Path  # a scratch directory for this benchmark (app homes, profiles)
    quick: bool
    log_dir: Path  # logs of the processes a benchmark starts (peers, apps)


Benchmark = Callable[[Context], Awaitable[list[Row]]]

BENCHMARKS: dict[str, Benchmark] = {
    "relay": relay_benchmarks,
    "latency": latency_benchmarks,
    "snapshot": snapshot_benchmarks,
    "outline_corpus": outline_corpus_benchmarks,
    "effects": effects_benchmarks,
    "plans": plans_benchmarks,
    "hidden": hidden_benchmarks,
    "reach": reach_benchmarks,
    "frames": frames_benchmarks,
    "downloads": downloads_benchmarks,
    "pdf": pdf_benchmarks,
    "tools_list": tools_list_benchmarks,
    "events": events_benchmarks,
    "idle": idle_benchmarks,
    "reliability": reliability_benchmarks,
}


async def run(selected: list[str], *, quick: bool) -> tuple[list[Row], dict[str, float]]:
    rows: list[Row] = []
    durations: dict[str, float] = {}
    log_dir = RESULTS / "logs"
    shutil.rmtree(log_dir, ignore_errors=True)  # the previous run's app and peer logs
    log_dir.mkdir(parents=True)
    for name in selected:
        with tempfile.TemporaryDirectory(prefix=f"tabrelay-bench-{name}-") as tmp:
            os.environ["TABRELAY_HOME"] = tmp
            started = time.perf_counter()
            try:
                found = await BENCHMARKS[name](Context(Path(tmp), quick, log_dir))
            # One benchmark failing (no Chromium, a port taken) must not lose the others' rows.
            except Exception as exc:
                traceback.print_exc()
                found = [{"name": f"{name} failed: {exc!r}", "value": 0, "unit": "",
                          "group": "errors", "failed": True}]  # fmt: skip
            rows += [{"benchmark": name, **r} for r in found]
            durations[name] = time.perf_counter() - started
            load = os.getloadavg()[0]
            rows.append(
                {"benchmark": name, "name": f"{name}: load average (1 min) at its end",
                 "value": load, "unit": "", "group": "machine"}
            )  # fmt: skip
            print(
                f"# {name}: {durations[name]:.1f} s, load {load:.2f}", file=sys.stderr, flush=True
            )
    return rows, durations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("only", nargs="*", help=f"some of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    parser.add_argument(
        "--no-docs", action="store_true", help=f"do not rewrite {DOCS.relative_to(HERE.parents[1])}"
    )
    args = parser.parse_args()
    unknown = set(args.only) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    selected = args.only or list(BENCHMARKS)
    logging.basicConfig(level=logging.WARNING)
    started = time.perf_counter()
    rows, durations = asyncio.run(run(selected, quick=args.quick))
    print_table(rows)
    RESULTS.mkdir(exist_ok=True)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "quick": args.quick,
        "benchmarks": selected,
        "seconds": {**durations, "total": time.perf_counter() - started},
        "machine": machine(),
        "rows": rows,
    }
    latest = RESULTS / "latest.json"
    latest.write_text(json.dumps(record, indent=2, ensure_ascii=False))
    print(f"results written to {latest}")
    failed = any(r.get("failed") for r in rows)
    if not args.no_docs and not args.quick and set(selected) == set(BENCHMARKS) and not failed:
        write_docs(record)
        print(f"tables written to {DOCS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
