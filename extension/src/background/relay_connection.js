// @ts-check
/**
 * The connection to the Tabrelay app: the one place that holds the live session and runs the
 * loop that finds, pairs with and reconnects to the app. Its parts each own one thing:
 * relay_admission.js (which ports, the app's HTTP endpoints), pairing_request.js (a request
 * until the person answers), relay_session.js (one WebSocket: handshake, frames, keep-alive,
 * what its close means), reconnect_policy.js (what follows a close) and relay_state.js (what
 * the person is shown, and when the tabs are let go).
 *
 * Finding the app again by itself: when the port it knows has no app (nothing answers, or
 * what answers cannot prove itself or does not know this browser), it looks on the other
 * ports it has reason to: the one the app said it moves to, those where the app proved itself
 * before, and the default port — with the challenge–response only, so a program there learns
 * nothing and is told nothing. A credential the app replaced (4410, from an app that proved
 * itself, with the old credential if this browser was away) starts a pairing request by
 * itself: the person approves it in the tray.
 *
 * Timers, WebSocket, fetch and crypto are injected, so node tests drive every path;
 * chrome.alarms (service_worker.js) restarts the loop when the worker slept.
 */

import { Backoff } from "../shared/backoff.js";
import { PairingRequest } from "./pairing_request.js";
import { RelayAdmission, candidatePorts } from "./relay_admission.js";
import { NO_APP, RelaySession, closeMeaning } from "./relay_session.js";
import { RelayStatus } from "./relay_state.js";
import { ReconnectPolicy } from "./reconnect_policy.js";

/** @typedef {import("./relay_state.js").RelayState} RelayState the pages import it from here */
/** @typedef {import("./relay_session.js").Timers} Timers */
/** @typedef {import("./relay_session.js").SocketOutcome} SocketOutcome */

/** @typedef {import("./settings.js").ConnectionSettings} SettingsLike */

/** @type {Timers} */
const realTimers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id),
  setInterval: (fn, ms) => globalThis.setInterval(fn, ms),
  clearInterval: (id) => globalThis.clearInterval(id),
  now: () => Date.now(),
};

export class RelayConnection {
  #generation = 0;
  #running = false;
  /** The live session: the only one frames are sent on. @type {RelaySession | null} */
  #session = null;
  /** @type {(() => void) | null} */ #cutSleep = null;
  #status;
  #admission;
  #pairing;
  #policy;

