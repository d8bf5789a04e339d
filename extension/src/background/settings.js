// @ts-check
/**
 * What the extension remembers: the relay port (options page only), the relay token (only in
 * chrome.storage.local, never sync: THREATS E6), a permanent authentication problem, whether
 * the app unpaired this browser, the browser instance id, the ports where the app proved
 * itself and the port it said it moves to (where to look for it when the set port has no app),
 * the downloads held for the app's word (id and start time: download_hold.js); and, for this
 * browser session only, the pairing request under way (its code, port and start)
 * and how it ended.
 */

import { DEFAULT_RELAY_PORT } from "../shared/protocol.js";

/** How many ports where the app proved itself are remembered, most recent first. */
export const MAX_KNOWN_PORTS = 4;
import { parsePort } from "../shared/validation.js";

/** chrome.storage.local keys. The options page writes PORT and TOKEN; nothing else writes them. */
export const Keys = Object.freeze({
  PORT: "relayPort",
  TOKEN: "relayToken",
  AUTH_PROBLEM: "authProblem",
  UNPAIRED: "unpaired",
  INSTANCE: "instanceId",
  KNOWN_PORTS: "knownPorts",
  ANNOUNCED_PORT: "announcedPort",
  HELD_DOWNLOADS: "heldDownloads",
});

/** chrome.storage.session keys (cleared when the browser quits; readable by our pages only). */
export const SessionKeys = Object.freeze({
  RELAY_STATE: "relayState",
  DEBUGGER: "debuggerTabs",
  PAIRING_SINCE: "pairingSince",
  PAIRING_CODE: "pairingCode",
  PAIRING_PORT: "pairingPort",
  PAIRING_ENDED: "pairingEnded",
  DECLINED_UNTIL: "declinedUntil",
});

/** @typedef {"declined" | "expired"} PairingEnd how the last pairing request ended without a credential */

/**
 * @typedef {object} RelaySettings
 * @property {number} port
 * @property {string | undefined} token
 * @property {string | undefined} authProblem why the app rejected us; set until re-paired
 * @property {boolean} unpaired the app revoked this browser's pairing
 * @property {number[]} knownPorts where the app proved itself, most recent first
 * @property {number | undefined} announcedPort where the app said it listens from its next start
 */

/**
 * @typedef {object} ConnectionSettings what the relay connection reads and writes (SettingsStore;
 *   node tests keep it in memory)
 * @property {() => Promise<RelaySettings>} load
 * @property {(token: string) => Promise<void>} saveToken
 * @property {() => Promise<void>} forgetToken
 * @property {(message: string | undefined) => Promise<void>} setAuthProblem
 * @property {(unpaired: boolean) => Promise<void>} setUnpaired
 * @property {() => Promise<number | undefined>} pairingSince
 * @property {(since: number | null) => Promise<void>} setPairingSince
 * @property {() => Promise<string | undefined>} pairingCode
 * @property {(code: string | null) => Promise<void>} setPairingCode
 * @property {() => Promise<number | undefined>} pairingPort
 * @property {(port: number | null) => Promise<void>} setPairingPort
 * @property {() => Promise<PairingEnd | undefined>} pairingEnded
 * @property {(ended: PairingEnd | null) => Promise<void>} setPairingEnded
 * @property {() => Promise<number | undefined>} declinedUntil
 * @property {(until: number | null) => Promise<void>} setDeclinedUntil
 * @property {(port: number) => Promise<void>} rememberPort
 * @property {(port: number) => Promise<void>} setAnnouncedPort
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
    const stored = await this.api.storage.local.get([
      Keys.PORT,
      Keys.TOKEN,
      Keys.AUTH_PROBLEM,
      Keys.UNPAIRED,
      Keys.KNOWN_PORTS,
      Keys.ANNOUNCED_PORT,
    ]);
    /** @type {unknown[]} */
    const known = Array.isArray(stored[Keys.KNOWN_PORTS]) ? stored[Keys.KNOWN_PORTS] : [];
    return {
      port: parsePort(stored[Keys.PORT]) ?? DEFAULT_RELAY_PORT,
      token: typeof stored[Keys.TOKEN] === "string" && stored[Keys.TOKEN] ? stored[Keys.TOKEN] : undefined,
      authProblem: typeof stored[Keys.AUTH_PROBLEM] === "string" ? stored[Keys.AUTH_PROBLEM] : undefined,
      unpaired: stored[Keys.UNPAIRED] === true,
      knownPorts: known
        .map((value) => parsePort(value))
        .filter(/** @returns {port is number} */ (port) => port !== null)
        .slice(0, MAX_KNOWN_PORTS),
      announcedPort: parsePort(stored[Keys.ANNOUNCED_PORT]) ?? undefined,
    };
  }

  /**
   * The app proved itself on this port: look there first when the set port has no app.
   * @param {number} port
   */
  async rememberPort(port) {
    const { knownPorts, announcedPort } = await this.load();
    const ports = [port, ...knownPorts.filter((known) => known !== port)].slice(0, MAX_KNOWN_PORTS);
    await this.api.storage.local.set({ [Keys.KNOWN_PORTS]: ports });
    if (announcedPort === port) {
      await this.api.storage.local.remove([Keys.ANNOUNCED_PORT]);
    }
  }

  /**
   * The app (authenticated) said it listens on this port from its next start.
   * @param {number} port
   */
  async setAnnouncedPort(port) {
    await this.api.storage.local.set({ [Keys.ANNOUNCED_PORT]: port });
  }

  /** The person set the port: where the app was before no longer counts. */
  async forgetPorts() {
    await this.api.storage.local.remove([Keys.KNOWN_PORTS, Keys.ANNOUNCED_PORT]);
    await this.setPairingPort(null);
    await this.setDeclinedUntil(null); // a "no" heard on the old port does not hold on this one
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

  /** @returns {Promise<number | undefined>} the port the pairing request under way asks */
  async pairingPort() {
    const stored = await this.api.storage.session.get([SessionKeys.PAIRING_PORT]);
    return parsePort(stored[SessionKeys.PAIRING_PORT]) ?? undefined;
  }

  /** @param {number | null} port */
  async setPairingPort(port) {
    await this.api.storage.session.set({ [SessionKeys.PAIRING_PORT]: port });
  }

  /** @returns {Promise<PairingEnd | undefined>} how the last request ended without a credential */
  async pairingEnded() {
    const stored = await this.api.storage.session.get([SessionKeys.PAIRING_ENDED]);
    const value = stored[SessionKeys.PAIRING_ENDED];
    return value === "declined" || value === "expired" ? value : undefined;
  }

  /** @param {PairingEnd | null} ended */
  async setPairingEnded(ended) {
    await this.api.storage.session.set({ [SessionKeys.PAIRING_ENDED]: ended });
  }

  /** @returns {Promise<number | undefined>} epoch ms before which the app will not ask again */
  async declinedUntil() {
    const stored = await this.api.storage.session.get([SessionKeys.DECLINED_UNTIL]);
    const value = stored[SessionKeys.DECLINED_UNTIL];
    return typeof value === "number" ? value : undefined;
  }

  /** @param {number | null} until */
  async setDeclinedUntil(until) {
    await this.api.storage.session.set({ [SessionKeys.DECLINED_UNTIL]: until });
  }
}
