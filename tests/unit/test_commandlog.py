"""The command log in a real SQLite file: rows, search, retention, export, listeners."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
from pathlib import Path

import pytest

from tabrelay.store.commandlog import CommandEntry, CommandLog


def entry(n: int, **overrides: object) -> CommandEntry:
    values: dict[str, object] = {
        "time": 1_000_000.0 + n,
        "client": "cursor",
        "tool": "browser_click",
        "arguments": json.dumps({"ref": f"e{n}"}),
        "decision": "approved once by the person",
        "status": "ok",
        "duration_ms": 12.5,
        "result_bytes": 120,
        "browser": "b1",
        "tab_id": 4,
        "origin": "https://shop.example",
    }
    values.update(overrides)
    return CommandEntry(**values)  # type: ignore[arg-type]


def test_rows_survive_reopening_and_come_back_newest_first(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "commands.sqlite3")
    ids = [log.record(entry(n)).id for n in range(3)]
    log.close()
    again = CommandLog(tmp_path / "commands.sqlite3")
    rows = again.recent(10)
    assert [r.id for r in rows] == ids[::-1]
    assert rows[0].arguments == '{"ref": "e2"}' and rows[0].origin == "https://shop.example"
    with sqlite3.connect(tmp_path / "commands.sqlite3") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_search_matches_any_text_column(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    log.record(entry(1, tool="browser_navigate", origin="https://news.example"))
    log.record(entry(2, status="denied", decision="denied by the person", error="denied"))
    log.record(entry(3))
    assert [r.tool for r in log.recent(search="news")] == ["browser_navigate"]
    assert [r.status for r in log.recent(search="denied by")] == ["denied"]
    assert len(log.recent(search="cursor")) == 3


def test_retention_by_count_and_age(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    now = time.time()
    for n in range(10):
        log.record(entry(n, time=now - (10 - n) * 86400))  # one per day, the oldest 10 days ago
    assert log.prune(max_rows=100, max_age_days=5.5, now=now) == 5
    assert log.count() == 5
    assert log.prune(max_rows=2, max_age_days=100, now=now) == 3
    assert [r.arguments for r in log.recent()] == ['{"ref": "e9"}', '{"ref": "e8"}']


def test_export_as_jsonl_and_csv(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    log.record(entry(1, arguments='{"text": "a,b \\"quoted\\"\\nline"}'))
    log.record(entry(2))
    lines = "".join(log.export("jsonl")).splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1, 2]
    rows = list(csv.DictReader(io.StringIO("".join(log.export("csv")))))
    assert [r["id"] for r in rows] == ["1", "2"]
    assert json.loads(rows[0]["arguments"]) == {"text": 'a,b "quoted"\nline'}
    with pytest.raises(ValueError, match="unknown export format 'xml'"):
        list(log.export("xml"))


def test_listeners_hear_each_row_and_a_failing_one_loses_nothing(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    heard: list[int | None] = []
    log.add_listener(lambda e: heard.append(e.id))
    log.add_listener(lambda e: 1 / 0)  # type: ignore[func-returns-value]
    stored = log.record(entry(1))
    assert heard == [stored.id] and log.count() == 1
    assert [e.id for e in log.since(0)] == [stored.id]
