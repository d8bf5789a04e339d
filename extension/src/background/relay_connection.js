// @ts-check
/**
 * The connection to the Tabrelay app: pairing through the config endpoint, the WebSocket, the
 * challenge–response of docs/protocol.md, keepalive, and reconnecting with backoff.
 *
 * Nothing from the socket is obeyed until the app has proved it knows the relay token
 * (auth.ok); the token itself never goes on the wire. A close code is trusted only from an
 * authenticated app: a program squatting the port can make the extension wait, never make it
 * adopt a token or run a command (THREATS R5). An authentication rejection is permanent
 * until the person pairs again (or sets another port).
 *
 * Finding the app again by itself: when the port it knows has no app (nothing answers, or
 * what answers cannot prove itself or does not know this browser), it looks on the other
 * ports it has reason to: the one the app said it moves to, those where the app proved itself
 * before, and the default port — with the challenge–response only, so a program there learns
 * nothing and is told nothing. A credential the app replaced (4410, from an app that proved
 * itself, with the old credential if this browser was away) starts a pairing request by
 * itself: the person approves it in the tray. A request keeps its code until it ends, keeps
 * asking while the app says its question is open, and ends at a "no" (the app's quiet time
 * after it is respected even when the person asks again).
 *
 * When no app drives this browser any more (it quit, unpaired or
 * rejected it, or is not there) the connection says so once (onRelease), so the tabs are let
 * go; a drop the app did not mean keeps them while it reconnects. Timers, WebSocket, fetch and
 * crypto are injected, so node tests drive every path; chrome.alarms (service_worker.js)
 * restarts the loop when the worker slept.
 */

import { Backoff, askingPollDelay, pairingPollDelay } from "../shared/backoff.js";
import { CommandError } from "../shared/errors.js";
import { appProof, extensionProof, newNonce, newPairingCode, proofsMatch } from "../shared/handshake.js";
import {
  CONFIG_PATH,
  CloseCode,
  DEFAULT_RELAY_PORT,
  HANDSHAKE_TIMEOUT_MS,
  HEALTH_PATH,
  KEEPALIVE_INTERVAL_MS,
  MAX_FRAME_AFTER_AUTH,
  MAX_FRAME_BEFORE_AUTH,
  MessageType,
  PAIRING_STATUS_PATH,
  PROTOCOL_VERSION,
  RELAY_HOST,
  RELAY_PATH,
  SILENCE_TIMEOUT_MS,
} from "../shared/protocol.js";
import { isPlainObject, isValidNonce, parseCommand, parsePort, parseToken } from "../shared/validation.js";

const FETCH_TIMEOUT_MS = 5_000;
const MAX_CONFIG_BODY = 16 * 1024;
/** A window the person opened for this request: collect the credential at once. */
const ALLOWED_POLL_MS = 100;
/** When the app's "no" says nothing about its quiet time, assume its minute. */
const DEFAULT_QUIET_S = 60;
const MAX_QUIET_S = 120;

const DECLINED = "You declined pairing this browser in the Tabrelay app. Click Pair to ask again.";
const NOT_APPROVED = "The Tabrelay app has not approved this browser. Click Pair to ask again.";

/**
 * @typedef {"connecting" | "authenticating" | "connected" | "pairing" | "awaiting_approval" |
 *   "unreachable" | "refused" | "unverified" | "rejected" | "unpaired" | "declined"} RelayStateName
 */

/**
 * @typedef {object} RelayState
 * @property {RelayStateName} state
 * @property {string} detail a sentence for the popup
 * @property {number} port
 * @property {number} [retryAt] epoch ms of the next attempt, when one is scheduled
 */

/**
 * @typedef {object} Timers
 * @property {(fn: () => void, ms: number) => any} setTimeout
 * @property {(id: any) => void} clearTimeout
 * @property {(fn: () => void, ms: number) => any} setInterval
 * @property {(id: any) => void} clearInterval
 * @property {() => number} now
 */

