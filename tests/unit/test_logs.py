"""Redaction: no secret reaches any log handler, whatever the level or the logger."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabrelay.system.logs import Redactor, install_redaction, setup_logging

CANARY = "canary-Zx81fQpL0s9dKw3mNvB7tYhGuJcRe2Ao4iXyWq5EkTf"


@pytest.fixture
def redactor() -> Iterator[Redactor]:
    previous = logging.getLogRecordFactory()
    redactor = Redactor()
    redactor.add_secret(CANARY)
    install_redaction(redactor)
    yield redactor
    logging.setLogRecordFactory(previous)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (f"token {CANARY}", "token [redacted]"),
        (
            "GET /ws/browser-relay?token=abc123&x=1 HTTP/1.1",
            "GET /ws/browser-relay?token=[redacted]&x=1 HTTP/1.1",
        ),
        ("Authorization: Bearer sk-abc.def", "Authorization: Bearer [redacted]"),
        ('{"port": 1, "token": "abc"}', '{"port": 1, "token": "[redacted]"}'),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_secrets_and_credential_shapes_are_redacted(
    redactor: Redactor, caplog: pytest.LogCaptureFixture, message: str, expected: str
) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("websockets.server").debug("%s", message)
    assert caplog.records[-1].getMessage() == expected


def test_exception_text_is_redacted(redactor: Redactor, caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise ValueError(f"bad token {CANARY}")
    except ValueError:
        logging.getLogger("x").exception("failed")
    assert CANARY not in caplog.text and "bad token [redacted]" in caplog.text


def test_secrets_added_later_are_redacted_too(
    redactor: Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    redactor.add_secret("rotated-secret-value-123")
    logging.getLogger("x").warning("now %s", "rotated-secret-value-123")
    assert "rotated-secret-value-123" not in caplog.text


def test_the_log_file_is_written_and_redacted(redactor: Redactor, tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "tabrelay.log"
    root = logging.getLogger()
    level = root.level
    setup_logging(redactor, log_file=log_file, level=logging.DEBUG, stderr=False)
    try:
        logging.getLogger("tabrelay.test").debug("url ?token=%s", CANARY)
        for handler in root.handlers:
            handler.flush()
        text = log_file.read_text()
        assert "url ?token=[redacted]" in text and CANARY not in text
    finally:
        for handler in [h for h in root.handlers if getattr(h, "tabrelay", False)]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


def test_a_bad_format_string_does_not_crash_logging(
    redactor: Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    logging.getLogger("x").warning("%s %s", "only one")
    assert "unformattable" in caplog.text


def test_what_pydantic_quotes_of_a_malformed_message_is_redacted(
    redactor: Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    """The MCP SDK logs a request it cannot parse with pydantic's error, which quotes the body
    (a tools/call's typed text included)."""
    from pydantic import BaseModel, ValidationError

    class Message(BaseModel):
        jsonrpc: str

    body = '{"method": "tools/call", "params": {"arguments": {"text": "' + CANARY + '"}}'
    try:
        Message.model_validate_json(body)
    except ValidationError:
        logging.getLogger("mcp.server.sse").exception("Failed to parse message")
    assert "Failed to parse message" in caplog.text
    assert CANARY not in caplog.text and "input_value=[redacted]" in caplog.text
