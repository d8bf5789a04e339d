"""Wire messages of the relay (DESIGN §3), both directions, as types with strict parsing.

Every frame type is a frozen dataclass with ``to_wire()`` (the JSON object it is on the wire);
``docs/protocol.md`` shows one example of each, and a test parses them back. The app parses
what an extension sends with ``parse_extension_message``, which raises ``ProtocolViolation``
naming what was wrong (never echoing the payload). The app never reads its own frames, so no
parser of them lives here (the tests' reader is ``tests/support/app_frames.py``; the
extension's is ``parseAppFrame``); the limits both apply are ``constants``'. Unknown extra
fields are ignored so newer peers keep working. No I/O, no asyncio.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.constants import (
    MAX_CODE_LENGTH,
    MAX_ERROR_LENGTH,
    MAX_HELD_URL_LENGTH,
    MAX_ID_LENGTH,
    MAX_METHOD_LENGTH,
    MAX_NESTING_DEPTH,
    MAX_PROOF_LENGTH,
    TAB_EVENT_KINDS,
    MessageType,
)

JsonObject = dict[str, Any]

MAX_TAB_ID = 2**53 - 1  # JavaScript's safe integer range
MAX_LIST_LENGTH = 10_000
MAX_TEXT_LENGTH = 1024
_M = TypeVar("_M")


# --- app → extension ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    """A relay command (DESIGN §3's method table); the extension answers its ``id`` once."""

    id: str
    method: str
    params: JsonObject = field(default_factory=dict)

    def to_wire(self) -> JsonObject:
        return {"id": self.id, "method": self.method, "params": self.params}


@dataclass(frozen=True, slots=True)
class AuthChallenge:
    """The app's first frame of the Tabrelay protocol: its nonce (DESIGN §4.4)."""

    protocol: int
    nonce: str

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.AUTH_CHALLENGE, "protocol": self.protocol, "nonce": self.nonce}


@dataclass(frozen=True, slots=True)
class AuthOk:
    """The app's proof that it holds the credential the extension proved."""

    proof: str

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.AUTH_OK, "proof": self.proof}


@dataclass(frozen=True, slots=True)
class ErrorNotice:
    """A frame of the extension was rejected: the ``ProtocolViolation`` code and its message."""

    code: str
    message: str

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.ERROR, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class RelayPort:
    """The port the app listens on from its next start (sent right before it quits)."""

    port: int

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.RELAY_PORT, "port": self.port}


# --- extension → app ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommandResult:
    id: str
    result: Any
    # The tab as the extension read it once the command ended: a ``cdp.send`` with ``tab``.
    tab: TabInfo | None = None

    def to_wire(self) -> JsonObject:
        wire: JsonObject = {"id": self.id, "result": self.result}
        if self.tab is not None:
            wire["tab"] = _sent_tab(self.tab)
        return wire


@dataclass(frozen=True, slots=True)
class CommandError:
    id: str
    error: str
    code: str | None = None  # one of ``ErrorCode`` when the extension knows why

    def to_wire(self) -> JsonObject:
        wire: JsonObject = {"id": self.id, "error": self.error}
        if self.code is not None:
            wire["code"] = self.code
        return wire


@dataclass(frozen=True, slots=True)
class AuthResponse:
    nonce: str
    proof: str

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.AUTH_RESPONSE, "nonce": self.nonce, "proof": self.proof}


@dataclass(frozen=True, slots=True)
class Hello:
    protocol: int
    extension: str
    browser: str
    capabilities: tuple[str, ...]
    instance: str | None = None

    def to_wire(self) -> JsonObject:
        wire: JsonObject = {
            "type": MessageType.HELLO,
            "protocol": self.protocol,
            "extension": self.extension,
            "browser": self.browser,
            "capabilities": list(self.capabilities),
        }
        if self.instance is not None:
            wire["instance"] = self.instance
        return wire


@dataclass(frozen=True, slots=True)
class Status:
    attached_tabs: tuple[int, ...]

    def to_wire(self) -> JsonObject:
        return {"type": MessageType.STATUS, "attachedTabs": list(self.attached_tabs)}


@dataclass(frozen=True, slots=True)
class CdpEvent:
    tab_id: int
    method: str
    params: JsonObject
    session_id: str | None = None

    def to_wire(self) -> JsonObject:
        wire: JsonObject = {
            "type": MessageType.CDP_EVENT,
            "tabId": self.tab_id,
            "method": self.method,
            "params": self.params,
        }
        if self.session_id is not None:
            wire["sessionId"] = self.session_id
        return wire


@dataclass(frozen=True, slots=True)
class TabEvent:
    event: str
    tab: TabInfo

    def to_wire(self) -> JsonObject:
        """A removed tab is its id only; the others carry the whole tab (``_sent_tab``)."""
        if self.event == "removed":
            tab: JsonObject = {"id": self.tab.id}
        else:
            tab = _sent_tab(self.tab)
        return {"type": MessageType.TAB_EVENT, "event": self.event, "tab": tab}


