// @ts-check
/**
 * The relay protocol's constants, mirrored from desktop/tabrelay/protocol/constants.py.
 *
 * tests/unit/test_extension_protocol.py imports this module with node and fails when a value
 * here differs from the app's. Only constants; no chrome.* and no I/O, so node can test it.
 */

export const PROTOCOL_VERSION = 1;

export const RELAY_HOST = "127.0.0.1"; // fixed loopback literal (DESIGN §4.10); never configurable
export const RELAY_PATH = "/ws/browser-relay";
export const CONFIG_PATH = "/api/browser-relay/config";
/** What became of a pairing request (asked, declined): never a credential, never a question. */
export const PAIRING_STATUS_PATH = "/api/browser-relay/pairing";
export const HEALTH_PATH = "/healthz";

export const DEFAULT_RELAY_PORT = 23001;

/** The seed table of DESIGN §3: what every relay extension understands. */
export const SEED_METHODS = Object.freeze([
  "tabs.list",
  "tabs.create",
  "tabs.navigate",
  "tabs.screenshot",
  "debugger.attach",
  "debugger.detach",
  "cdp.send",
]);

/** What the Tabrelay extension adds; announced in hello.capabilities. */
export const EXTENDED_METHODS = Object.freeze([
  "tabs.close",
  "tabs.activate",
  "tabs.get",
  "tabs.group",
  "downloads.search",
  "downloads.hold",
  "downloads.decide",
]);

/** A held download's addresses are cut to this length in its `download` frame (a data: URL). */
export const MAX_HELD_URL_LENGTH = 2048;

/**
 * Behaviours announced in hello.capabilities besides methods. navigation.guard: document
 * requests the app holds (Fetch) are let through whenever the app cannot decide. cdp.tab: a
 * cdp.send sent with `tab: true` is answered with the tab as read once the command had ended.
 */
export const CARRIED_TAB = "cdp.tab";
export const FEATURES = Object.freeze(["navigation.guard", CARRIED_TAB]);

/**
 * A pairing request carries a short code the popup shows and the app's dialog shows too, so the
 * person allows the very browser in front of them (any program can ask in its name).
 */
export const PAIRING_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const PAIRING_CODE_LENGTH = 6;

/** Values of the `type` field of unsolicited messages, both directions. */
export const MessageType = Object.freeze({
  AUTH_CHALLENGE: "auth.challenge",
  AUTH_RESPONSE: "auth.response",
  AUTH_OK: "auth.ok",
  HELLO: "hello",
  STATUS: "status",
  CDP_EVENT: "cdp_event",
  TAB_EVENT: "tab_event",
  DOWNLOAD: "download",
  PING: "ping",
  PONG: "pong",
  ERROR: "error",
  RELAY_PORT: "relay.port",
});

export const TAB_EVENT_KINDS = Object.freeze(["created", "updated", "removed", "activated"]);

/** WebSocket close codes in the private range (RFC 6455 §7.4.2). */
export const CloseCode = Object.freeze({
  PROTOCOL_ERROR: 4400,
  AUTH_FAILED: 4401,
  NOT_PAIRED: 4403,
  AUTH_TIMEOUT: 4408,
  DUPLICATE_BROWSER: 4409,
  TOKEN_ROTATED: 4410,
  RATE_LIMITED: 4429,
  SECRETS_UNAVAILABLE: 4503,
  HEARTBEAT_LOST: 4504,
});

/** Frame caps in bytes (the app closes with 1009 beyond them; the extension does the same). */
export const MAX_FRAME_BEFORE_AUTH = 16 * 1024;
export const MAX_FRAME_AFTER_AUTH = 32 * 1024 * 1024;

const utf8 = new TextEncoder();

/**
 * Whether a text frame is larger than `limit` bytes on the wire (UTF-8), as the app counts:
 * `data.length` counts UTF-16 code units, and a code unit takes up to three bytes.
 * @param {string} data
 * @param {number} limit
 * @returns {boolean}
 */
export function exceedsFrameLimit(data, limit) {
  if (data.length * 3 <= limit) return false; // fits whatever the characters are: no encoding
  if (data.length > limit) return true; // each code unit is at least one byte
  return utf8.encode(data).byteLength > limit;
}
/** Field caps in characters (docs/protocol.md); both sides' parsers refuse a frame beyond them. */
export const MAX_ID_LENGTH = 64;
export const MAX_METHOD_LENGTH = 200;
export const MAX_PROOF_LENGTH = 128; // nonces and proofs (base64url; 43 in practice)
export const MAX_CODE_LENGTH = 1024; // an error's code
export const MAX_ERROR_LENGTH = 64 * 1024; // an error's message

/** Challenge–response (DESIGN §4.4): 32-byte nonces, roles in the proof's message. */
export const NONCE_BYTES = 32;
export const ROLE_EXTENSION = "extension";
export const ROLE_APP = "app";

/** Error codes the app understands in a command's `code` (docs/protocol.md). */
export const ErrorCode = Object.freeze({
  NO_TAB: "no_tab",
  RESTRICTED_URL: "restricted_url",
  BLOCKED_METHOD: "blocked_method",
  CANCELED_BY_USER: "canceled_by_user",
  DETACHED: "detached",
  ANOTHER_DEBUGGER: "another_debugger",
  UNKNOWN_METHOD: "unknown_method",
  INVALID_PARAMS: "invalid_params",
});

/**
 * The extension sends a ping this often while connected: an MV3 service worker is suspended
 * after 30 s without extension activity, and messages the app sends do not count.
 */
export const KEEPALIVE_INTERVAL_MS = 20_000;
/** With no frame from the app for this long, the connection is presumed dead and reopened. */
export const SILENCE_TIMEOUT_MS = 50_000;
/** The whole handshake (open, challenge, proof, auth.ok) must finish within this. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