/**
 * @typedef {object} SettingsLike
 * @property {() => Promise<import("./settings.js").RelaySettings>} load
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
 * @property {() => Promise<import("./settings.js").PairingEnd | undefined>} pairingEnded
 * @property {(ended: import("./settings.js").PairingEnd | null) => Promise<void>} setPairingEnded
 * @property {() => Promise<number | undefined>} declinedUntil
 * @property {(until: number | null) => Promise<void>} setDeclinedUntil
 * @property {(port: number) => Promise<void>} rememberPort
 * @property {(port: number) => Promise<void>} setAnnouncedPort
 */

/**
 * @typedef {{pairing: "asking" | "allowed" | "declined" | "waiting", retryAfter: number}} PairingStatus
 */

/**
 * @typedef {{kind: "token", token: string} | {kind: "pairing_required"} | {kind: "unreachable"} |
 *   {kind: "rate_limited"} | {kind: "refused", detail: string}} ConfigAnswer
 */

/**
 * @typedef {object} SocketOutcome
 * @property {boolean} opened the upgrade succeeded
 * @property {boolean} authenticated the app proved itself and hello was sent
 * @property {number} code the close code
 * @property {{kind: "unverified" | "timeout", detail: string} | undefined} failure
 */

/** @type {Timers} */
const realTimers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id),
  setInterval: (fn, ms) => globalThis.setInterval(fn, ms),
  clearInterval: (id) => globalThis.clearInterval(id),
  now: () => Date.now(),
};

/** States that say something is wrong; a new attempt does not hide them until it succeeds. */
const PROBLEM_STATES = new Set(["unreachable", "refused", "unverified"]);

/**
 * States in which no app drives this browser: the app is not running, refused or rejected it,
 * unpaired it, or it is waiting for the person to pair it (again). Only "connecting" (a drop
 * the app did not mean, or a worker that just started) keeps the tabs for a while.
 * @type {ReadonlySet<RelayStateName>}
 */
export const RELEASING_STATES = new Set([
  "unreachable",
  "refused",
  "unverified",
  "rejected",
  "unpaired",
  "declined",
  "pairing",
  "awaiting_approval",
]);

// RFC 6455 §7.4.1: the app stopped (its WebSocket server closes every connection with it).
const GOING_AWAY = 1001;

export class RelayConnection {
  #generation = 0;
  #running = false;
  /** @type {WebSocket | null} */ #socket = null;
  #ready = false;
  #port = 0;
  #lastHeard = 0;
  /** @type {(() => void) | null} */ #cutSleep = null;
  // Whether tabs may be held for an app: from the start (a worker takes over what its
  // predecessor attached) and after each connection, until a releasing state.
  #holding = true;
  /** @type {RelayState} */ state = { state: "connecting", detail: "Starting", port: 0 };

  /**
   * @param {object} deps
   * @param {SettingsLike} deps.settings
   * @param {new (url: string) => WebSocket} deps.WebSocketImpl
   * @param {typeof fetch} deps.fetchImpl
   * @param {(state: RelayState) => void} deps.onState
   * @param {() => void} [deps.onRelease] no app drives this browser any more: let the tabs go
   * @param {(command: {id: string, method: string, params: Record<string, unknown>}) => Promise<unknown>} deps.onCommand
   * @param {() => Promise<object[]>} deps.announcement hello and status, sent right after auth.ok
   * @param {Timers} [deps.timers]
   * @param {Backoff} [deps.backoff]
   * @param {Crypto} [deps.crypto]
   */
  constructor({ settings, WebSocketImpl, fetchImpl, onState, onRelease, onCommand, announcement, timers, backoff, crypto }) {
    this.settings = settings;
    this.WebSocketImpl = WebSocketImpl;
    this.fetchImpl = fetchImpl;
    this.onState = onState;
    this.onRelease = onRelease ?? (() => {});
    this.onCommand = onCommand;
    this.announcement = announcement;
    this.timers = timers ?? realTimers;
    this.backoff = backoff ?? new Backoff();
    this.crypto = crypto ?? globalThis.crypto;
  }

