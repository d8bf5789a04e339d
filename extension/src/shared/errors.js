// @ts-check
/**
 * The error a relay command answers with: a sentence for people and a code for the app
 * (the codes of docs/protocol.md). Pure, shared by validation and the background modules.
 */

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
 * Turn an error from a chrome.* call into a CommandError with a protocol code.
 *
 * Chrome reports these as plain messages ("No tab with id: 5.", "Cannot access a chrome://
 * URL", "Debugger is not attached to the tab with id: 5."); the app wants a code it can act on.
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
  if (/^No tab with (given )?id/i.test(message) || /no tab with id/i.test(message)) {
    return new CommandError(`No tab with id ${context.tabId ?? "given"}: it does not exist or was closed.`, "no_tab");
  }
  if (/Cannot access|Cannot attach to this target|chrome:\/\/|chrome-extension:\/\/|webstore/i.test(message)) {
    return new CommandError(
      `Tabrelay cannot use ${tab}: it shows a browser, extension or web store page (${message})`,
      "restricted_url",
    );
  }
  if (/not attached|Detached while handling/i.test(message)) {
    return new CommandError(`The debugger was detached from ${tab} (${message})`, "detached");
  }
  if (/Another debugger is already attached/i.test(message)) {
    return new CommandError(
      `Another debugger (DevTools or another extension) already controls ${tab}; close it and try again`,
      "detached",
    );
  }
  return new CommandError(message);
}
