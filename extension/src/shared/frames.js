// @ts-check
/**
 * Every frame of the relay protocol (docs/protocol.md) as a JSDoc type, both directions, and
 * the builders of the frames the extension sends: no other module writes a frame as an object
 * literal. What the app sends is checked by validation.js (parseAppFrame), not here.
 *
 * Pure: no chrome.*, no I/O. protocol.js keeps the constants only (the app's drift test reads
 * every name it exports), so the frames live in this module of their own.
 */

import { MessageType, PROTOCOL_VERSION } from "./protocol.js";

// --- app → extension --------------------------------------------------------------------------

/**
 * @typedef {object} AuthChallengeFrame the app's first frame after the upgrade
 * @property {"auth.challenge"} type
 * @property {number} protocol
 * @property {string} nonce the app's nonce A (base64url)
 */

/**
 * @typedef {object} AuthOkFrame the app's proof that it knows the relay token
 * @property {"auth.ok"} type
 * @property {string} proof P_app
 */

/**
 * @typedef {object} CommandFrame a command the extension answers exactly once
 * @property {string} id
 * @property {string} method one of protocol.js SEED_METHODS and EXTENDED_METHODS
 * @property {Record<string, unknown>} params {} when the app sent none
 */

/** @typedef {{type: "ping"}} PingFrame either side sends it; the other answers with a pong */
/** @typedef {{type: "pong"}} PongFrame */

/**
 * @typedef {object} AppErrorFrame the app rejected a frame of the extension's
 * @property {"error"} type
 * @property {string} code
 * @property {string} message
 */

/**
 * @typedef {object} RelayPortFrame the app listens on this port from its next start
 * @property {"relay.port"} type
 * @property {number} port
 */

/**
 * A frame from the app, as validation.js parseAppFrame gives it: the kind names the frame.
 * @typedef {{kind: "auth.challenge", frame: AuthChallengeFrame} | {kind: "auth.ok", frame: AuthOkFrame} |
 *   {kind: "command", frame: CommandFrame} | {kind: "ping", frame: PingFrame} | {kind: "pong", frame: PongFrame} |
 *   {kind: "error", frame: AppErrorFrame} | {kind: "relay.port", frame: RelayPortFrame}} AppFrame
 */

/** The kinds of frame the app sends (AppFrame's kind). */
export const APP_FRAME_KINDS = Object.freeze(["auth.challenge", "auth.ok", "command", "ping", "pong", "error", "relay.port"]);

// --- extension → app --------------------------------------------------------------------------

/**
 * @typedef {object} AuthResponseFrame
 * @property {"auth.response"} type
 * @property {string} nonce the extension's nonce E
 * @property {string} proof P_ext
 */

/**
 * @typedef {object} HelloFrame who the extension is and what it can do, right after auth.ok
 * @property {"hello"} type
 * @property {number} protocol
 * @property {string} extension the extension's version
 * @property {string} browser "Chrome 131"
 * @property {string[]} capabilities extended methods and features
 * @property {string} instance the browser profile's id, kept across reconnects
 */

/**
 * @typedef {object} StatusFrame
 * @property {"status"} type
 * @property {number[]} attachedTabs
 */

/**
 * @typedef {object} CdpEventFrame
 * @property {"cdp_event"} type
 * @property {number} tabId
 * @property {string} method
 * @property {Record<string, unknown>} params
 * @property {string} [sessionId] a child session's (an out-of-process frame, a worker)
 */

/**
 * @typedef {object} HeldDownload a download waiting for the app's word (downloads.decide)
 * @property {number} id chrome.downloads' id
 * @property {string} url where it started (at most MAX_HELD_URL_LENGTH characters)
 * @property {string} finalUrl where it ended after redirects (alike)
 * @property {string} filename the file name Chrome chose, no folder
 * @property {string} mime
 * @property {number} totalBytes its size when the server said it, else -1
 * @property {string} danger Chrome's word on it: "safe", "file", "url", "content", …
 */

/**
 * @typedef {object} DownloadFrame
 * @property {"download"} type
 * @property {HeldDownload} download
 */

/**
 * A tab in the protocol's shape (tabs.list, tabs.get, tab_event).
 * @typedef {object} WireTab
 * @property {number} id
 * @property {number} windowId
 * @property {string} url
 * @property {string} title
 * @property {boolean} active
 * @property {boolean} attached
 * @property {boolean} shared
 * @property {boolean} [focused] the active tab of the window that last had focus (tabs.list)
 * @property {number} groupId
 * @property {string} [favIconUrl]
 * @property {number} [openerTabId] the tab whose page opened this one (window.open, a link)
 */

