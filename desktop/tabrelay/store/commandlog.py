"""The command log: every tool call, allowed or not, in SQLite (WAL) — metadata, never secrets.

Rows hold time, client, tool, browser and tab, the tab's origin, a summary of the arguments
(already redacted by the caller), what the call touches (the elements its arguments name and
where a navigation goes, described by the caller), how the call was approved or denied, status,
duration and result size. The schema's version is SQLite's ``user_version``; opening an older
file adds what it lacks. Retention prunes by count and age. One connection guarded by a lock.
A tool call's row is ``submit``-ted: the log's one writer thread stores the rows in the order
they came, after the call has its answer; ``flush`` and ``close`` wait (bounded) until every
row submitted before is stored, so none is lost on the way out. They and the reads block the
calling thread: never call them on the event loop. Listeners hear about each new row (the
dashboard's live view), on the writer thread.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

from tabrelay.config.files import make_private_dir, make_private_file
from tabrelay.listeners import Listeners

logger = logging.getLogger(__name__)

Status = Literal["ok", "error", "denied", "cancelled", "timeout"]
SCHEMA = """
CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    client TEXT NOT NULL,
    tool TEXT NOT NULL,
    browser TEXT,
    tab_id INTEGER,
    origin TEXT,
    arguments TEXT NOT NULL,
    decision TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    duration_ms REAL NOT NULL,
    result_bytes INTEGER NOT NULL,
    targets TEXT,
    effect TEXT
);
CREATE INDEX IF NOT EXISTS commands_time ON commands (time);
"""
SCHEMA_VERSION = 2
# What each version adds to the one before it (a file made by the first release is version 0).
MIGRATIONS = {
    1: "ALTER TABLE commands ADD COLUMN targets TEXT",
    2: "ALTER TABLE commands ADD COLUMN effect TEXT",
}
EXPORT_FORMATS = ("jsonl", "csv")
# How long a read waits for the rows submitted before it, and closing for the last rows: a
# store takes milliseconds; a disk or lock that hangs must not hang a reader or a quit with it.
FLUSH_TIMEOUT = 5.0
CLOSE_TIMEOUT = 5.0
# How long opening waits for another program writing the file (`tabrelay log` and the app).
OPEN_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class CommandEntry:
    time: float
    client: str
    tool: str
    arguments: str
    decision: str
    status: Status
    duration_ms: float
    result_bytes: int = 0
    browser: str | None = None
    tab_id: int | None = None
    origin: str | None = None
    error: str | None = None
    targets: str | None = None  # "e12: button \"Buy\", in the main frame; …"
    effect: str | None = None  # "pay: button “Place order” in a form with card number field"
    id: int | None = None


COLUMNS = [f.name for f in fields(CommandEntry) if f.name != "id"]


class CommandLog:
    def __init__(
        self,
        path: Path,
        *,
        flush_timeout: float = FLUSH_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
        open_timeout: float = OPEN_TIMEOUT,
    ) -> None:
        make_private_dir(path.parent)
        # SQLite creates a database with the umask's mode, and its -wal, -shm and -journal with
        # the database's (os_unix.c, findCreateFileMode): a 0600 database keeps all private.
        make_private_file(path)
        for companion in ("-wal", "-shm", "-journal"):
            make_private_file(path.with_name(path.name + companion), create=False)
        self.path = path
        self.flush_timeout = flush_timeout
        self.close_timeout = close_timeout
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            path, timeout=open_timeout, check_same_thread=False, isolation_level=None
        )
        self._db.row_factory = sqlite3.Row
        try:
            self._use_wal(open_timeout)
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across app crashes
            self._migrate()
        except BaseException:
            self._db.close()  # an open file nobody can close is left behind otherwise
            raise
        self._listeners: Listeners[[CommandEntry]] = Listeners("the command log")
        self._queue: queue.SimpleQueue[CommandEntry | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None  # started by the first submit
        self._writer_lock = threading.Lock()
        self._submitted = 0
        self._written = 0
        self._progress = threading.Condition()
        self._closed = False

    def _use_wal(self, timeout: float) -> None:
        """Switch the file to WAL, waiting for another connection about ``timeout`` seconds
        (at most twice that: one try may itself wait the connection's busy timeout).

        The switch needs the file to itself, and SQLite answers "locked" at once instead of
        waiting while another connection is writing (an older log the app and a `tabrelay log`
        command open together): so it is tried again, with short pauses.
        """
        deadline = time.monotonic() + timeout
        pause = 0.005
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # BUSY_RECOVERY too
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _migrate(self) -> None:
        """Create the table, or bring an older one up to ``SCHEMA_VERSION``, in one write
        transaction: the app and a `tabrelay log` command may open the file at once."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            exists = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'commands'"
            ).fetchone()
            if not exists:
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
            elif version < SCHEMA_VERSION:
                for step in range(version + 1, SCHEMA_VERSION + 1):
                    self._db.execute(MIGRATIONS[step])
            if version < SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> bool:
        """Store every row submitted so far, then close the file.

        Blocks the calling thread (run it off the event loop) until the writer is done, at most
        ``close_timeout`` seconds; ``False`` if it was still storing rows then: it closes the
        file itself once they are stored, and the app's log says so.
        """
        with self._writer_lock:
            if self._closed:
                return True
            writer, self._writer = self._writer, None
            self._closed = True
        if writer is None:
            self._close_file()
            return True
        self._queue.put(None)  # after every row submitted before: the writer stops, then closes
        writer.join(self.close_timeout)
        if writer.is_alive():
            logger.warning(
                "the command log is still storing rows after %g s; it closes when they are in",
                self.close_timeout,
            )
            return False
        return True

    def _close_file(self) -> None:
        with self._lock:
            self._db.close()

    def submit(self, entry: CommandEntry) -> None:
        """Queue ``entry`` for the writer thread and return at once (no I/O on the caller's
        thread). Rows are stored in the order submitted.

        Raises:
            RuntimeError: the log is closed (the row would be lost).
        """
        with self._writer_lock:
            if self._closed:
                raise RuntimeError("the command log is closed; the row was not stored")
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_rows, name="tabrelay-command-log", daemon=True
                )
                self._writer.start()
            self._submitted += 1
            self._queue.put(entry)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every row submitted so far is stored; ``False`` if ``timeout`` (default
        ``flush_timeout``) seconds passed first.

        Blocks the calling thread (never call it on the event loop). The reads below flush
        first, so a reader sees every call that has been answered, or, when the writer is stuck
        (a hung disk), what is stored by then.
        """
        with self._writer_lock:
            wanted = self._submitted
            if threading.current_thread() is self._writer:  # a listener reading: it is stored
                return True
        with self._progress:
            return self._progress.wait_for(
                lambda: self._written >= wanted,
                self.flush_timeout if timeout is None else timeout,
            )

    def _write_rows(self) -> None:
        while (entry := self._queue.get()) is not None:
            try:
                self.record(entry)
            # The log must never stop for one row it cannot store (a full disk, a locked file);
            # the call it describes has already been answered.
            except Exception:
                logger.exception("could not write the command log row for %s", entry.tool)
            finally:
                with self._progress:
                    self._written += 1
                    self._progress.notify_all()
        self._close_file()  # ``close`` asked for it: every row before it is stored

    def add_listener(self, listener: Callable[[CommandEntry], None]) -> Callable[[], None]:
        """Tell ``listener`` of each row stored from now on, on the writer thread (a failing
        one is logged and loses nothing); returns the way to stop."""
        return self._listeners.add(listener)

    def record(self, entry: CommandEntry) -> CommandEntry:
        """Store one row (committed when this returns) and tell the listeners."""
        values = [getattr(entry, c) for c in COLUMNS]
        with self._lock:
            cursor = self._db.execute(
                f"INSERT INTO commands ({', '.join(COLUMNS)}) "  # noqa: S608 - fixed column names
                f"VALUES ({', '.join('?' * len(COLUMNS))})",
                values,
            )
        stored = CommandEntry(**{**asdict(entry), "id": cursor.lastrowid})
        self._listeners.tell(stored)
        return stored

    def recent(self, limit: int = 100, *, search: str | None = None) -> list[CommandEntry]:
        """The newest rows first; ``search`` matches client, tool, origin, arguments, what
        the call touches, error, decision and effect. Blocks (``flush``, then a query): not on the
        event loop."""
        self.flush()
        sql = "SELECT * FROM commands"
        params: list[Any] = []
        if search:
            like = f"%{search}%"
            sql += (
                " WHERE client LIKE ? OR tool LIKE ? OR origin LIKE ? OR arguments LIKE ? "
                "OR targets LIKE ? OR error LIKE ? OR decision LIKE ? OR effect LIKE ?"
            )
            params += [like] * 8
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [_entry(row) for row in rows]

    def since(self, after_id: int) -> list[CommandEntry]:
        """The rows after ``after_id``, oldest first. Blocks (``flush``): not on the event loop."""
        self.flush()
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM commands WHERE id > ? ORDER BY id", (after_id,)
            ).fetchall()
        return [_entry(row) for row in rows]

    def count(self) -> int:
        """How many rows are stored. Blocks (``flush``): not on the event loop."""
        self.flush()
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM commands").fetchone()[0])

    def prune(self, *, max_rows: int, max_age_days: float, now: float | None = None) -> int:
        """Drop rows beyond the newest ``max_rows`` or older than ``max_age_days``."""
        cutoff = (time.time() if now is None else now) - max_age_days * 86400
        with self._lock:
            before = self._db.total_changes
            self._db.execute("DELETE FROM commands WHERE time < ?", (cutoff,))
            self._db.execute(
                "DELETE FROM commands WHERE id <= "
                "(SELECT id FROM commands ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (max_rows,),
            )
            return self._db.total_changes - before

    def export(self, fmt: str) -> Iterator[str]:
        """All rows, oldest first, as JSON lines or CSV text chunks. Blocks (``flush``, then a
        query): not on the event loop.

        Raises:
            ValueError: an unknown format.
        """
        if fmt not in EXPORT_FORMATS:
            raise ValueError(
                f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}"
            )
        self.flush()
        with self._lock:
            rows = [_entry(r) for r in self._db.execute("SELECT * FROM commands ORDER BY id")]
        if fmt == "jsonl":
            for entry in rows:
                yield json.dumps(asdict(entry), ensure_ascii=False) + "\n"
            return
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["id", *COLUMNS])
        for entry in rows:
            writer.writerow([entry.id, *(getattr(entry, c) for c in COLUMNS)])
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        yield buffer.getvalue()


def _entry(row: sqlite3.Row) -> CommandEntry:
    return CommandEntry(**{key: row[key] for key in row.keys()})  # noqa: SIM118 - sqlite3.Row