  /** True once the app is verified and hello is sent: messages may flow. */
  get connected() {
    return this.#ready;
  }

  /** The relay port of the current attempt. */
  get port() {
    return this.#port;
  }

  /** Start connecting, unless a loop already runs (worker start, alarms). */
  start() {
    if (!this.#running) {
      this.#launch(false);
    }
  }

  /** Drop the connection and start over now, e.g. when the port or token changed. */
  restart() {
    this.#launch(false);
  }

  /**
   * The person asked to pair (or pair again): clear every stop, ask the app for the config.
   * A request already under way keeps its code (the app's window shows that one) and asks
   * for another while; after a "no" it first waits out the app's quiet time.
   */
  async pair() {
    await this.settings.setAuthProblem(undefined);
    await this.settings.setUnpaired(false);
    await this.settings.setPairingEnded(null);
    await this.settings.setPairingSince(null);
    this.backoff.reset();
    this.#launch(true);
  }

  /**
   * Send a message to the app if connected.
   * @param {object} message
   * @returns {boolean} whether it was sent
   */
  send(message) {
    if (!this.#ready || this.#socket === null) {
      return false;
    }
    try {
      const frame = JSON.stringify(message);
      // Larger than the app takes: sending it would close the connection (1009), and with it
      // the guard on every tab. A page can make such an event (a huge console message).
      if (frame.length > MAX_FRAME_AFTER_AUTH) {
        console.warn("Tabrelay: an event too large for the app was left out");
        return false;
      }
      this.#socket.send(frame);
      return true;
    } catch {
      return false;
    }
  }

  // --- the loop ---------------------------------------------------------------------------

  /** @param {boolean} refreshConfig */
  #launch(refreshConfig) {
    const generation = ++this.#generation;
    this.#closeSocket(1000, "reconnecting");
    this.#cutSleep?.();
    this.#running = true;
    this.#loop(generation, refreshConfig)
      .catch((error) => console.error("Tabrelay: the relay connection loop failed", error))
      .finally(() => {
        if (generation === this.#generation) this.#running = false;
      });
  }

  /**
   * @param {number} generation
   * @param {boolean} refreshConfig
   */
  async #loop(generation, refreshConfig) {
    let refresh = refreshConfig;
    while (generation === this.#generation) {
      const settings = await this.settings.load();
      if (generation !== this.#generation) return;
      this.#port = settings.port;
      if (settings.authProblem !== undefined) {
        this.#setState("rejected", settings.authProblem);
        return;
      }
      /** @type {number | null} */
      let delay;
      const requesting = (await this.settings.pairingCode()) !== undefined;
      if (settings.token === undefined || refresh || requesting) {
        if (!refresh && !requesting) {
          const ended = settings.unpaired ? "unpaired" : await this.settings.pairingEnded();
          if (ended === "unpaired") {
            this.#setState("unpaired", "This browser was unpaired in the Tabrelay app. Click Pair to pair it again.");
            return;
          }
          if (ended !== undefined) {
            this.#setState(ended === "declined" ? "declined" : "unpaired", ended === "declined" ? DECLINED : NOT_APPROVED);
            return;
          }
        }
        refresh = false;
        delay = await this.#requestConfig(settings.knownPorts[0] ?? settings.port, generation);
      } else {
        delay = await this.#connectAnywhere(settings, settings.token, generation);
      }
      if (delay === null || generation !== this.#generation) return;
      if (delay > 0) {
        await this.#sleep(delay);
      }
    }
  }

  /** @param {number} ms */
  #sleep(ms) {
    return new Promise((resolve) => {
      const timer = this.timers.setTimeout(finish, ms);
      const cut = () => {
        this.timers.clearTimeout(timer);
        finish();
      };
      this.#cutSleep = cut;
      function finish() {
        resolve(undefined);
      }
    }).finally(() => {
      this.#cutSleep = null;
    });
  }

