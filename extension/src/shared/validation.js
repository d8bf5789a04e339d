// @ts-check
/**
 * Strict checks of what the app sends: every frame (parseAppFrame, typed by frames.js), command
 * parameters, the URLs an agent may open, the pages the extension never touches, and handshake
 * nonces.
 *
 * A command check throws a CommandError with a clear sentence and a protocol error code; any
 * other frame that is not what the protocol says is refused (null). Pure: no chrome.*, so node
 * tests every rule.
 */

import { CommandError } from "./errors.js";
import {
  ErrorCode,
  MAX_CODE_LENGTH,
  MAX_ERROR_LENGTH,
  MAX_ID_LENGTH,
  MAX_METHOD_LENGTH,
  MAX_PROOF_LENGTH,
  MessageType,
} from "./protocol.js";

const MAX_URL_LENGTH = 8 * 1024;
const MAX_GROUP_TABS = 500;
const MAX_TITLE_LENGTH = 80;
const MAX_DOWNLOAD_URL_LENGTH = 8192;
export const MAX_DOWNLOADS_FOUND = 5;
const NONCE_SYNTAX = /^[A-Za-z0-9_-]{22,128}$/;
const VERSION_SYNTAX = /^1\.[0-9]{1,3}$/;

/** Browser-internal schemes: extensions may not (and Tabrelay will not) drive these pages. */
const RESTRICTED_SCHEMES = new Set([
  "chrome:",
  "chrome-extension:",
  "chrome-untrusted:",
  "chrome-search:",
  "chrome-error:",
  "devtools:",
  "edge:",
  "brave:",
  "opera:",
  "vivaldi:",
  "extension:",
  "view-source:",
  "file:",
  "filesystem:",
  "blob:",
  "javascript:",
  "data:",
]);

/** Web stores: Chrome forbids extensions there; an agent has no business there either. */
const STORE_PAGES = [
  { host: "chromewebstore.google.com", path: "/" },
  { host: "chrome.google.com", path: "/webstore" },
  { host: "microsoftedge.microsoft.com", path: "/addons" },
];

/** @typedef {import("./frames.js").CommandFrame} Command */

/**
 * Whether a frame from the app looks like a command at all, and its id if it has a usable one.
 *
 * @param {unknown} message a parsed JSON frame
 * @returns {Command} the command, with params defaulted to {}
 * @throws {CommandError} code invalid_params; `id` is attached when the frame had a valid one
 */
export function parseCommand(message) {
  if (!isPlainObject(message)) {
    throw new CommandError("a command must be a JSON object", ErrorCode.INVALID_PARAMS);
  }
  const { id, method, params } = /** @type {Record<string, unknown>} */ (message);
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new CommandError("a command needs a string id of 1–64 characters", ErrorCode.INVALID_PARAMS);
  }
  if (typeof method !== "string" || method.length === 0 || method.length > MAX_METHOD_LENGTH) {
    throw withId(new CommandError("a command needs a string method", ErrorCode.INVALID_PARAMS), id);
  }
  if (params !== undefined && params !== null && !isPlainObject(params)) {
    throw withId(new CommandError("params must be a JSON object", ErrorCode.INVALID_PARAMS), id);
  }
  return { id, method, params: /** @type {Record<string, unknown>} */ (params ?? {}) };
}

/**
 * One frame from the app, typed: a command (any frame with an `id`, checked by parseCommand),
 * or the unsolicited frame its `type` names, with the fields docs/protocol.md gives it.
 *
 * @param {unknown} message a parsed JSON frame
 * @returns {import("./frames.js").AppFrame | null} null: not a frame the extension knows (an
 *   unknown type, a wrong field); the protocol has it ignored
 * @throws {CommandError} a frame with an `id` that is not a valid command (see parseCommand)
 */