/** @typedef {"created" | "updated" | "removed" | "activated"} TabEventKind */

/**
 * @typedef {object} TabEventFrame
 * @property {"tab_event"} type
 * @property {TabEventKind} event
 * @property {WireTab | {id: number}} tab `removed` carries the id only
 */

/**
 * @typedef {object} ResultFrame a command's answer
 * @property {string} id
 * @property {unknown} result
 * @property {WireTab} [tab] a cdp.send's tab as it was once the command ended, when asked
 */

/**
 * @typedef {object} FailureFrame a command's answer when it failed
 * @property {string} id
 * @property {string} error a sentence a person (or an agent) can act on
 * @property {string} [code] one of protocol.js ErrorCode
 */

/**
 * @typedef {AuthResponseFrame | HelloFrame | StatusFrame | CdpEventFrame | TabEventFrame | DownloadFrame |
 *   PingFrame | PongFrame | ResultFrame | FailureFrame} ExtensionFrame
 */

/** The kinds of frame the extension sends: the names of the builders below. */
export const EXTENSION_FRAME_KINDS = Object.freeze([
  "auth.response",
  "hello",
  "status",
  "cdp_event",
  "tab_event",
  "download",
  "ping",
  "pong",
  "result",
  "failure",
]);

// --- builders -------------------------------------------------------------------------------

/**
 * @param {string} nonce
 * @param {string} proof
 * @returns {AuthResponseFrame}
 */
export function authResponseFrame(nonce, proof) {
  return { type: MessageType.AUTH_RESPONSE, nonce, proof };
}

/**
 * @param {object} facts
 * @param {string} facts.extension the extension's version (manifest)
 * @param {string} facts.browser
 * @param {string[]} facts.capabilities
 * @param {string} facts.instance
 * @returns {HelloFrame}
 */
export function helloFrame({ extension, browser, capabilities, instance }) {
  return { type: MessageType.HELLO, protocol: PROTOCOL_VERSION, extension, browser, capabilities, instance };
}

/**
 * @param {number[]} attachedTabs
 * @returns {StatusFrame}
 */
export function statusFrame(attachedTabs) {
  return { type: MessageType.STATUS, attachedTabs };
}

/**
 * @param {number} tabId
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {string} [sessionId]
 * @returns {CdpEventFrame}
 */
export function cdpEventFrame(tabId, method, params, sessionId) {
  /** @type {CdpEventFrame} */
  const frame = { type: MessageType.CDP_EVENT, tabId, method, params };
  if (sessionId) frame.sessionId = sessionId;
  return frame;
}

/**
 * @param {"created" | "updated" | "activated"} event
 * @param {WireTab} tab
 * @returns {TabEventFrame}
 */
export function tabEventFrame(event, tab) {
  return { type: MessageType.TAB_EVENT, event, tab };
}

/**
 * @param {number} tabId
 * @returns {TabEventFrame}
 */
export function tabRemovedFrame(tabId) {
  return { type: MessageType.TAB_EVENT, event: "removed", tab: { id: tabId } };
}

/**
 * @param {HeldDownload} download
 * @returns {DownloadFrame}
 */
export function downloadFrame(download) {
  return { type: MessageType.DOWNLOAD, download };
}

/** @returns {PingFrame} */
export function pingFrame() {
  return { type: MessageType.PING };
}

/** @returns {PongFrame} */
export function pongFrame() {
  return { type: MessageType.PONG };
}

/**
 * @param {string} id
 * @param {unknown} result
 * @param {WireTab} [tab]
 * @returns {ResultFrame}
 */
export function resultFrame(id, result, tab) {
  return tab === undefined ? { id, result } : { id, result, tab };
}

/** A handler's result that carries a tab for its answer frame (cdp.send with `tab: true`). */
export class WithTab {
  /**
   * @param {unknown} result
   * @param {WireTab | undefined} tab undefined when it could not be read (the app then asks)
   */
  constructor(result, tab) {
    this.result = result;
    this.tab = tab;
  }
}

/**
 * @param {string} id
 * @param {string} error
 * @param {string | undefined} [code]
 * @returns {FailureFrame}
 */
export function failureFrame(id, error, code) {
  /** @type {FailureFrame} */
  const frame = { id, error };
  if (code !== undefined) frame.code = code;
  return frame;
}