  /**
   * Where to look for the app, in order: the port set in the options, the port the app said it
   * moves to, the ports where it proved itself before, the default port.
   * @param {import("./settings.js").RelaySettings} settings
   * @returns {number[]}
   */
  static candidatePorts(settings) {
    const ports = [settings.port, settings.announcedPort, ...settings.knownPorts, DEFAULT_RELAY_PORT];
    return [.../** @type {Set<number>} */ (new Set(ports.filter((port) => port !== undefined)))];
  }

  /**
   * Connect on the first port whose app proves it holds this browser's pairing. Each port
   * sees the challenge–response only; a port that has no app for this browser (nothing there,
   * a refusal, a program that cannot prove itself, an app that does not know this credential)
   * passes to the next. What follows the close is decided for the port that had an app, or
   * else for the set port.
   * @param {import("./settings.js").RelaySettings} settings
   * @param {string} token
   * @param {number} generation
   * @returns {Promise<number | null>} delay before the next step, or null to stop
   */
  async #connectAnywhere(settings, token, generation) {
    const ports = RelayConnection.candidatePorts(settings);
    /** @type {{outcome: SocketOutcome, port: number} | undefined} */
    let first;
    for (const [index, port] of ports.entries()) {
      this.#port = port;
      const outcome = await this.#connectOnce(port, token, generation, index > 0);
      if (generation !== this.#generation) return null;
      if (!noAppFor(outcome)) {
        return this.#afterClose(outcome, port, generation, ports);
      }
      first ??= { outcome, port };
    }
    const { outcome, port } = /** @type {{outcome: SocketOutcome, port: number}} */ (first);
    this.#port = port;
    return this.#afterClose(outcome, port, generation, ports);
  }

  /**
   * Pairing: ask the config endpoint for a credential, with the code of the request under way
   * (or of a new one), on the port that request asks.
   * @param {number} port for a new request
   * @param {number} generation
   * @returns {Promise<number | null>} delay before the next step, or null to stop
   */
  async #requestConfig(port, generation) {
    const now = this.timers.now();
    // One code for the whole request, across polls, clicks and worker restarts: the app's
    // dialog shows the code of the request it asks about.
    let code = await this.settings.pairingCode();
    let since = await this.settings.pairingSince();
    if (code === undefined) {
      code = newPairingCode(this.crypto);
      since = undefined;
      await this.settings.setPairingCode(code);
      await this.settings.setPairingSince(null);
      await this.settings.setPairingPort(port);
      this.#port = port;
      this.#setState(PROBLEM_STATES.has(this.state.state) ? this.state.state : "pairing", this.#problemOr("Asking the Tabrelay app to pair"));
    } else {
      port = (await this.settings.pairingPort()) ?? port;
      this.#port = port;
    }
    const quietUntil = await this.settings.declinedUntil();
    if (quietUntil !== undefined && now < quietUntil) {
      // The person said no a moment ago; the app would not ask them again before this.
      const wait = quietUntil - now;
      this.#setState("pairing", "You declined this browser in the Tabrelay app a moment ago; Tabrelay waits until it may ask you again", wait);
      return wait;
    }
    const answer = await this.#fetchConfig(port, code);
    if (generation !== this.#generation) return null;
    switch (answer.kind) {
      case "token":
        await this.settings.saveToken(answer.token);
        await this.#endRequest(null);
        await this.settings.setDeclinedUntil(null);
        this.backoff.reset();
        return 0;
      case "pairing_required": {
        const status = await this.#pairingStatus(port, code);
        if (generation !== this.#generation) return null;
        if (status?.pairing === "declined") {
          await this.settings.setDeclinedUntil(this.timers.now() + status.retryAfter * 1000);
          await this.#endRequest("declined");
          this.#setState("declined", DECLINED);
          return null;
        }
        const started = since ?? now;
        if (since === undefined) await this.settings.setPairingSince(started);
        if (status?.pairing === "allowed") {
          return ALLOWED_POLL_MS;
        }
        const asking = status?.pairing === "asking";
        const delay = asking ? askingPollDelay(now - started) : pairingPollDelay(now - started);
        if (delay === null) {
          await this.#endRequest("expired");
          this.#setState("unpaired", NOT_APPROVED);
          return null;
        }
        this.#setState(
          "awaiting_approval",
          asking
            ? `The Tabrelay app is asking you now: allow this browser there if its window shows the code ${code}`
            : `Allow it in the Tabrelay app if its dialog shows the code ${code}`,
          delay,
        );
        return delay;
      }
      case "unreachable": {
        const delay = this.backoff.next();
        this.#setState("unreachable", `The Tabrelay app is not running on port ${port}`, delay);
        return delay;
      }
      case "rate_limited": {
        const delay = this.backoff.atMaximum();
        this.#setState("refused", "The Tabrelay app asks to wait (too many attempts)", delay);
        return delay;
      }
      default: {
        const delay = this.backoff.next();
        this.#setState("refused", answer.detail, delay);
        return delay;
      }
    }
  }

