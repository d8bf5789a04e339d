// @ts-check
/**
 * The CDP method denylist (DESIGN §4.7), the extension's copy of desktop/tabrelay/protocol/cdp.py.
 *
 * The app refuses these before sending; the extension refuses them again, so a forged or buggy
 * relay cannot dump cookies or escape the tab. tests/unit/test_extension_protocol.py keeps the
 * two lists equal. Pure: no chrome.*.
 */

/** Whole domains that reach outside the tab or into the browser's secrets. */
export const BLOCKED_CDP_DOMAINS = Object.freeze([
  "Target",
  "Browser",
  "WebAuthn",
  "SystemInfo",
  "Tethering",
  "Cast",
  "Extensions",
  "PWA",
]);

/** The one method of a blocked domain that stays within the tab: auto-attaching to the tab's own
 * frames that run in other processes (cross-site frames), each reached through a child session;
 * with those params alone (`autoAttachBlockReason`). */
export const ALLOWED_IN_BLOCKED_DOMAINS = Object.freeze(["Target.setAutoAttach"]);

export const BLOCKED_CDP_METHODS = Object.freeze([
  // cookies: read or write the jar beyond what the page itself can see
  "Network.getAllCookies",
  "Network.getCookies",
  "Network.setCookie",
  "Network.setCookies",
  "Network.deleteCookies",
  "Network.clearBrowserCookies",
  "Storage.getCookies",
  "Storage.setCookies",
  "Storage.clearCookies",
  "Storage.clearDataForOrigin",
  "Storage.clearDataForStorageKey",
  "Page.getCookies",
  // downloads, permissions, credentials
  "Page.setDownloadBehavior",
  "Fetch.continueWithAuth",
  "Network.setUserAgentOverride",
  "Security.setIgnoreCertificateErrors",
  "Security.handleCertificateError",
  "Security.setOverrideCertificateErrors",
  // escapes into other processes and targets
  "Page.crash",
  "Runtime.terminateExecution",
  "ServiceWorker.deliverPushMessage",
  "ServiceWorker.dispatchSyncEvent",
  "ServiceWorker.dispatchPeriodicSyncEvent",
]);

// Sets for lookup; private so nothing can add to or remove from them.
const blockedDomains = new Set(BLOCKED_CDP_DOMAINS);
const blockedMethods = new Set(BLOCKED_CDP_METHODS);
const allowedMethods = new Set(ALLOWED_IN_BLOCKED_DOMAINS);

// Same pattern as the app's _METHOD_SYNTAX; JavaScript's $ does not match before a final "\n".
const METHOD_SYNTAX = /^[A-Z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$/;

/**
 * Why `Target.setAutoAttach` with `params` may not be sent, or null when it may: only to
 * attach to the tab's frames (flat, not waiting, iframes alone: never its workers or the
 * service worker other tabs share), or to stop attaching.
 * @param {unknown} params
 * @returns {string | null}
 */
export function autoAttachBlockReason(params) {
  const p = /** @type {Record<string, unknown>} */ (params ?? {});
  if (p.autoAttach === false) return null;
  const filter = p.filter;
  const framesOnly =
    Array.isArray(filter) &&
    filter.length === 1 &&
    typeof filter[0] === "object" &&
    filter[0] !== null &&
    filter[0].type === "iframe" &&
    !filter[0].exclude;
  const keys = Object.keys(p).sort().join(",");
  if (p.autoAttach === true && p.flatten === true && p.waitForDebuggerOnStart === false && framesOnly && keys === "autoAttach,filter,flatten,waitForDebuggerOnStart") {
    return null;
  }
  return "Target.setAutoAttach is let through only to attach to the tab's frames ({autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{type: \"iframe\"}]})";
}

/**
 * Why `method` may not be sent, or null when it may.
 * @param {unknown} method
 * @returns {string | null}
 */
export function cdpBlockReason(method) {
  if (typeof method !== "string" || !METHOD_SYNTAX.test(method)) {
    const shown = typeof method === "string" ? method.slice(0, 80) : typeof method;
    return `'${shown}' is not a CDP method name (Domain.method)`;
  }
  const domain = method.split(".", 1)[0];
  if (blockedDomains.has(domain) && !allowedMethods.has(method)) {
    return `the CDP domain ${domain} is blocked by Tabrelay`;
  }
  if (blockedMethods.has(method)) {
    return `the CDP method ${method} is blocked by Tabrelay`;
  }
  return null;
}