export function parseAppFrame(message) {
  if (!isPlainObject(message)) {
    return null;
  }
  if ("id" in message) {
    return { kind: "command", frame: parseCommand(message) };
  }
  switch (message.type) {
    case MessageType.AUTH_CHALLENGE: {
      const { protocol, nonce } = message;
      if (!Number.isSafeInteger(protocol) || !isValidNonce(nonce)) return null;
      return { kind: "auth.challenge", frame: { type: MessageType.AUTH_CHALLENGE, protocol: /** @type {number} */ (protocol), nonce } };
    }
    case MessageType.AUTH_OK:
      return isText(message.proof, MAX_PROOF_LENGTH) ? { kind: "auth.ok", frame: { type: MessageType.AUTH_OK, proof: message.proof } } : null;
    case MessageType.PING:
      return { kind: "ping", frame: { type: MessageType.PING } };
    case MessageType.PONG:
      return { kind: "pong", frame: { type: MessageType.PONG } };
    case MessageType.ERROR: {
      const { code, message: text } = message;
      if (!isText(code, MAX_CODE_LENGTH) || !isText(text, MAX_ERROR_LENGTH)) return null;
      return { kind: "error", frame: { type: MessageType.ERROR, code, message: text } };
    }
    case MessageType.RELAY_PORT: {
      const port = typeof message.port === "number" ? parsePort(message.port) : null;
      return port === null ? null : { kind: "relay.port", frame: { type: MessageType.RELAY_PORT, port } };
    }
    default:
      return null;
  }
}

/**
 * @param {unknown} value
 * @param {number} limit
 * @returns {value is string} a string of at most `limit` characters
 */
function isText(value, limit) {
  return typeof value === "string" && value.length <= limit;
}

/**
 * @param {CommandError} error
 * @param {string} id
 * @returns {CommandError & {id: string}}
 */
