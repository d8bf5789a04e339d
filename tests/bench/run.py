"""``make bench``: run the benchmarks, print a table, write JSON to tests/bench/results/.

Each benchmark is a coroutine returning rows ``{"name", "value", "unit", "target"?, "met"?}``.
Benchmarks measure; they do not assert. Run alone on a quiet machine: numbers double when
another Chromium runs (ENVIRONMENT.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # tests/bench and tests/ (for `support`)
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")

from bench_relay import relay_benchmarks  # noqa: E402

Row = dict[str, Any]
Benchmark = Callable[[Path], Awaitable[list[Row]]]

BENCHMARKS: dict[str, Benchmark] = {"relay": relay_benchmarks}


def print_table(rows: list[Row]) -> None:
    width = max(len(r["name"]) for r in rows)
    print(f"{'benchmark'.ljust(width)}  {'value':>12}  unit      target")
    for row in rows:
        target = row.get("target", "")
        verdict = "" if "met" not in row else ("  met" if row["met"] else "  NOT MET")
        value = f"{row['value']:>12.3f}"
        print(f"{row['name'].ljust(width)}  {value}  {row['unit']:<8}  {target}{verdict}")


async def run(selected: list[str]) -> list[Row]:
    rows: list[Row] = []
    for name in selected:
        with tempfile.TemporaryDirectory(prefix=f"tabrelay-bench-{name}-") as tmp:
            os.environ["TABRELAY_HOME"] = tmp
            started = time.perf_counter()
            rows += await BENCHMARKS[name](Path(tmp))
            print(f"# {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("only", nargs="*", help=f"some of: {', '.join(BENCHMARKS)}")
    args = parser.parse_args()
    unknown = set(args.only) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    selected = args.only or list(BENCHMARKS)
    rows = asyncio.run(run(selected))
    print_table(rows)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "rows": rows,
    }
    (results / "latest.json").write_text(json.dumps(record, indent=2))
    print(f"results written to {results / 'latest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