  /**
   * @param {object} deps
   * @param {SettingsLike} deps.settings
   * @param {new (url: string) => WebSocket} deps.WebSocketImpl
   * @param {typeof fetch} deps.fetchImpl
   * @param {(state: RelayState) => void} deps.onState
   * @param {() => void} [deps.onRelease] no app drives this browser any more: let the tabs go
   * @param {(command: import("../shared/frames.js").CommandFrame) => Promise<unknown>} deps.onCommand
   * @param {() => Promise<import("../shared/frames.js").ExtensionFrame[]>} deps.announcement hello and status, sent right after auth.ok
   * @param {Timers} [deps.timers]
   * @param {Backoff} [deps.backoff]
   * @param {Crypto} [deps.crypto]
   */
  constructor({ settings, WebSocketImpl, fetchImpl, onState, onRelease, onCommand, announcement, timers, backoff, crypto }) {
    this.settings = settings;
    this.WebSocketImpl = WebSocketImpl;
    this.onCommand = onCommand;
    this.announcement = announcement;
    this.timers = timers ?? realTimers;
    this.backoff = backoff ?? new Backoff();
    this.crypto = crypto ?? globalThis.crypto;
    const now = this.timers.now;
    this.#status = new RelayStatus({ now, onState, onRelease: onRelease ?? (() => {}) });
    this.#admission = new RelayAdmission(fetchImpl);
    const parts = { settings, admission: this.#admission, status: this.#status, backoff: this.backoff };
    this.#pairing = new PairingRequest({ ...parts, now, crypto: this.crypto });
    this.#policy = new ReconnectPolicy({ ...parts, pairing: this.#pairing });
  }

  /** What the person is shown. @returns {RelayState} */
  get state() {
    return this.#status.state;
  }

  /** True once the app is verified and hello is sent: messages may flow. */
  get connected() {
    return this.#session?.ready ?? false;
  }

  /** The relay port of the current attempt. */
  get port() {
    return this.#status.port;
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
   * Send a frame to the app if connected.
   * @param {import("../shared/frames.js").ExtensionFrame} frame
   * @returns {boolean} whether it was sent
   */
  send(frame) {
    return this.#session?.send(frame) ?? false;
  }

  // --- the loop ---------------------------------------------------------------------------

  /** @param {boolean} refreshConfig */
  #launch(refreshConfig) {
    const generation = ++this.#generation;
    this.#session?.close(1000, "reconnecting");
    this.#session = null;
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
    const isCurrent = () => generation === this.#generation;
    let refresh = refreshConfig;
    while (isCurrent()) {
      const settings = await this.settings.load();
      if (!isCurrent()) return;
      this.#status.port = settings.port;
      if (settings.authProblem !== undefined) {
        this.#status.set("rejected", settings.authProblem);
        return;
      }
      /** @type {number | null} */
      let delay;
      const requesting = await this.#pairing.underWay();
      if (settings.token === undefined || refresh || requesting) {
        if (!refresh && !requesting && (await this.#pairing.showEnded(settings.unpaired))) {
          return;
        }
        refresh = false;
        delay = await this.#pairing.ask(settings.knownPorts[0] ?? settings.port, isCurrent);
      } else {
        delay = await this.#connectAnywhere(settings, settings.token, isCurrent);
      }
      if (delay === null || !isCurrent()) return;
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
   * Connect on the first port whose app proves it holds this browser's pairing. Each port
   * sees the challenge–response only; a port that has no app for this browser (nothing there,
   * a refusal, a program that cannot prove itself, an app that does not know this credential)
   * passes to the next. What follows the close is decided for the port that had an app, or
   * else for the set port.
   * @param {import("./settings.js").RelaySettings} settings
   * @param {string} token
   * @param {() => boolean} isCurrent
   * @returns {Promise<number | null>} delay before the next step, or null to stop
   */
  async #connectAnywhere(settings, token, isCurrent) {
    const ports = candidatePorts(settings);
    /** @type {{outcome: SocketOutcome, port: number} | undefined} */
    let first;
    for (const [index, port] of ports.entries()) {
      this.#status.port = port;
      const outcome = await this.#connectOnce(port, token, isCurrent, index > 0);
      if (!isCurrent()) return null;
      if (!NO_APP.has(closeMeaning(outcome))) {
        return this.#policy.afterClose(outcome, port, ports, isCurrent);
      }
      first ??= { outcome, port };
    }
    const { outcome, port } = /** @type {{outcome: SocketOutcome, port: number}} */ (first);
    this.#status.port = port;
    return this.#policy.afterClose(outcome, port, ports, isCurrent);
  }

  /**
   * One session from open to close, held as the live one meanwhile.
   * @param {number} port
   * @param {string} token
   * @param {() => boolean} isCurrent
   * @param {boolean} looking another port than the set one, where the app may be
   * @returns {Promise<SocketOutcome>}
   */
  async #connectOnce(port, token, isCurrent, looking) {
    if (!this.#status.showsProblem) {
      this.#status.set("connecting", `${looking ? "Looking for" : "Connecting to"} the Tabrelay app on port ${port}`);
    }
    const session = new RelaySession({
      port,
      token,
      WebSocketImpl: this.WebSocketImpl,
      timers: this.timers,
      crypto: this.crypto,
      hooks: {
        isCurrent,
        onVerified: () => {
          this.backoff.reset();
          // Found here: looked at first among the other ports next time.
          this.settings.rememberPort(port).catch((error) => console.warn("Tabrelay:", error));
        },
        announcement: this.announcement,
        onConnected: () => this.#status.set("connected", `Connected to the Tabrelay app on port ${port}`),
        onCommand: this.onCommand,
        onRelayPort: (next) => {
          this.settings.setAnnouncedPort(next).catch((error) => console.warn("Tabrelay:", error));
        },
      },
    });
    this.#session = session;
    try {
      return await session.closed;
    } finally {
      if (this.#session === session) this.#session = null;
    }
  }
}
