// @ts-check
/**
 * Finding the app and being let in: which ports to look on, and the app's HTTP endpoints on a
 * port — the config endpoint (a credential, inside a pairing window), the pairing status
 * endpoint and the health probe that tells "nothing there" from "refused".
 *
 * Every request is a bounded CORS GET that carries this extension's Origin and nothing else;
 * no answer is trusted beyond its shape (the program on the port proved nothing yet). It keeps
 * no state and shows nothing: pairing_request.js decides what an answer means to the person.
 */

import {
  CONFIG_PATH,
  DEFAULT_RELAY_PORT,
  HEALTH_PATH,
  PAIRING_STATUS_PATH,
  PROTOCOL_VERSION,
  RELAY_HOST,
} from "../shared/protocol.js";
import { isPlainObject, parseToken } from "../shared/validation.js";

const FETCH_TIMEOUT_MS = 5_000;
const MAX_CONFIG_BODY = 16 * 1024;
/** When the app's "no" says nothing about its quiet time, assume its minute. */
const DEFAULT_QUIET_S = 60;
const MAX_QUIET_S = 120;

/**
 * @typedef {{pairing: "asking" | "allowed" | "declined" | "waiting", retryAfter: number}} PairingStatus
 */

/**
 * @typedef {{kind: "token", token: string} | {kind: "pairing_required"} | {kind: "unreachable"} |
 *   {kind: "rate_limited"} | {kind: "refused", detail: string}} ConfigAnswer
 */

/**
 * Where to look for the app, in order: the port set in the options, the port the app said it
 * moves to, the ports where it proved itself before, the default port.
 * @param {import("./settings.js").RelaySettings} settings
 * @returns {number[]}
 */
export function candidatePorts(settings) {
  const ports = [settings.port, settings.announcedPort, ...settings.knownPorts, DEFAULT_RELAY_PORT];
  return [.../** @type {Set<number>} */ (new Set(ports.filter((port) => port !== undefined)))];
}

export class RelayAdmission {
  /** @param {typeof fetch} fetchImpl */
  constructor(fetchImpl) {
    this.fetchImpl = fetchImpl;
  }

  /**
   * GET the config endpoint, with the pairing request's code, as a CORS request that carries
   * this extension's Origin (the app pairs by Origin and code). The app's 200 allows that
   * Origin; its 403 pairing_required does not, so the browser hides it: a failed request to a
   * server that is up means "not paired yet". (With a host permission for 127.0.0.1 Chrome would
   * read any answer, but it would also drop the Origin header from GET requests, and the app
   * could not tell who asks.)
   * @param {number} port
   * @param {string} code
   * @returns {Promise<ConfigAnswer>}
   */
  async fetchConfig(port, code) {
    /** @type {Response} */
    let response;
    /** @type {string} */
    let body;
    try {
      response = await this.#askApp(port, `${CONFIG_PATH}?code=${code}`);
      body = await response.text();
    } catch {
      return (await this.reachable(port)) ? { kind: "pairing_required" } : { kind: "unreachable" };
    }
    /** @type {unknown} */
    let json;
    try {
      json = body.length <= MAX_CONFIG_BODY ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const fields = isPlainObject(json) ? json : {};
    if (response.status === 200) {
      const token = parseToken(fields.token);
      if (fields.protocol !== PROTOCOL_VERSION) {
        return { kind: "refused", detail: `The program on port ${port} does not speak Tabrelay protocol ${PROTOCOL_VERSION}` };
      }
      return token === null ? { kind: "refused", detail: `The program on port ${port} sent no usable token` } : { kind: "token", token };
    }
    if (response.status === 403 && fields.error === "pairing_required") {
      return { kind: "pairing_required" };
    }
    if (response.status === 429) {
      return { kind: "rate_limited" };
    }
    return { kind: "refused", detail: `The program on port ${port} refused to pair (HTTP ${response.status})` };
  }

  /**
   * What became of the request, as the app tells this extension (a CORS answer for its
   * Origin). Undefined when the app does not say (an older app, or not the app): then the
   * extension asks for a while and stops. Never a credential: only an app's 200 on the config
   * endpoint gives one.
   * @param {number} port
   * @param {string} code
   * @returns {Promise<PairingStatus | undefined>}
   */
  async pairingStatus(port, code) {
    try {
      const response = await this.#askApp(port, `${PAIRING_STATUS_PATH}?code=${code}`);
      if (response.status !== 200) return undefined;
      const body = await response.text();
      const json = body.length <= MAX_CONFIG_BODY ? JSON.parse(body) : undefined;
      const fields = isPlainObject(json) ? json : {};
      const pairing = fields.pairing;
      if (pairing !== "asking" && pairing !== "allowed" && pairing !== "declined" && pairing !== "waiting") {
        return undefined;
      }
      const wait = fields.retry_after;
      // The app's quiet time after a "no" is a minute; a longer wait from whatever answers on
      // the port (it proved nothing yet) is cut to two, so a squatter cannot block pairing.
      const retryAfter = Number.isSafeInteger(wait) && Number(wait) > 0 ? Math.min(Number(wait), MAX_QUIET_S) : DEFAULT_QUIET_S;
      return { pairing, retryAfter };
    } catch {
      return undefined;
    }
  }

  /**
   * Whether anything answers HTTP on the port (tells "not running" from "refused"). A no-cors
   * request: the answer stays opaque, only its arrival counts.
   * @param {number} port
   */
  async reachable(port) {
    try {
      // no-cors requires the default redirect mode ("follow"); the answer is never read.
      await this.fetchImpl(`http://${RELAY_HOST}:${port}${HEALTH_PATH}`, {
        mode: "no-cors",
        cache: "no-store",
        credentials: "omit",
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A GET to the app on `port` as a CORS request that carries this extension's Origin, with
   * no cookies, no cache, no redirects, bounded in time.
   * @param {number} port
   * @param {string} pathAndQuery
   * @returns {Promise<Response>}
   */
  #askApp(port, pathAndQuery) {
    return this.fetchImpl(`http://${RELAY_HOST}:${port}${pathAndQuery}`, {
      method: "GET",
      mode: "cors",
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  }
}
