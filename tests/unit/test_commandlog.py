"""The command log in a real SQLite file: rows, search, retention, export, listeners."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
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


def test_submitted_rows_are_all_stored_in_order_by_the_time_the_log_closes(
    tmp_path: Path,
) -> None:
    """Tool calls hand their rows over and answer at once; closing the log (the app stopping)
    stores every row handed over before, in the order they came."""
    log = CommandLog(tmp_path / "c.db")
    for n in range(500):
        log.submit(entry(n))
    log.close()
    again = CommandLog(tmp_path / "c.db")
    rows = again.recent(1000)[::-1]
    assert [json.loads(r.arguments)["ref"] for r in rows] == [f"e{n}" for n in range(500)]
    assert [r.id for r in rows] == sorted(r.id for r in rows)


def test_a_reader_sees_every_row_submitted_before_it_reads(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    heard: list[int | None] = []
    log.add_listener(lambda stored: heard.append(len(log.recent(1000))))  # a reading listener
    for n in range(50):
        log.submit(entry(n))
        assert log.count() == n + 1
    assert heard == list(range(1, 51)), "a listener reading on the writer thread does not wait"
    log.close()


def test_a_row_that_cannot_be_stored_loses_no_other_row(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    log.submit(entry(1))
    log.submit(entry(2, tool=None))  # NOT NULL: this one row fails
    log.submit(entry(3))
    assert log.flush(timeout=5)
    assert [r.tool for r in log.recent(10)] == ["browser_click", "browser_click"]
    log.close()


def test_a_closed_log_refuses_a_row_instead_of_losing_it(tmp_path: Path) -> None:
    log = CommandLog(tmp_path / "c.db")
    log.close()
    with pytest.raises(RuntimeError, match="closed"):
        log.submit(entry(1))


def test_a_stuck_writer_keeps_no_reader_nor_the_quit_waiting_past_its_bound(
    tmp_path: Path,
) -> None:
    """A hung disk holds the writer: the reads answer with what is stored and closing returns,
    each within its bound; the rows are stored, and the file closed, once the writer moves."""
    log = CommandLog(tmp_path / "c.db", flush_timeout=0.2, close_timeout=0.2)
    moving = threading.Event()
    log.add_listener(lambda stored: moving.wait(10))  # the writer is stuck after its first row
    log.submit(entry(1))
    log.submit(entry(2))
    started = time.monotonic()
    assert not log.flush()
    assert log.count() == 1
    assert not log.close(), "closing says the writer was still storing rows"
    assert time.monotonic() - started < 3
    moving.set()
    again = CommandLog(tmp_path / "c.db")
    deadline = time.monotonic() + 5
    while again.count() < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert again.count() == 2, "the rows submitted before the close are stored"
    again.close()