@dataclass(frozen=True, slots=True)
class HeldDownload:
    """A download the extension holds for the app's word (``downloads.decide``): what Chrome
    says of it as it begins. ``total_bytes`` is -1 when the server did not say."""

    id: int
    url: str
    final_url: str
    filename: str  # the name Chrome chose, without a folder
    mime: str
    total_bytes: int
    danger: str  # Chrome's word: "safe", "file", "url", "content", "uncommon", …

    def to_wire(self) -> JsonObject:
        return {
            "type": MessageType.DOWNLOAD,
            "download": {
                "id": self.id,
                "url": self.url,
                "finalUrl": self.final_url,
                "filename": self.filename,
                "mime": self.mime,
                "totalBytes": self.total_bytes,
                "danger": self.danger,
            },
        }


def _sent_tab(tab: TabInfo) -> JsonObject:
    """A tab as the extension writes it outside ``tabs.list``: ``focused`` only when true (it
    is a ``tabs.list`` property; events and carried tabs leave it out)."""
    wire = tab.to_wire()
    if not tab.focused:
        del wire["focused"]
    return wire


# --- either direction -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ping:
    def to_wire(self) -> JsonObject:
        return {"type": MessageType.PING}


@dataclass(frozen=True, slots=True)
class Pong:
    def to_wire(self) -> JsonObject:
        return {"type": MessageType.PONG}


ExtensionMessage = (
    CommandResult
    | CommandError
    | AuthResponse
    | Hello
    | Status
    | CdpEvent
    | TabEvent
    | HeldDownload
    | Ping
    | Pong
)
AppMessage = Command | AuthChallenge | AuthOk | ErrorNotice | RelayPort | Ping | Pong


@dataclass(frozen=True, slots=True)
class TabInfo:
    """One tab as the extension reports it (``tabs.list``, ``tab_event``)."""

    id: int
    window_id: int = -1
    url: str = ""
    title: str = ""
    active: bool = False
    attached: bool = False
    fav_icon_url: str | None = None
    group_id: int = -1
    # In the "Tabrelay" tab group or attached by the person: in scope when only shared tabs are.
    shared: bool = False
    # The active tab of the window that last had focus (several windows, several active tabs).
    focused: bool = False
    opener_id: int | None = None  # the tab whose page opened this one (window.open, a link)

    @classmethod
    def from_wire(cls, raw: object) -> TabInfo:
        """Parse a tab object. Raises ``ProtocolViolation`` on wrong types."""
        obj = _require_object(raw, "tab")
        return cls(
            id=_require_int(obj.get("id"), "tab.id"),
            window_id=_optional_int(obj.get("windowId"), "tab.windowId", default=-1),
            url=_optional_str(obj.get("url"), "tab.url", limit=None) or "",
            title=_optional_str(obj.get("title"), "tab.title", limit=None) or "",
            active=_optional_bool(obj.get("active"), "tab.active"),
            attached=_optional_bool(obj.get("attached"), "tab.attached"),
            fav_icon_url=_optional_str(obj.get("favIconUrl"), "tab.favIconUrl", limit=None),
            group_id=_optional_int(obj.get("groupId"), "tab.groupId", default=-1),
            shared=_optional_bool(obj.get("shared"), "tab.shared"),
            focused=_optional_bool(obj.get("focused"), "tab.focused"),
            opener_id=(
                None
                if obj.get("openerTabId") is None
                else _require_int(obj.get("openerTabId"), "tab.openerTabId")
            ),
        )

    def to_wire(self) -> JsonObject:
        wire: JsonObject = {
            "id": self.id,
            "windowId": self.window_id,
            "url": self.url,
            "title": self.title,
            "active": self.active,
            "attached": self.attached,
            "groupId": self.group_id,
            "shared": self.shared,
            "focused": self.focused,
        }
        if self.fav_icon_url is not None:
            wire["favIconUrl"] = self.fav_icon_url
        if self.opener_id is not None:
            wire["openerTabId"] = self.opener_id
        return wire


# --- parsing --------------------------------------------------------------------------------


@contextlib.contextmanager
def uncollected() -> Iterator[None]:
    """No cycle collection while many containers are made at once and none is in a cycle (a
    large answer decoded, a page's nodes built): reference counts free them, and the
    collector's scans, started by the allocations alone, walk everything made so far, so the
    cost grew faster than the work. The collector is left as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def decode_json(text: str, *, max_depth: int = MAX_NESTING_DEPTH) -> Any:
    """Strict JSON: no NaN or Infinity, bounded nesting. Raises ``ProtocolViolation``."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ProtocolViolation("too_deep", "message is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, huge integers, NaN
        raise ProtocolViolation(
            "invalid_json", f"message is not valid JSON ({_reason(exc)})"
        ) from None
    # Every level opens with a bracket, so a text with few brackets cannot be too deep: the
    # count is all a small CDP event costs.
    may_be_deep = text.count("{") + text.count("[") > max_depth
    if may_be_deep and _depth_exceeds(text, max_depth):
        raise ProtocolViolation("too_deep", f"message is nested deeper than {max_depth} levels")
    return value