function withId(error, id) {
  return Object.assign(error, { id });
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isPlainObject(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * @param {Record<string, unknown>} params
 * @param {string} name
 * @returns {number}
 */
export function requireTabId(params, name = "tabId") {
  const value = params[name];
  if (!Number.isSafeInteger(value) || /** @type {number} */ (value) < 0) {
    throw new CommandError(`'${name}' must be a tab id (a non-negative integer)`, ErrorCode.INVALID_PARAMS);
  }
  return /** @type {number} */ (value);
}

/**
 * @param {Record<string, unknown>} params
 * @param {string} name
 * @returns {number | undefined}
 */
export function optionalInteger(params, name) {
  const value = params[name];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (!Number.isSafeInteger(value)) {
    throw new CommandError(`'${name}' must be an integer`, ErrorCode.INVALID_PARAMS);
  }
  return /** @type {number} */ (value);
}

/**
 * @param {Record<string, unknown>} params
 * @param {string} name
 * @returns {boolean | undefined}
 */
export function optionalBoolean(params, name) {
  const value = params[name];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== "boolean") {
    throw new CommandError(`'${name}' must be true or false`, ErrorCode.INVALID_PARAMS);
  }
  return value;
}

/**
 * Params of tabs.screenshot, with defaults.
 * @param {Record<string, unknown>} params
 * @returns {{windowId: number | undefined, format: "png" | "jpeg" | "webp", quality: number | undefined}}
 */
export function screenshotParams(params) {
  const windowId = optionalInteger(params, "windowId");
  const format = params.format ?? "png";
  if (format !== "png" && format !== "jpeg" && format !== "webp") {
    throw new CommandError("'format' must be png, jpeg or webp", ErrorCode.INVALID_PARAMS);
  }
  const quality = optionalInteger(params, "quality");
  if (quality !== undefined && (quality < 0 || quality > 100)) {
    throw new CommandError("'quality' must be between 0 and 100", ErrorCode.INVALID_PARAMS);
  }
  return { windowId, format, quality };
}

/**
 * The CDP protocol version for debugger.attach ("1.3" unless the app asks for another 1.x).
 * @param {Record<string, unknown>} params
 * @returns {string}
 */
export function debuggerVersion(params) {
  const version = params.version ?? "1.3";
  if (typeof version !== "string" || !VERSION_SYNTAX.test(version)) {
    throw new CommandError("'version' must be a CDP protocol version such as \"1.3\"", ErrorCode.INVALID_PARAMS);
  }
  return version;
}

/**
 * Params of cdp.send other than tabId: the CDP method (not yet denylist-checked), its params,
 * an optional child session id, and whether the answer carries the tab once the command ended.
 * @param {Record<string, unknown>} params
 * @returns {{method: string, commandParams: Record<string, unknown> | undefined, sessionId: string | undefined, withTab: boolean}}
 */
export function cdpParams(params) {
  const method = params.method;
  if (typeof method !== "string" || method.length === 0 || method.length > MAX_METHOD_LENGTH) {
    throw new CommandError("'method' must be a CDP method name such as \"Runtime.evaluate\"", ErrorCode.INVALID_PARAMS);
  }
  const commandParams = params.params;
  if (commandParams !== undefined && commandParams !== null && !isPlainObject(commandParams)) {
    throw new CommandError("'params' of cdp.send must be a JSON object", ErrorCode.INVALID_PARAMS);
  }
  const sessionId = params.sessionId;
  if (sessionId !== undefined && sessionId !== null && (typeof sessionId !== "string" || sessionId.length > 128)) {
    throw new CommandError("'sessionId' must be a string", ErrorCode.INVALID_PARAMS);
  }
  return {
    method,
    commandParams: /** @type {Record<string, unknown> | undefined} */ (commandParams ?? undefined),
    sessionId: /** @type {string | undefined} */ (sessionId ?? undefined),
    withTab: optionalBoolean(params, "tab") ?? false,
  };
}

/**
 * Params of tabs.group.
 * @param {Record<string, unknown>} params
 * @param {string} defaultTitle
 * @returns {{tabIds: number[], title: string}}
 */
export function groupParams(params, defaultTitle) {
  const tabIds = params.tabIds;
  if (!Array.isArray(tabIds) || tabIds.length === 0 || tabIds.length > MAX_GROUP_TABS) {
    throw new CommandError("'tabIds' must be a non-empty list of tab ids", ErrorCode.INVALID_PARAMS);
  }
  for (const tabId of tabIds) {
    if (!Number.isSafeInteger(tabId) || tabId < 0) {
      throw new CommandError("'tabIds' must hold tab ids (non-negative integers)", ErrorCode.INVALID_PARAMS);
    }
  }
  const title = params.title ?? defaultTitle;
  if (typeof title !== "string" || title.length === 0 || title.length > MAX_TITLE_LENGTH) {
    throw new CommandError(`'title' must be a string of 1–${MAX_TITLE_LENGTH} characters`, ErrorCode.INVALID_PARAMS);
  }
  return { tabIds: /** @type {number[]} */ (tabIds), title };
}

/**
 * `downloads.search`'s params: the address a download was started from, exactly (the app learnt
 * it from the tab's `Page.downloadWillBegin`), and the time it started no earlier than (ms since
 * the epoch). Without the address, no download is named: the app cannot list the person's.
 *
 * @param {Record<string, unknown>} params
 * @returns {{url: string, startedAfter: number}}
 */
export function downloadSearchParams(params) {
  const { url, startedAfter = 0 } = params;
  if (typeof url !== "string" || url.length === 0 || url.length > MAX_DOWNLOAD_URL_LENGTH) {
    throw new CommandError(`'url' must be the download's address (at most ${MAX_DOWNLOAD_URL_LENGTH} characters)`, ErrorCode.INVALID_PARAMS);
  }
  if (typeof startedAfter !== "number" || !Number.isFinite(startedAfter) || startedAfter < 0) {
    throw new CommandError("'startedAfter' must be a time in ms since the epoch", ErrorCode.INVALID_PARAMS);
  }
  return { url, startedAfter };
}

/**
 * @param {Record<string, unknown>} params downloads.decide's
 * @returns {{id: number, allow: boolean}}
 * @throws {CommandError}
 */
export function downloadDecideParams(params) {
  const { id, allow } = params;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
    throw new CommandError("'id' must be a held download's id", ErrorCode.INVALID_PARAMS);
  }
  if (typeof allow !== "boolean") {
    throw new CommandError("'allow' must be true or false", ErrorCode.INVALID_PARAMS);
  }
  return { id, allow };
}

