// @ts-check
/**
 * The error a relay command answers with: a sentence for people and a code for the app
 * (the codes of docs/protocol.md), and the reading of Chrome's failures into codes. Pure,
 * shared by validation and the background modules.
 */

import { ErrorCode } from "./protocol.js";

export class CommandError extends Error {
  /**
   * @param {string} message what went wrong, as a sentence a person (or an agent) can act on
   * @param {string | undefined} [code] one of protocol.js ErrorCode, when one fits
   */
  constructor(message, code) {
    super(message);
    this.name = "CommandError";
    this.code = code;
  }
}

/**
 * What a chrome.* call's failure was. Chrome reports failures as plain messages ("No tab with
 * id: 5.", "Cannot access a chrome:// URL", "Debugger is not attached to the tab with id: 5.",
 * "Another debugger is already attached to the tab with id: 5."), with no code: chromeFailure
 * is the one place that reads them, and everything else goes by these codes.
 */
export const ChromeFailure = Object.freeze({
  // Symbols, not strings: a Chrome failure is read here and never goes on the wire, so it
  // cannot be mistaken for (or sent as) one of the protocol's ErrorCode strings.
  NO_TAB: Symbol("chrome: no tab"),
  RESTRICTED: Symbol("chrome: restricted page"),
  NOT_ATTACHED: Symbol("chrome: debugger not attached"),
  ALREADY_ATTACHED: Symbol("chrome: another debugger attached"),
});

/**
 * @param {unknown} error what a chrome.* call threw (or rejected with)
 * @returns {symbol | undefined} one of ChromeFailure, or undefined for any other failure
 */
export function chromeFailure(error) {
  const message = error instanceof Error ? error.message : String(error);
  if (/no tab with (given )?id/i.test(message)) return ChromeFailure.NO_TAB;
  if (/Cannot access|Cannot attach to this target|chrome:\/\/|chrome-extension:\/\/|webstore/i.test(message)) {
    return ChromeFailure.RESTRICTED;
  }
  if (/not attached|Detached while handling/i.test(message)) return ChromeFailure.NOT_ATTACHED;
  if (/already attached/i.test(message)) return ChromeFailure.ALREADY_ATTACHED;
  return undefined;
}

// Commands that do not act on the page: reading it, enabling or disabling a domain (idempotent),
// fetching a resource in its context (a GET, from the cache first).
const READS = /^[A-Za-z]+\.((get|describe|resolve|query)[A-Z]\w*|enable|disable|loadNetworkResource)$/;
// Reading a stream moves its position: sent again only when it surely never ran.
const STREAM = /^IO\.(read|close)$/;

/**
 * Whether a CDP command that failed with `error` may be sent again as it is, once the tab is
 * attached again: a command that does not act on the page (`READS`) that Chrome refused as not
 * attached, or lost as the debugger detached; a stream read only when Chrome refused it (it
 * never ran). Nothing else: the tab may show another document by then, and input, a script, a
 * navigation or typed text is the app's to decide.
 *
 * @param {unknown} error what sending it rejected with: Chrome's error, or the CommandError of
 *   a session that ended meanwhile
 * @param {string} method the CDP method
 * @returns {boolean}
 */
export function mayResend(error, method) {
  const message = error instanceof Error ? error.message : String(error);
  const refused = /is not attached/i.test(message); // Chrome's words, kept in a CommandError's
  const lost =
    !refused && (error instanceof CommandError ? error.code === ErrorCode.DETACHED : /Detached while handling/i.test(message));
  return ((refused || lost) && READS.test(method)) || (refused && STREAM.test(method));
}

/**
 * Turn an error from a chrome.* call into a CommandError with a protocol code the app can act on.
 *
 * @param {unknown} error
 * @param {{tabId?: number}} [context]
 * @returns {CommandError}
 */
export function describeChromeError(error, context = {}) {
  if (error instanceof CommandError) {
    return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  const tab = context.tabId === undefined ? "the tab" : `tab ${context.tabId}`;
  switch (chromeFailure(error)) {
    case ChromeFailure.NO_TAB:
      return new CommandError(`No tab with id ${context.tabId ?? "given"}: it does not exist or was closed.`, ErrorCode.NO_TAB);
    case ChromeFailure.RESTRICTED:
      return new CommandError(
        `Tabrelay cannot use ${tab}: it shows a browser, extension or web store page (${message})`,
        ErrorCode.RESTRICTED_URL,
      );
    case ChromeFailure.NOT_ATTACHED:
      return new CommandError(`The debugger was detached from ${tab} (${message})`, ErrorCode.DETACHED);
    case ChromeFailure.ALREADY_ATTACHED:
      return new CommandError(
        `Another debugger (DevTools or another extension) already controls ${tab}; close it and try again`,
        ErrorCode.ANOTHER_DEBUGGER,
      );
    default:
      return new CommandError(message);
  }
}