def parse_extension_message(text: str) -> ExtensionMessage:
    """Parse one text frame sent by an extension.

    Raises:
        ProtocolViolation: the frame is not valid JSON, not an object, of an unknown type,
            or has a field of the wrong type or size.
    """
    obj = _require_object(decode_json(text), "message")
    if "id" in obj:
        return _parse_response(obj)
    return by_type(obj, _PARSERS)


def encode(message: JsonObject) -> str:
    """Serialize a message for the wire (compact, no NaN)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def by_type(obj: JsonObject, parsers: dict[str, Callable[[JsonObject], _M]]) -> _M:
    """Parse a message that is not an answer by its ``type``, with the parser ``parsers`` has."""
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolViolation("no_type", "message has neither an 'id' nor a string 'type'")
    parser = parsers.get(kind)
    if parser is None:
        raise ProtocolViolation("unknown_type", "unknown message type")
    return parser(obj)


def _parse_id(raw_id: object, what: str) -> str:
    if not isinstance(raw_id, str) or not 0 < len(raw_id) <= MAX_ID_LENGTH:
        raise ProtocolViolation("bad_id", f"{what} 'id' must be a non-empty string of ≤ 64 chars")
    return raw_id


def _parse_response(obj: JsonObject) -> CommandResult | CommandError:
    raw_id = _parse_id(obj["id"], "response")
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        raise ProtocolViolation("bad_response", "response needs exactly one of 'result', 'error'")
    if has_result:
        return CommandResult(raw_id, obj["result"], _carried_tab(obj.get("tab")))
    error: object = obj["error"]
    code: object = obj.get("code")
    if isinstance(error, dict):  # tolerate {"message": ..., "code": ...}
        code = error.get("code", code)
        error = error.get("message")
    if not isinstance(error, str):
        raise ProtocolViolation("bad_response", "response 'error' must be a string")
    return CommandError(
        raw_id,
        error[:MAX_ERROR_LENGTH],
        _optional_str(code, "code", limit=MAX_CODE_LENGTH),
    )


def _carried_tab(raw: object) -> TabInfo | None:
    """The tab an answer carries. One that does not parse is not carried, and the answer
    stands: the app then asks for the tab, which is always safe."""
    if raw is None:
        return None
    try:
        return TabInfo.from_wire(raw)
    except ProtocolViolation:
        return None


def _parse_auth_response(obj: JsonObject) -> AuthResponse:
    return AuthResponse(
        nonce=_require_str(obj.get("nonce"), "nonce", limit=MAX_PROOF_LENGTH),
        proof=_require_str(obj.get("proof"), "proof", limit=MAX_PROOF_LENGTH),
    )


def _parse_hello(obj: JsonObject) -> Hello:
    capabilities = obj.get("capabilities", [])
    if not isinstance(capabilities, list) or len(capabilities) > 256:
        raise ProtocolViolation("bad_field", "'capabilities' must be a list of strings")
    return Hello(
        protocol=_require_int(obj.get("protocol"), "protocol"),
        extension=_optional_str(obj.get("extension"), "extension", limit=MAX_TEXT_LENGTH) or "",
        browser=_optional_str(obj.get("browser"), "browser", limit=MAX_TEXT_LENGTH) or "",
        capabilities=tuple(
            _require_str(c, "capabilities[]", limit=MAX_METHOD_LENGTH) for c in capabilities
        ),
        instance=_optional_str(obj.get("instance"), "instance", limit=MAX_ID_LENGTH),
    )


def _parse_status(obj: JsonObject) -> Status:
    tabs = obj.get("attachedTabs")
    if not isinstance(tabs, list) or len(tabs) > MAX_LIST_LENGTH:
        raise ProtocolViolation("bad_field", "'attachedTabs' must be a list of tab ids")
    return Status(tuple(_require_int(t, "attachedTabs[]") for t in tabs))


def _parse_cdp_event(obj: JsonObject) -> CdpEvent:
    params = obj.get("params", {})
    if params is None:
        params = {}
    return CdpEvent(
        tab_id=_require_int(obj.get("tabId"), "tabId"),
        method=_require_str(obj.get("method"), "method", limit=MAX_METHOD_LENGTH),
        params=_require_object(params, "params"),
        session_id=_optional_str(obj.get("sessionId"), "sessionId", limit=MAX_TEXT_LENGTH),
    )


def _parse_tab_event(obj: JsonObject) -> TabEvent:
    event = obj.get("event")
    if event not in TAB_EVENT_KINDS:
        raise ProtocolViolation("bad_field", f"'event' must be one of {', '.join(TAB_EVENT_KINDS)}")
    assert isinstance(event, str)
    return TabEvent(event, TabInfo.from_wire(obj.get("tab")))


def _parse_download(obj: JsonObject) -> HeldDownload:
    item = _require_object(obj.get("download"), "download")
    total = _require_int(item.get("totalBytes"), "download.totalBytes")
    download_id = _require_int(item.get("id"), "download.id")
    if total < -1 or download_id < 0:
        raise ProtocolViolation("bad_field", "'download' has a negative id or size")
    return HeldDownload(
        id=download_id,
        url=_require_str(item.get("url"), "download.url", limit=MAX_HELD_URL_LENGTH),
        final_url=_require_str(
            item.get("finalUrl"), "download.finalUrl", limit=MAX_HELD_URL_LENGTH
        ),
        filename=_require_str(item.get("filename"), "download.filename", limit=MAX_TEXT_LENGTH),
        mime=_require_str(item.get("mime"), "download.mime", limit=MAX_TEXT_LENGTH),
        total_bytes=total,
        danger=_require_str(item.get("danger"), "download.danger", limit=MAX_CODE_LENGTH),
    )


_PARSERS: dict[str, Callable[[JsonObject], ExtensionMessage]] = {
    MessageType.AUTH_RESPONSE: _parse_auth_response,
    MessageType.HELLO: _parse_hello,
    MessageType.STATUS: _parse_status,
    MessageType.CDP_EVENT: _parse_cdp_event,
    MessageType.TAB_EVENT: _parse_tab_event,
    MessageType.DOWNLOAD: _parse_download,
    MessageType.PING: lambda _obj: Ping(),
    MessageType.PONG: lambda _obj: Pong(),
}


# --- field checks ---------------------------------------------------------------------------


def _require_object(value: object, name: str) -> JsonObject:
    if not isinstance(value, dict):
        raise ProtocolViolation("not_object", f"{name} must be a JSON object")
    return value


def _require_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_TAB_ID:
        raise ProtocolViolation("bad_field", f"'{name}' must be an integer")
    return value


def _optional_int(value: object, name: str, *, default: int) -> int:
    return default if value is None else _require_int(value, name)


def _require_str(value: object, name: str, *, limit: int | None) -> str:
    if not isinstance(value, str):
        raise ProtocolViolation("bad_field", f"'{name}' must be a string")
    if limit is not None and len(value) > limit:
        raise ProtocolViolation("bad_field", f"'{name}' is longer than {limit} characters")
    return value


def _optional_str(value: object, name: str, *, limit: int | None) -> str | None:
    return None if value is None else _require_str(value, name, limit=limit)


def _optional_bool(value: object, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ProtocolViolation("bad_field", f"'{name}' must be true or false")
    return value


# The depth of a JSON text is read from its brackets outside strings, with bytes operations
# that run in C: a Python walk over every value of a multi-megabyte CDP answer (an accessibility
# tree) cost more than decoding it. Inside a string a backslash always starts an escape, so
# dropping escaped backslashes, then escaped quotes, leaves quotes that open and close strings.
_BRACKETS_AND_QUOTES = bytes.maketrans(b"{}", b"[]")
_OTHER_BYTES = bytes(b for b in range(256) if b not in b'[]{}"')
_LEAF_PASSES = 16  # real frames are a handful of levels deep: they end within these passes
_RUNS = re.compile(rb"\[+|\]+")


def _depth_exceeds(text: str, limit: int) -> bool:
    """Whether the valid JSON ``text`` nests deeper than ``limit``; linear in its size.

    Each pass of ``replace(b"[]", b"")`` drops every innermost pair, one level of the whole
    text; what a hostile text keeps after a few passes is measured run by run (each run that
    is left stands for a subtree deeper than the passes, so there are few of them).
    """
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Quotes and brackets only; adjacent quotes (a string without brackets) go, which keeps
    # every other character inside or outside a string as it was.
    data = data.translate(_BRACKETS_AND_QUOTES, _OTHER_BYTES).replace(b'""', b"")
    if b'"' in data:
        data = b"".join(data.split(b'"')[::2])  # brackets quoted in strings
    passes = min(limit, _LEAF_PASSES)
    for _ in range(passes):
        if not data:
            return False
        data = data.replace(b"[]", b"")
    if not data:
        return False
    if passes == limit:
        return True
    level = deepest = 0
    for run in _RUNS.findall(data):
        level += len(run) if run[0] == ord("[") else -len(run)
        deepest = max(deepest, level)
    return deepest > limit - passes


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed")


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.pos}"
    return str(exc).split(";")[0][:120]
