"""A reader of the app's frames (app → extension), for tests: the app never reads its own, so
this lives here, not in ``tabrelay.protocol``. It applies the limits of ``docs/protocol.md``
(``tabrelay.protocol.constants``), the same the extension's ``parseAppFrame`` applies, and
refuses a frame it cannot read with ``ProtocolViolation`` as the app's parser does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.constants import (
    MAX_CODE_LENGTH,
    MAX_ERROR_LENGTH,
    MAX_ID_LENGTH,
    MAX_METHOD_LENGTH,
    MAX_PROOF_LENGTH,
    MessageType,
)
from tabrelay.protocol.messages import (
    MAX_TAB_ID,
    AppMessage,
    AuthChallenge,
    AuthOk,
    Command,
    ErrorNotice,
    ExtensionMessage,
    Ping,
    Pong,
    RelayPort,
    by_type,
    decode_json,
    parse_extension_message,
)


def parse_app_message(text: str) -> AppMessage:
    """Parse one frame the app sends, as an extension reads it.

    Raises:
        ProtocolViolation: not JSON, not an object, an unknown type, or a field of the wrong
            type or size.
    """
    obj = _object(decode_json(text), "message")
    if "id" in obj:
        return _command(obj)
    return by_type(obj, _PARSERS)


def parse_frame(text: str) -> AppMessage | ExtensionMessage:
    """Parse a frame of either direction, told apart by its keys (the protocol document's
    examples): ``id`` with ``method`` is a command, ``id`` otherwise an answer, else its type.

    Raises:
        ProtocolViolation: as ``parse_app_message``.
    """
    obj = _object(decode_json(text), "message")
    if ("id" in obj and "method" in obj) or obj.get("type") in _PARSERS:
        return parse_app_message(text)
    return parse_extension_message(text)


def _command(obj: dict[str, Any]) -> Command:
    raw_id = obj["id"]
    if not isinstance(raw_id, str) or not 0 < len(raw_id) <= MAX_ID_LENGTH:
        raise ProtocolViolation("bad_id", "command 'id' must be a non-empty string of ≤ 64 chars")
    params = obj.get("params", {})
    return Command(
        id=raw_id,
        method=_text(obj, "method", MAX_METHOD_LENGTH),
        params=_object({} if params is None else params, "params"),
    )


def _object(value: object, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolViolation("not_object", f"{name} must be a JSON object")
    return value


def _text(obj: dict[str, Any], name: str, limit: int) -> str:
    value = obj.get(name)
    if not isinstance(value, str):
        raise ProtocolViolation("bad_field", f"'{name}' must be a string")
    if len(value) > limit:
        raise ProtocolViolation("bad_field", f"'{name}' is longer than {limit} characters")
    return value


def _integer(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_TAB_ID:
        raise ProtocolViolation("bad_field", f"'{name}' must be an integer")
    return value


_PARSERS: dict[str, Callable[[dict[str, Any]], AppMessage]] = {
    MessageType.AUTH_CHALLENGE: lambda obj: AuthChallenge(
        _integer(obj, "protocol"), _text(obj, "nonce", MAX_PROOF_LENGTH)
    ),
    MessageType.AUTH_OK: lambda obj: AuthOk(_text(obj, "proof", MAX_PROOF_LENGTH)),
    MessageType.ERROR: lambda obj: ErrorNotice(
        _text(obj, "code", MAX_CODE_LENGTH), _text(obj, "message", MAX_ERROR_LENGTH)
    ),
    MessageType.RELAY_PORT: lambda obj: RelayPort(_integer(obj, "port")),
    MessageType.PING: lambda _obj: Ping(),
    MessageType.PONG: lambda _obj: Pong(),
}
