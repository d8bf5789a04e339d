// @ts-check
/**
 * The only chrome.* calls the relay side of the extension makes (DESIGN §4.10, THREATS E4).
 *
 * bindChromeApi builds a facade holding exactly ALLOWED_CHROME_CALLS; the background modules
 * receive it instead of `chrome`, and a test fails if one of them names `chrome.` directly. A
 * relay command can therefore reach only the handlers of commands.js, and they only these calls.
 * Event listeners are registered in service_worker.js, which is the one other file that names
 * `chrome`.
 */

export const ALLOWED_CHROME_CALLS = Object.freeze([
  "action.setBadgeBackgroundColor",
  "action.setBadgeText",
  "action.setTitle",
  "alarms.create",
  "alarms.get",
  "debugger.attach",
  "debugger.detach",
  "debugger.getTargets",
  "debugger.sendCommand",
  "downloads.cancel",
  "downloads.removeFile",
  "downloads.search",
  "runtime.getManifest",
  "storage.local.get",
  "storage.local.remove",
  "storage.local.set",
  "storage.session.get",
  "storage.session.set",
  "tabGroups.query",
  "tabGroups.update",
  "tabs.create",
  "tabs.get",
  "tabs.group",
  "tabs.query",
  "tabs.remove",
  "tabs.update",
  "windows.update",
]);

/**
 * @typedef {object} ChromeApi
 * @property {{setBadgeBackgroundColor: Function, setBadgeText: Function, setTitle: Function}} action
 * @property {{create: Function, get: Function}} alarms
 * @property {{attach: Function, detach: Function, getTargets: Function, sendCommand: Function}} debugger
 * @property {{cancel: Function, removeFile: Function, search: Function}} downloads
 * @property {{getManifest: Function}} runtime
 * @property {{local: {get: Function, remove: Function, set: Function}, session: {get: Function, set: Function}}} storage
 * @property {{query: Function, update: Function}} tabGroups
 * @property {{create: Function, get: Function, group: Function, query: Function, remove: Function, update: Function}} tabs
 * @property {{update: Function}} windows
 */

/**
 * @param {any} chromeObject the extension's `chrome` (or a test double)
 * @returns {ChromeApi} a frozen object with exactly the allowed calls, bound to their namespaces
 */
export function bindChromeApi(chromeObject) {
  /** @type {Record<string, any>} */
  const facade = {};
  for (const path of ALLOWED_CHROME_CALLS) {
    const parts = path.split(".");
    const name = /** @type {string} */ (parts.pop());
    let namespace = chromeObject;
    let target = facade;
    for (const part of parts) {
      namespace = namespace?.[part];
      target[part] ??= {};
      target = target[part];
    }
    const fn = namespace?.[name];
    target[name] =
      typeof fn === "function"
        ? fn.bind(namespace)
        : () => Promise.reject(new Error(`chrome.${path} is not available in this browser`));
  }
  return /** @type {ChromeApi} */ (deepFreeze(facade));
}

/**
 * @param {Record<string, any>} object
 * @returns {Record<string, any>}
 */
function deepFreeze(object) {
  for (const value of Object.values(object)) {
    if (typeof value === "object" && value !== null) {
      deepFreeze(value);
    }
  }
  return Object.freeze(object);
}
