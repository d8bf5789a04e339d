"""Logging setup and the redaction that keeps secrets out of every log (DESIGN §4.4, §4.13).

Redaction happens when a record is created (a log record factory), so every handler sees the
redacted text: our rotating file, stderr, pytest's capture, uvicorn's and websockets' loggers.
It replaces known secrets verbatim and anything shaped like a credential (``?token=``,
``Bearer …``, ``"token": "…"``). It does not decide what gets logged; callers log metadata.
The log file and its rollovers are its owner's alone (0600, in a 0700 folder).
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import re
import sys
import threading
from pathlib import Path
from typing import Any

from tabrelay.config.files import make_private_dir, private_opener

REDACTED = "[redacted]"
PAYLOAD_LOGGERS = ("mcp", "sse_starlette", "uvicorn", "httpx", "httpcore", "httpx2", "httpcore2")
_MIN_SECRET_LENGTH = 8

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"([?&](?:token|access_token|key|secret)=)[^&\s\"'#]+", re.I), r"\1" + REDACTED),
    (re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", re.I), r"\1" + REDACTED),
    (
        re.compile(r"(\"(?:token|proof|secret)\"\s*:\s*\")[^\"]*(\")", re.I),
        r"\1" + REDACTED + r"\2",
    ),
    # pydantic quotes what it could not parse (the MCP SDK logs a malformed request with its
    # error): the body of a tools/call, typed text included.
    (re.compile(r"(input_value=).*?(, input_type=)", re.S), r"\1" + REDACTED + r"\2"),
)


class Redactor:
    """Knows the current secrets and scrubs them, and anything credential-shaped, from text."""

    def __init__(self) -> None:
        self._secrets: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def add_secret(self, secret: str) -> None:
        if len(secret) >= _MIN_SECRET_LENGTH:
            with self._lock:
                self._secrets = self._secrets | {secret}

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def install_redaction(redactor: Redactor) -> None:
    """Make every log record created from now on carry redacted text. Idempotent."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "tabrelay_redactor", None) is redactor:
        return
    base = getattr(previous, "tabrelay_base", previous)

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        try:
            message = record.getMessage()
        # A caller's bad format string must not turn into a crash inside logging.
        except Exception:  # noqa: BLE001
            message = f"{record.msg!r} (unformattable arguments)"
        record.msg, record.args = redactor.redact(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redactor.redact(logging.Formatter().formatException(record.exc_info))
        return record

    factory.tabrelay_redactor = redactor  # type: ignore[attr-defined]
    factory.tabrelay_base = base  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file that only its owner may read, whatever the umask.

    Each file is opened through ``private_opener`` (0600, an existing one tightened); rollovers
    rename the file, so ``tabrelay.log.1`` … keep its mode.
    """

    def _open(self) -> io.TextIOWrapper:
        # FileHandler._open, with the opener; called on start, after each rollover and on reopen.
        stream = open(  # noqa: SIM115 - the handler owns the stream and closes it
            self.baseFilename,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )
        assert isinstance(stream, io.TextIOWrapper)  # "a": a text mode
        return stream


def setup_logging(
    redactor: Redactor, *, log_file: Path | None, level: int = logging.INFO, stderr: bool = True
) -> None:
    """Route the root logger to a rotating file and (optionally) stderr, with redaction."""
    install_redaction(redactor)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "tabrelay", False)]:
        root.removeHandler(handler)
        handler.close()
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    if log_file is not None:
        make_private_dir(log_file.parent)
        handlers.append(
            PrivateRotatingFileHandler(
                log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"
            )
        )
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.tabrelay = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)
    # websockets logs every handshake at INFO and frame contents at DEBUG; frames carry page
    # content, so they never reach the log (THREATS S4). Handshakes only when debugging.
    logging.getLogger("websockets").setLevel(
        logging.INFO if level <= logging.DEBUG else logging.WARNING
    )
    # These log whole messages at DEBUG (the MCP SDK's SSE transport logs every request body,
    # typed passwords included; the HTTP libraries their traffic): never below INFO.
    for name in PAYLOAD_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
