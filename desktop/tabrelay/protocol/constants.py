"""The relay protocol's constants: version, method names, message types, close codes, caps.

The extension mirrors these in ``extension/src/shared/protocol.js``; a test compares the two,
so a change here without the same change there fails the suite.
"""

from __future__ import annotations

import enum

PROTOCOL_VERSION = 1

RELAY_PATH = "/ws/browser-relay"
CONFIG_PATH = "/api/browser-relay/config"
# What became of a pairing request (asked, declined): never a credential, never a question.
PAIRING_STATUS_PATH = "/api/browser-relay/pairing"
HEALTH_PATH = "/healthz"

DEFAULT_RELAY_PORT = 23001
DEFAULT_MCP_PORT = 23002
# A pairing request carries a short code the extension's popup shows and the app's dialog shows
# too, so the person allows the very browser in front of them (any program can ask in its name).
PAIRING_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
PAIRING_CODE_LENGTH = 6
# The id Chrome derives from the extension manifest's pinned "key" (a test checks it).
TABRELAY_EXTENSION_ID = "eoaagjoooodkomhaagnbdmknnndlhkmk"

# The seed table of DESIGN §3: what every relay extension understands.
SEED_METHODS: tuple[str, ...] = (
    "tabs.list",
    "tabs.create",
    "tabs.navigate",
    "tabs.screenshot",
    "debugger.attach",
    "debugger.detach",
    "cdp.send",
)
# What the Tabrelay extension adds; it lists what it has in ``hello.capabilities``.
EXTENDED_METHODS: tuple[str, ...] = (
    "tabs.close",
    "tabs.activate",
    "tabs.get",
    "tabs.group",
    "downloads.search",
    "downloads.hold",
    "downloads.decide",
)
# A held download's addresses are cut to this length in its ``download`` frame (a data: URL).
MAX_HELD_URL_LENGTH = 2048
# Behaviours an extension announces in ``hello.capabilities`` besides methods.
# navigation.guard: it lets the document requests the app holds (Fetch) through whenever the
# app cannot decide (not connected), so an app that went away never leaves a tab stuck.
# cdp.tab: a ``cdp.send`` sent with ``"tab": true`` is answered with the tab as the extension
# read it once the command had ended (docs/protocol.md).
CARRIED_TAB = "cdp.tab"
FEATURES: tuple[str, ...] = ("navigation.guard", CARRIED_TAB)


class MessageType(enum.StrEnum):
    """Values of the ``type`` field of unsolicited messages, both directions."""

    AUTH_CHALLENGE = "auth.challenge"  # app → extension
    AUTH_RESPONSE = "auth.response"  # extension → app
    AUTH_OK = "auth.ok"  # app → extension
    HELLO = "hello"  # extension → app
    STATUS = "status"
    CDP_EVENT = "cdp_event"
    TAB_EVENT = "tab_event"
    DOWNLOAD = "download"  # extension → app: a download waits for the app's word
    PING = "ping"
    PONG = "pong"
    ERROR = "error"  # app → extension: a frame it sent was rejected
    RELAY_PORT = "relay.port"  # app → extension: the port it listens on from its next start


TAB_EVENT_KINDS: tuple[str, ...] = ("created", "updated", "removed", "activated")


class ErrorCode(enum.StrEnum):
    """Why the extension failed a command: the ``code`` of its error answer (``CommandFailed``
    carries it), so the app decides by the code, never by the message's words."""

    NO_TAB = "no_tab"  # the tab does not exist or was closed
    RESTRICTED_URL = "restricted_url"  # chrome://, an extension or the Web Store
    BLOCKED_METHOD = "blocked_method"  # the CDP denylist
    CANCELED_BY_USER = "canceled_by_user"  # the person cancelled the debugging bar
    DETACHED = "detached"  # the debugger was detached from the tab (or it was let go)
    ANOTHER_DEBUGGER = "another_debugger"  # DevTools or another extension holds the tab
    UNKNOWN_METHOD = "unknown_method"  # also the app's own, for a method not announced
    INVALID_PARAMS = "invalid_params"


class CloseCode(enum.IntEnum):
    """WebSocket close codes the relay uses in the private range (RFC 6455 §7.4.2)."""

    PROTOCOL_ERROR = 4400  # too many invalid frames
    AUTH_FAILED = 4401  # wrong proof; permanent until re-paired
    NOT_PAIRED = 4403  # the extension's pairing was revoked
    AUTH_TIMEOUT = 4408  # no auth.response or hello in time
    DUPLICATE_BROWSER = 4409  # the same browser instance is already connected and healthy
    TOKEN_ROTATED = 4410  # the relay token changed; fetch the config again
    RATE_LIMITED = 4429  # too many failed attempts; retry after the cool-down
    SECRETS_UNAVAILABLE = 4503  # the app cannot read credentials now (keychain locked); retry
    HEARTBEAT_LOST = 4504  # pings went unanswered


# Frame caps in bytes: a peer that has not authenticated may only say a little.
MAX_FRAME_BEFORE_AUTH = 16 * 1024
MAX_FRAME_AFTER_AUTH = 32 * 1024 * 1024
MAX_NESTING_DEPTH = 256
# Field caps in characters (docs/protocol.md); both sides' parsers refuse a frame beyond them.
MAX_ID_LENGTH = 64
MAX_METHOD_LENGTH = 200
MAX_PROOF_LENGTH = 128  # nonces and proofs (base64url; 43 in practice)
MAX_CODE_LENGTH = 1024  # an error's code
MAX_ERROR_LENGTH = 64 * 1024  # an error's message

# Challenge–response (DESIGN §4.4): HMAC-SHA256 under the relay token over
# "tabrelay/<version> <role> <port> <app nonce> <extension nonce>".
NONCE_BYTES = 32
ROLE_EXTENSION = "extension"
ROLE_APP = "app"