  /**
   * The pairing request is over: forget its code, start and port; remember how it ended.
   * @param {import("./settings.js").PairingEnd | null} ended
   */
  async #endRequest(ended) {
    await this.settings.setPairingCode(null);
    await this.settings.setPairingSince(null);
    await this.settings.setPairingPort(null);
    await this.settings.setPairingEnded(ended);
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
  async #pairingStatus(port, code) {
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

  /**
   * GET the config endpoint, with the pairing request's code, as a CORS request that carries
   * this extension's Origin (the app pairs by Origin and code). The app's 200 allows that Origin; its 403 pairing_required does not, so
   * the browser hides it: a failed request to a server that is up means "not paired yet".
   * (With a host permission for 127.0.0.1 Chrome would read any answer, but it would also drop
   * the Origin header from GET requests, and the app could not tell who asks.)
   * @param {number} port
   * @param {string} code
   * @returns {Promise<ConfigAnswer>}
   */
  async #fetchConfig(port, code) {
    /** @type {Response} */
    let response;
    /** @type {string} */
    let body;
    try {
      response = await this.#askApp(port, `${CONFIG_PATH}?code=${code}`);
      body = await response.text();
    } catch {
      return (await this.#reachable(port)) ? { kind: "pairing_required" } : { kind: "unreachable" };
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
   * Whether anything answers HTTP on the port (tells "not running" from "refused"). A no-cors
   * request: the answer stays opaque, only its arrival counts.
   * @param {number} port
   */
  async #reachable(port) {
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
   * One WebSocket from open to close.
   * @param {number} port
   * @param {string} token
   * @param {number} generation
   * @param {boolean} looking another port than the set one, where the app may be
   * @returns {Promise<SocketOutcome>}
   */
  #connectOnce(port, token, generation, looking) {
    if (!PROBLEM_STATES.has(this.state.state)) {
      this.#setState("connecting", `${looking ? "Looking for" : "Connecting to"} the Tabrelay app on port ${port}`);
    }
    return new Promise((resolve) => {
      const socket = new this.WebSocketImpl(`ws://${RELAY_HOST}:${port}${RELAY_PATH}`);
      this.#socket = socket;
      /** @type {"opening" | "challenge" | "proof" | "announcing" | "connected" | "failed"} */
      let phase = "opening";
      let opened = false;
      /** @type {SocketOutcome["failure"]} */
      let failure;
      let expectedAppProof = "";
      /** @type {any} */
      let keepalive = null;
      let handshake = Promise.resolve();

      /**
       * @param {"unverified" | "timeout"} kind
       * @param {string} detail
       */
      const fail = (kind, detail) => {
        if (phase === "failed") return;
        phase = "failed";
        failure = { kind, detail };
        try {
          socket.close(1000, kind === "unverified" ? "not verified" : "timeout");
        } catch {
          // Closing a socket that never opened throws in some browsers; onclose still follows.
        }
      };
      const handshakeTimer = this.timers.setTimeout(
        () => fail("timeout", "the handshake did not finish in time"),
        HANDSHAKE_TIMEOUT_MS,
      );

      socket.onopen = () => {
        opened = true;
        if (phase === "opening") phase = "challenge";
        this.#lastHeard = this.timers.now();
      };
      socket.onerror = () => {
        // onclose follows with the details that exist.
      };
      socket.onmessage = (event) => {
        this.#lastHeard = this.timers.now();
        if (typeof event.data !== "string") {
          if (phase === "connected") {
            socket.close(1003, "binary frames are not supported");
          } else {
            fail("unverified", "it sent a binary frame");
          }
          return;
        }
        const data = event.data;
        if (phase === "connected") {
          this.#handleFrame(socket, data);
          return;
        }
        // Handshake frames are handled one after the other (the proofs are async).
        handshake = handshake.then(async () => {
          if (phase === "failed") return;
          if (phase !== "challenge" && phase !== "proof") {
            fail("unverified", "it sent a message before the handshake finished");
            return;
          }
          if (data.length > MAX_FRAME_BEFORE_AUTH) {
            fail("unverified", "it sent an oversized frame before authenticating");
            return;
          }
          /** @type {unknown} */
          let message;
          try {
            message = JSON.parse(data);
          } catch {
            fail("unverified", "it sent something that is not JSON");
            return;
          }
          const fields = isPlainObject(message) ? message : {};
          if (phase === "challenge") {
            if (fields.type !== MessageType.AUTH_CHALLENGE || !isValidNonce(fields.nonce)) {
              fail("unverified", "it did not start the Tabrelay handshake");
              return;
            }
            if (fields.protocol !== PROTOCOL_VERSION) {
              fail("unverified", `it speaks protocol ${String(fields.protocol).slice(0, 10)}, not ${PROTOCOL_VERSION}`);
              return;
            }
            const binding = { port, appNonce: fields.nonce, extensionNonce: newNonce(this.crypto) };
            const proof = await extensionProof(token, binding, this.crypto.subtle);
            expectedAppProof = await appProof(token, binding, this.crypto.subtle);
            if (phase !== "challenge") return;
            phase = "proof";
            socket.send(JSON.stringify({ type: MessageType.AUTH_RESPONSE, nonce: binding.extensionNonce, proof }));
            return;
          }
          if (fields.type !== MessageType.AUTH_OK || !proofsMatch(expectedAppProof, fields.proof)) {
            fail("unverified", "it could not prove it knows the relay token");
            return;
          }
          // Verified: from here on the app is trusted.
          phase = "announcing";
          this.timers.clearTimeout(handshakeTimer);
          this.backoff.reset();
          // Found here: looked at first among the other ports next time.
          this.settings.rememberPort(port).catch((error) => console.warn("Tabrelay:", error));
          const messages = await this.announcement();
          if (phase !== "announcing" || generation !== this.#generation) return;
          for (const announced of messages) {
            socket.send(JSON.stringify(announced));
          }
          phase = "connected";
          this.#ready = true;
          this.#setState("connected", `Connected to the Tabrelay app on port ${port}`);
          keepalive = this.timers.setInterval(() => this.#keepalive(socket), KEEPALIVE_INTERVAL_MS);
        });
      };
      socket.onclose = (event) => {
        const authenticated = phase === "connected" || phase === "announcing";
        phase = "failed";
        this.timers.clearTimeout(handshakeTimer);
        if (keepalive !== null) this.timers.clearInterval(keepalive);
        if (this.#socket === socket) {
          this.#socket = null;
          this.#ready = false;
        }
        resolve({ opened, authenticated, code: event.code, failure });
      };
    });
  }

  /**
   * Keep the worker alive and notice a dead connection: the extension's own message every 20 s
   * is what Chrome counts as activity (messages from the app do not).
   * @param {WebSocket} socket
   */
  #keepalive(socket) {
    if (this.timers.now() - this.#lastHeard > SILENCE_TIMEOUT_MS) {
      socket.close(1000, "the app stopped answering");
      return;
    }
    try {
      socket.send(JSON.stringify({ type: MessageType.PING }));
    } catch {
      // The close event follows.
    }
  }

  /**
   * A frame from the authenticated app.
   * @param {WebSocket} socket
   * @param {string} data
   */
  #handleFrame(socket, data) {
    if (data.length > MAX_FRAME_AFTER_AUTH) {
      socket.close(1009, "frame too big");
      return;
    }
    /** @type {unknown} */
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      console.warn("Tabrelay: the app sent a frame that is not JSON; ignored");
      return;
    }
    if (!isPlainObject(message)) {
      return;
    }
    if ("id" in message) {
      this.#runCommand(message);
    } else if (message.type === MessageType.PING) {
      this.send({ type: MessageType.PONG });
    } else if (message.type === MessageType.ERROR) {
      console.warn("Tabrelay: the app rejected a message:", String(message.code).slice(0, 100));
    } else if (message.type === MessageType.RELAY_PORT) {
      // The app (it proved itself) will listen there from its next start: look there too.
      const port = parsePort(message.port);
      if (port !== null) {
        this.settings.setAnnouncedPort(port).catch((error) => console.warn("Tabrelay:", error));
      }
    }
  }

