// @ts-check
/**
 * What the extension remembers: the relay port (options page only), the relay token (only in
 * chrome.storage.local, never sync: THREATS E6), a permanent authentication problem, whether
 * the app unpaired this browser, the browser instance id; and, for this browser session only,
 * when the current pairing request started.
 */

import { DEFAULT_RELAY_PORT } from "../shared/protocol.js";
import { parsePort } from "../shared/validation.js";

/** chrome.storage.local keys. The options page writes PORT and TOKEN; nothing else writes them. */
export const Keys = Object.freeze({
  PORT: "relayPort",
  TOKEN: "relayToken",
  AUTH_PROBLEM: "authProblem",
  UNPAIRED: "unpaired",
  INSTANCE: "instanceId",
});

/** chrome.storage.session keys (cleared when the browser quits; readable by our pages only). */
export const SessionKeys = Object.freeze({
  RELAY_STATE: "relayState",
  DEBUGGER: "debuggerTabs",
  PAIRING_SINCE: "pairingSince",
  PAIRING_CODE: "pairingCode",
});

/**
 * @typedef {object} RelaySettings
 * @property {number} port
 * @property {string | undefined} token
 * @property {string | undefined} authProblem why the app rejected us; set until re-paired
 * @property {boolean} unpaired the app revoked this browser's pairing
 */

export class SettingsStore {
  /** @type {string | undefined} */ #savedToken;

  /** @param {import("./chrome_api.js").ChromeApi} api */
  constructor(api) {
    this.api = api;
  }

  /**
   * Whether this store wrote that token (from the config endpoint) rather than the person (a
   * token pasted in the options page).
   * @param {string} token
   */
  wroteToken(token) {
    return token === this.#savedToken;
  }

  /** @returns {Promise<RelaySettings>} */
  async load() {
    const stored = await this.api.storage.local.get([Keys.PORT, Keys.TOKEN, Keys.AUTH_PROBLEM, Keys.UNPAIRED]);
    return {
      port: parsePort(stored[Keys.PORT]) ?? DEFAULT_RELAY_PORT,
      token: typeof stored[Keys.TOKEN] === "string" && stored[Keys.TOKEN] ? stored[Keys.TOKEN] : undefined,
      authProblem: typeof stored[Keys.AUTH_PROBLEM] === "string" ? stored[Keys.AUTH_PROBLEM] : undefined,
      unpaired: stored[Keys.UNPAIRED] === true,
    };
  }

  /** @param {string} token */
  async saveToken(token) {
    this.#savedToken = token;
    await this.api.storage.local.set({ [Keys.TOKEN]: token, [Keys.UNPAIRED]: false });
    await this.api.storage.local.remove([Keys.AUTH_PROBLEM]);
  }

  async forgetToken() {
    await this.api.storage.local.remove([Keys.TOKEN]);
  }

  /** @param {string | undefined} message */
  async setAuthProblem(message) {
    if (message === undefined) {
      await this.api.storage.local.remove([Keys.AUTH_PROBLEM]);
    } else {
      await this.api.storage.local.set({ [Keys.AUTH_PROBLEM]: message });
    }
  }

  /** @param {boolean} unpaired */
  async setUnpaired(unpaired) {
    await this.api.storage.local.set({ [Keys.UNPAIRED]: unpaired });
  }

  /** The browser profile's instance id for hello (random, made once). */
  async instanceId() {
    const stored = await this.api.storage.local.get([Keys.INSTANCE]);
    const existing = stored[Keys.INSTANCE];
    if (typeof existing === "string" && /^[A-Za-z0-9_-]{8,64}$/.test(existing)) {
      return existing;
    }
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    const id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    await this.api.storage.local.set({ [Keys.INSTANCE]: id });
    return id;
  }

  /** @returns {Promise<number | undefined>} when the app first answered pairing_required */
  async pairingSince() {
    const stored = await this.api.storage.session.get([SessionKeys.PAIRING_SINCE]);
    const value = stored[SessionKeys.PAIRING_SINCE];
    return typeof value === "number" ? value : undefined;
  }

  /** @param {number | null} since */
  async setPairingSince(since) {
    await this.api.storage.session.set({ [SessionKeys.PAIRING_SINCE]: since });
  }

  /** @returns {Promise<string | undefined>} the code of the pairing request under way */
  async pairingCode() {
    const stored = await this.api.storage.session.get([SessionKeys.PAIRING_CODE]);
    const value = stored[SessionKeys.PAIRING_CODE];
    return typeof value === "string" ? value : undefined;
  }

  /** @param {string | null} code */
  async setPairingCode(code) {
    await this.api.storage.session.set({ [SessionKeys.PAIRING_CODE]: code });
  }
}