/**
 * Whether a page is one the extension never lists, drives or reads: browser pages, extension
 * pages (this one's included), local files and the web stores.
 *
 * @param {string | undefined} url
 * @returns {boolean}
 */
export function isRestrictedUrl(url) {
  if (!url) {
    return false; // a tab that has not committed a URL yet
  }
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return true; // what cannot be parsed cannot be judged safe
  }
  if (RESTRICTED_SCHEMES.has(parsed.protocol)) {
    return true;
  }
  if (parsed.protocol === "about:") {
    return parsed.href !== "about:blank" && parsed.href !== "about:srcdoc";
  }
  if (parsed.protocol === "https:" || parsed.protocol === "http:") {
    const host = parsed.hostname.toLowerCase();
    const path = parsed.pathname.toLowerCase();
    return STORE_PAGES.some((store) => host === store.host && path.startsWith(store.path));
  }
  return false;
}

/**
 * Check a URL an agent wants a tab to open: http, https or about:blank, never a restricted
 * page, never the relay itself (a tab pointed at the relay's config endpoint, THREATS C3).
 *
 * @param {unknown} url
 * @param {{relayPort: number}} context
 * @returns {string} the URL, unchanged
 * @throws {CommandError} invalid_params or restricted_url
 */
export function checkNavigationUrl(url, { relayPort }) {
  if (typeof url !== "string" || url.length === 0 || url.length > MAX_URL_LENGTH) {
    throw new CommandError("'url' must be a URL string", ErrorCode.INVALID_PARAMS);
  }
  if (url === "about:blank") {
    return url;
  }
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new CommandError(`'${url.slice(0, 200)}' is not a valid URL`, ErrorCode.INVALID_PARAMS);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new CommandError(
      `Tabrelay opens only http, https and about:blank pages, not ${parsed.protocol} URLs`,
      ErrorCode.RESTRICTED_URL,
    );
  }
  if (isRestrictedUrl(url)) {
    throw new CommandError("Tabrelay does not open web store pages", ErrorCode.RESTRICTED_URL);
  }
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  if (port === relayPort && isLoopbackHost(parsed.hostname)) {
    throw new CommandError("Tabrelay does not open its own relay in a tab", ErrorCode.RESTRICTED_URL);
  }
  return url;
}

/**
 * @param {string} hostname as URL parses it (IPv6 in brackets)
 * @returns {boolean}
 */
export function isLoopbackHost(hostname) {
  const host = hostname.toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * A relay port as typed by the person in the options page.
 * @param {unknown} value
 * @returns {number | null} the port, or null when it is not one
 */
export function parsePort(value) {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (!/^[0-9]{1,5}$/.test(text)) {
    return null;
  }
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * @param {unknown} nonce
 * @returns {nonce is string} whether it is base64url of at least 16 random bytes (≤ 128 chars)
 */
export function isValidNonce(nonce) {
  return typeof nonce === "string" && NONCE_SYNTAX.test(nonce);
}

/**
 * A relay token as pasted by the person (manual pairing).
 * @param {unknown} value
 * @returns {string | null}
 */
export function parseToken(value) {
  if (typeof value !== "string") {
    return null;
  }
  const token = value.trim();
  // The app makes 43-character base64url tokens; accept any printable token of sane length.
  return /^[\x21-\x7e]{20,512}$/.test(token) ? token : null;
}
