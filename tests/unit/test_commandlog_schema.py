"""The command log's schema is versioned: a file from before "what the call touches" gains the
column, keeps its rows, and two openers at once migrate it once (store/commandlog.py)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tabrelay.store.commandlog import SCHEMA_VERSION, CommandEntry, CommandLog

# The first release's table, as it was created.
VERSION_0 = """
CREATE TABLE commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, client TEXT NOT NULL,
    tool TEXT NOT NULL, browser TEXT, tab_id INTEGER, origin TEXT, arguments TEXT NOT NULL,
    decision TEXT NOT NULL, status TEXT NOT NULL, error TEXT, duration_ms REAL NOT NULL,
    result_bytes INTEGER NOT NULL
);
CREATE INDEX commands_time ON commands (time);
INSERT INTO commands (time, client, tool, arguments, decision, status, duration_ms, result_bytes)
VALUES (1000.0, 'cursor', 'browser_click', '{"ref": "e2"}', 'approved', 'ok', 3.0, 10);
"""


def entry(**changes: object) -> CommandEntry:
    values: dict[str, object] = {
        "time": 2000.0,
        "client": "cursor",
        "tool": "browser_click",
        "arguments": '{"ref": "e5"}',
        "decision": "approved once by the person",
        "status": "ok",
        "duration_ms": 4.0,
        "targets": 'e5: button "Buy now", in the main frame',
    }
    values.update(changes)
    return CommandEntry(**values)  # type: ignore[arg-type]


def version(path: Path) -> int:
    with sqlite3.connect(path) as raw:
        return int(raw.execute("PRAGMA user_version").fetchone()[0])


def test_an_older_log_gains_the_targets_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "commands.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.executescript(VERSION_0)
    assert version(path) == 0
    log = CommandLog(path)
    recorded = log.record(entry())
    [new] = log.recent(1)
    assert new.targets == 'e5: button "Buy now", in the main frame' and new.id == recorded.id
    [before] = log.since(0)[:1]
    assert (before.arguments, before.targets) == ('{"ref": "e2"}', None)
    assert version(path) == SCHEMA_VERSION
    assert [r.tool for r in log.recent(search="Buy now")] == ["browser_click"]
    log.close()
    CommandLog(path).close()  # opening it again changes nothing
    assert version(path) == SCHEMA_VERSION


def test_a_log_of_the_first_migration_gains_the_effect_column(tmp_path: Path) -> None:
    """Version 1 (with what the call touched) to 2 (and what it was judged to do)."""
    path = tmp_path / "commands.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.executescript(VERSION_0)
        raw.execute("ALTER TABLE commands ADD COLUMN targets TEXT")
        raw.execute("PRAGMA user_version = 1")
    log = CommandLog(path)
    log.record(entry(effect="pay: button “Place order” in a form with card number field"))
    [new, old] = log.recent(2)
    assert new.effect is not None and new.effect.startswith("pay: ") and old.effect is None
    assert [r.tool for r in log.recent(search="card number field")] == ["browser_click"]
    log.close()
    assert version(path) == SCHEMA_VERSION == 2


def test_a_new_log_starts_at_the_current_version(tmp_path: Path) -> None:
    path = tmp_path / "commands.sqlite3"
    CommandLog(path).close()
    assert version(path) == SCHEMA_VERSION


def old_log(tmp_path: Path) -> Path:
    """A log of the first release, with its one row."""
    path = tmp_path / "commands.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.executescript(VERSION_0)
    return path


def test_the_app_and_a_command_opening_an_old_log_at_once_migrate_it_once(
    tmp_path: Path,
) -> None:
    path = old_log(tmp_path)
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            CommandLog(path).close()
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert errors == []
    assert version(path) == SCHEMA_VERSION


def test_opening_an_old_log_another_program_is_writing_waits_for_it(tmp_path: Path) -> None:
    """Switching the file to WAL is answered "locked" at once while another connection writes
    (SQLite does not wait for it): opening waits for the writer instead of failing."""
    path = old_log(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.3, writer.execute, ("COMMIT",))
    timer.start()
    try:
        started = time.monotonic()
        CommandLog(path).close()
        assert time.monotonic() - started >= 0.25
    finally:
        timer.join()
        writer.close()
    assert version(path) == SCHEMA_VERSION


def test_a_log_another_program_keeps_writing_is_a_clear_error_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = old_log(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            CommandLog(path, open_timeout=0.2)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    log = CommandLog(path)  # once the other program is done, it opens and migrates
    assert [(r.tool, r.time) for r in log.recent()] == [("browser_click", 1000.0)]
    log.close()
    assert version(path) == SCHEMA_VERSION
