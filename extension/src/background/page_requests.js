// @ts-check
/**
 * Requests from the extension's own popup and options pages: pair, attach or detach a tab.
 *
 * Only this extension's pages may ask (externally_connectable is empty and there are no
 * content scripts, so nothing else can even send; the sender is checked anyway). No request
 * can change the relay host or port (THREATS E5): the port is set only by the options page
 * writing chrome.storage.local, and the host is a constant.
 */

import { isPlainObject } from "../shared/validation.js";

/**
 * @typedef {object} PageRequestDeps
 * @property {{pair: () => Promise<void>}} connection
 * @property {{attach: (tabId: number, options: {byUser: boolean}) => Promise<void>, detach: (tabId: number, options: {byUser: boolean}) => Promise<void>}} sessions
 * @property {(tabId: number) => Promise<void>} announceTab tell the app the tab's sharing changed
 */

/**
 * Whether a runtime message comes from one of this extension's pages.
 * @param {{id?: string, url?: string}} sender
 * @param {string} extensionId
 * @returns {boolean}
 */
export function isOwnPage(sender, extensionId) {
  return (
    sender.id === extensionId &&
    typeof sender.url === "string" &&
    sender.url.startsWith(`chrome-extension://${extensionId}/src/pages/`)
  );
}

/**
 * @param {unknown} request
 * @param {PageRequestDeps} deps
 * @returns {Promise<{ok: true} | {ok: false, error: string}>}
 */
export async function handlePageRequest(request, { connection, sessions, announceTab }) {
  if (!isPlainObject(request)) {
    return { ok: false, error: "not a request" };
  }
  try {
    switch (request.type) {
      case "pair":
        await connection.pair();
        return { ok: true };
      case "attach":
      case "detach": {
        const tabId = request.tabId;
        if (!Number.isSafeInteger(tabId)) {
          return { ok: false, error: "no tab" };
        }
        if (request.type === "attach") {
          await sessions.attach(/** @type {number} */ (tabId), { byUser: true });
        } else {
          await sessions.detach(/** @type {number} */ (tabId), { byUser: true });
        }
        await announceTab(/** @type {number} */ (tabId));
        return { ok: true };
      }
      default:
        return { ok: false, error: "unknown request" };
    }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