  /** @param {Record<string, unknown>} message */
  #runCommand(message) {
    /** @type {{id: string, method: string, params: Record<string, unknown>}} */
    let command;
    try {
      command = parseCommand(message);
    } catch (error) {
      const id = /** @type {{id?: string}} */ (error).id;
      if (id !== undefined && error instanceof CommandError) {
        this.send({ id, error: error.message, code: error.code });
      }
      return;
    }
    Promise.resolve()
      .then(() => this.onCommand(command))
      .then(
        (result) => {
          this.send({ id: command.id, result: result ?? {} });
        },
        (error) => {
          const reply = { id: command.id, error: error instanceof Error ? error.message : String(error) };
          if (error instanceof CommandError && error.code !== undefined) {
            Object.assign(reply, { code: error.code });
          }
          this.send(reply);
        },
      );
  }

  /**
   * Decide what follows a closed socket.
   * @param {SocketOutcome} outcome
   * @param {number} port
   * @param {number} generation
   * @param {number[]} looked every port the app was looked for on
   * @returns {Promise<number | null>}
   */
  async #afterClose({ opened, authenticated, code, failure }, port, generation, looked) {
    if (generation !== this.#generation) return null;
    if (failure?.kind === "unverified") {
      const delay = this.backoff.next();
      this.#setState(
        "unverified",
        `The program on port ${port} is not the Tabrelay app (${failure.detail}); Tabrelay obeys nothing from it`,
        delay,
      );
      return delay;
    }
    if (!opened) {
      const reachable = await this.#reachable(port);
      if (generation !== this.#generation) return null;
      const delay = this.backoff.next();
      if (reachable) {
        this.#setState(
          "refused",
          "The Tabrelay app refused this browser (it may have been unpaired, or it asks to wait). Click Pair to pair again.",
          delay,
        );
      } else {
        this.#setState("unreachable", `The Tabrelay app is not running: Tabrelay looked for it on ${portsText(looked)}`, delay);
      }
      return delay;
    }
    if (authenticated) {
      // Only an app that proved itself may make the extension fetch a new token or unpair.
      switch (code) {
        case CloseCode.TOKEN_ROTATED:
          // The old credential is dead: ask to pair again, here (the person approves in the
          // app). A new request: whatever an earlier one left is over.
          await this.settings.forgetToken();
          await this.#endRequest(null);
          this.#setState("pairing", "The Tabrelay app replaced its credentials; asking to pair again");
          return this.#requestConfig(port, generation);
        case CloseCode.NOT_PAIRED:
          await this.settings.forgetToken();
          await this.settings.setUnpaired(true);
          this.#setState("unpaired", "This browser was unpaired in the Tabrelay app. Click Pair to pair it again.");
          return null;
        case CloseCode.RATE_LIMITED: {
          const delay = this.backoff.atMaximum();
          this.#setState("connecting", "The Tabrelay app asks to wait before reconnecting", delay);
          return delay;
        }
        case GOING_AWAY: {
          const delay = this.backoff.next();
          this.#setState("unreachable", "The Tabrelay app quit; Tabrelay connects again when it runs", delay);
          return delay;
        }
        default: {
          const delay = this.backoff.next();
          this.#setState("connecting", `The connection to the Tabrelay app closed (${code}); reconnecting`, delay);
          return delay;
        }
      }
    }
    if (code === CloseCode.AUTH_FAILED) {
      // Permanent until the person clicks Pair. Nothing is fetched here: whoever sits on the
      // port can close with 4401 and serve a credential of its own, and asking the real app
      // would spend a pairing window the person opened without using it.
      const message =
        "The Tabrelay app no longer accepts this browser's credential (it was unpaired, or the " +
        "app's data was reset). Click Pair to pair again.";
      await this.settings.setAuthProblem(message);
      this.#setState("rejected", message);
      return null;
    }
    if (code === CloseCode.RATE_LIMITED) {
      const delay = this.backoff.atMaximum();
      this.#setState("refused", "The Tabrelay app asks to wait (too many attempts)", delay);
      return delay;
    }
    if (code === CloseCode.SECRETS_UNAVAILABLE) {
      // The credential is kept: the app cannot check it until the person unlocks its keychain.
      const delay = this.backoff.next();
      this.#setState(
        "refused",
        "The Tabrelay app cannot read its credentials (its keychain is locked): unlock it in the app. Retrying",
        delay,
      );
      return delay;
    }
    const delay = this.backoff.next();
    if (failure?.kind === "timeout") {
      this.#setState("unverified", `The program on port ${port} did not finish the Tabrelay handshake`, delay);
    } else {
      this.#setState("connecting", `The Tabrelay app closed the connection (${code}); retrying`, delay);
    }
    return delay;
  }

  /**
   * @param {number} code
   * @param {string} reason
   */
  #closeSocket(code, reason) {
    const socket = this.#socket;
    this.#socket = null;
    this.#ready = false;
    if (socket !== null) {
      try {
        socket.close(code, reason);
      } catch {
        // Already closing.
      }
    }
  }

  /** @param {string} fallback */
  #problemOr(fallback) {
    return PROBLEM_STATES.has(this.state.state) ? this.state.detail : fallback;
  }

  /**
   * @param {RelayStateName} state
   * @param {string} detail
   * @param {number} [retryIn] ms until the next attempt
   */
  #setState(state, detail, retryIn) {
    /** @type {RelayState} */
    const next = { state, detail, port: this.#port };
    if (retryIn !== undefined) {
      next.retryAt = this.timers.now() + retryIn;
    }
    this.state = next;
    this.onState(next);
    if (state === "connected") {
      this.#holding = true;
    } else if (this.#holding && RELEASING_STATES.has(state)) {
      this.#holding = false;
      this.onRelease();
    }
  }
}

/**
 * Whether a closed socket says there is no app for this browser on its port: nothing there,
 * the upgrade refused, a program that could not prove itself, or an app that does not know
 * this credential. A locked keychain or a "wait" is an app that is there.
 * @param {SocketOutcome} outcome
 */
function noAppFor({ opened, authenticated, code, failure }) {
  if (authenticated) return false;
  if (!opened || failure !== undefined) return true;
  return code !== CloseCode.SECRETS_UNAVAILABLE && code !== CloseCode.RATE_LIMITED;
}

/** @param {number[]} ports */
function portsText(ports) {
  if (ports.length === 1) return `port ${ports[0]}`;
  return `ports ${ports.slice(0, -1).join(", ")} and ${ports[ports.length - 1]}`;
}
