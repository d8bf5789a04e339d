// @ts-check
/**
 * One WebSocket to the app, from open to close: the challenge–response of docs/protocol.md,
 * the announcement, the frames of an authenticated app (commands, pings, errors, relay.port),
 * the keep-alive ping, the frame caps — and the table of what its close means (closeMeaning).
 *
 * Nothing from the socket is obeyed until the app has proved it knows the relay token
 * (auth.ok); the token itself never goes on the wire. A command is answered on the session it
 * came on, or not at all: a newer connection never gets an answer the app there did not ask
 * for. It does not decide what follows a close (reconnect_policy.js) nor where to connect
 * (relay_connection.js, which holds the live session).
 */

import { WithTab, authResponseFrame, failureFrame, pingFrame, pongFrame, resultFrame } from "../shared/frames.js";
import { CommandError } from "../shared/errors.js";
import { appProof, extensionProof, newNonce, proofsMatch } from "../shared/handshake.js";
import {
  CloseCode,
  HANDSHAKE_TIMEOUT_MS,
  KEEPALIVE_INTERVAL_MS,
  MAX_FRAME_AFTER_AUTH,
  MAX_FRAME_BEFORE_AUTH,
  exceedsFrameLimit,
  PROTOCOL_VERSION,
  RELAY_HOST,
  RELAY_PATH,
  SILENCE_TIMEOUT_MS,
} from "../shared/protocol.js";
import { parseAppFrame } from "../shared/validation.js";

// RFC 6455 §7.4.1: the app stopped (its WebSocket server closes every connection with it).
const GOING_AWAY = 1001;

/**
 * @typedef {object} Timers
 * @property {(fn: () => void, ms: number) => any} setTimeout
 * @property {(id: any) => void} clearTimeout
 * @property {(fn: () => void, ms: number) => any} setInterval
 * @property {(id: any) => void} clearInterval
 * @property {() => number} now
 */

/**
 * @typedef {object} SocketOutcome
 * @property {boolean} opened the upgrade succeeded
 * @property {boolean} authenticated the app proved itself and hello was sent
 * @property {number} code the close code
 * @property {{kind: "unverified" | "timeout", detail: string} | undefined} failure
 */

/**
 * What a closed session says, before anyone decides what follows. From an app that proved
 * itself: `rotated` (4410), `unpaired` (4403), `wait` (4429), `app_quit` (1001), `dropped`
 * (anything else). From a program that proved nothing (yet): `unverified` (it could not
 * prove itself), `no_answer` (the upgrade failed), `rejected` (4401), `too_many_attempts`
 * (4429), `secrets_locked` (4503), `handshake_timeout`, `closed` (anything else).
 * @typedef {"rotated" | "unpaired" | "wait" | "app_quit" | "dropped" | "unverified" | "no_answer" |
 *   "rejected" | "too_many_attempts" | "secrets_locked" | "handshake_timeout" | "closed"} CloseMeaning
 */

/**
 * The close-code table: only an app that proved itself may rotate, unpair or quit.
 * @param {SocketOutcome} outcome
 * @returns {CloseMeaning}
 */
export function closeMeaning({ opened, authenticated, code, failure }) {
  if (failure?.kind === "unverified") return "unverified";
  if (!opened) return "no_answer";
  if (authenticated) {
    switch (code) {
      case CloseCode.TOKEN_ROTATED:
        return "rotated";
      case CloseCode.NOT_PAIRED:
        return "unpaired";
      case CloseCode.RATE_LIMITED:
        return "wait";
      case GOING_AWAY:
        return "app_quit";
      default:
        return "dropped";
    }
  }
  switch (code) {
    case CloseCode.AUTH_FAILED:
      return "rejected";
    case CloseCode.RATE_LIMITED:
      return "too_many_attempts";
    case CloseCode.SECRETS_UNAVAILABLE:
      return "secrets_locked";
    default:
      return failure?.kind === "timeout" ? "handshake_timeout" : "closed";
  }
}

/**
 * Meanings that say there is no app for this browser on the port: nothing there, the upgrade
 * refused, a program that could not prove itself, or an app that does not know this
 * credential. A locked keychain or a "wait" is an app that is there.
 * @type {ReadonlySet<CloseMeaning>}
 */
export const NO_APP = new Set(["unverified", "no_answer", "rejected", "handshake_timeout", "closed"]);

/**
 * @typedef {object} SessionHooks what the session asks of its owner
 * @property {() => boolean} isCurrent false once the connection started over: stop there
 * @property {() => void} onVerified the app proved itself (before hello)
 * @property {() => Promise<import("../shared/frames.js").ExtensionFrame[]>} announcement hello and status
 * @property {() => void} onConnected hello is sent: frames may flow
 * @property {(command: import("../shared/frames.js").CommandFrame) => Promise<unknown>} onCommand
 * @property {(port: number) => void} onRelayPort the app moves to this port at its next start
 */

export class RelaySession {
  /** @type {"opening" | "challenge" | "proof" | "announcing" | "connected" | "failed"} */
  #phase = "opening";
  #opened = false;
  #ready = false;
  /** @type {SocketOutcome["failure"]} */ #failure;
  #expectedAppProof = "";
  #lastHeard = 0;
  /** @type {any} */ #keepalive = null;
  /** @type {any} */ #handshakeTimer;
  #handshake = Promise.resolve();
  /** @type {WebSocket} */ #socket;

  /**
   * Open the WebSocket on `port` and start the handshake.
   * @param {object} deps
   * @param {number} deps.port
   * @param {string} deps.token the credential; it never goes on the wire
   * @param {new (url: string) => WebSocket} deps.WebSocketImpl
   * @param {Timers} deps.timers
   * @param {Crypto} deps.crypto
   * @param {SessionHooks} deps.hooks
   */
  constructor({ port, token, WebSocketImpl, timers, crypto, hooks }) {
    this.port = port;
    this.token = token;
    this.timers = timers;
    this.crypto = crypto;
    this.hooks = hooks;
    const socket = new WebSocketImpl(`ws://${RELAY_HOST}:${port}${RELAY_PATH}`);
    this.#socket = socket;
    /** @type {Promise<SocketOutcome>} resolves when the socket has closed */
    this.closed = new Promise((resolve) => {
      this.#handshakeTimer = timers.setTimeout(() => this.#fail("timeout", "the handshake did not finish in time"), HANDSHAKE_TIMEOUT_MS);
      socket.onopen = () => {
        this.#opened = true;
        if (this.#phase === "opening") this.#phase = "challenge";
        this.#lastHeard = timers.now();
      };
      socket.onerror = () => {
        // onclose follows with the details that exist.
      };
      socket.onmessage = (event) => this.#receive(event.data);
      socket.onclose = (event) => {
        const authenticated = this.#phase === "connected" || this.#phase === "announcing";
        this.#phase = "failed";
        this.#ready = false;
        timers.clearTimeout(this.#handshakeTimer);
        if (this.#keepalive !== null) timers.clearInterval(this.#keepalive);
        resolve({ opened: this.#opened, authenticated, code: event.code, failure: this.#failure });
      };
    });
  }

  /** True once the app is verified and hello is sent, until the session closes. */
  get ready() {
    return this.#ready;
  }

  /**
   * Send a frame to the app if the session is ready.
   * @param {import("../shared/frames.js").ExtensionFrame} frame
   * @returns {boolean} whether it was sent
   */
  send(frame) {
    if (!this.#ready) {
      return false;
    }
    try {
      const data = JSON.stringify(frame);
      // Larger than the app takes: sending it would close the connection (1009), and with it
      // the guard on every tab. A page can make such an event (a huge console message).
      if (exceedsFrameLimit(data, MAX_FRAME_AFTER_AUTH)) {
        console.warn("Tabrelay: an event too large for the app was left out");
        return false;
      }
      this.#socket.send(data);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Close the session now; nothing more is sent on it (its close event follows).
   * @param {number} code
   * @param {string} reason
   */
  close(code, reason) {
    this.#ready = false;
    try {
      this.#socket.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  /**
   * @param {"unverified" | "timeout"} kind
   * @param {string} detail
   */
  #fail(kind, detail) {
    if (this.#phase === "failed") return;
    this.#phase = "failed";
    this.#failure = { kind, detail };
    try {
      this.#socket.close(1000, kind === "unverified" ? "not verified" : "timeout");
    } catch {
      // Closing a socket that never opened throws in some browsers; onclose still follows.
    }
  }

  /** @param {unknown} data */
  #receive(data) {
    this.#lastHeard = this.timers.now();
    if (typeof data !== "string") {
      if (this.#phase === "connected") {
        this.#socket.close(1003, "binary frames are not supported");
      } else {
        this.#fail("unverified", "it sent a binary frame");
      }
      return;
    }
    if (this.#phase === "connected") {
      this.#dispatch(data);
      return;
    }
    // Handshake frames are handled one after the other (the proofs are async).
    this.#handshake = this.#handshake.then(() => this.#handshakeStep(data));
  }

  /** @param {string} data */
  async #handshakeStep(data) {
    const phase = this.#phase;
    if (phase === "failed") return;
    if (phase !== "challenge" && phase !== "proof") {
      this.#fail("unverified", "it sent a message before the handshake finished");
      return;
    }
    if (exceedsFrameLimit(data, MAX_FRAME_BEFORE_AUTH)) {
      this.#fail("unverified", "it sent an oversized frame before authenticating");
      return;
    }
    /** @type {unknown} */
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      this.#fail("unverified", "it sent something that is not JSON");
      return;
    }
    /** @type {import("../shared/frames.js").AppFrame | null} */
    let received;
    try {
      received = parseAppFrame(message);
    } catch {
      received = null; // a command: never before the handshake
    }
    if (phase === "challenge") {
      if (received?.kind !== "auth.challenge") {
        this.#fail("unverified", "it did not start the Tabrelay handshake");
        return;
      }
      const { protocol, nonce } = received.frame;
      if (protocol !== PROTOCOL_VERSION) {
        this.#fail("unverified", `it speaks protocol ${String(protocol).slice(0, 10)}, not ${PROTOCOL_VERSION}`);
        return;
      }
      const binding = { port: this.port, appNonce: nonce, extensionNonce: newNonce(this.crypto) };
      const proof = await extensionProof(this.token, binding, this.crypto.subtle);
      this.#expectedAppProof = await appProof(this.token, binding, this.crypto.subtle);
      if (this.#phase !== "challenge") return;
      this.#phase = "proof";
      this.#socket.send(JSON.stringify(authResponseFrame(binding.extensionNonce, proof)));
      return;
    }
    if (received?.kind !== "auth.ok" || !proofsMatch(this.#expectedAppProof, received.frame.proof)) {
      this.#fail("unverified", "it could not prove it knows the relay token");
      return;
    }
    // Verified: from here on the app is trusted.
    this.#phase = "announcing";
    this.timers.clearTimeout(this.#handshakeTimer);
    this.hooks.onVerified();
    const frames = await this.hooks.announcement();
    if (this.#phase !== "announcing" || !this.hooks.isCurrent()) return;
    for (const frame of frames) {
      this.#socket.send(JSON.stringify(frame));
    }
    this.#phase = "connected";
    this.#ready = true;
    this.hooks.onConnected();
    this.#keepalive = this.timers.setInterval(() => this.#keepAlive(), KEEPALIVE_INTERVAL_MS);
  }

  /**
   * Keep the worker alive and notice a dead connection: the extension's own message every 20 s
   * is what Chrome counts as activity (messages from the app do not).
   */
  #keepAlive() {
    if (this.timers.now() - this.#lastHeard > SILENCE_TIMEOUT_MS) {
      this.#socket.close(1000, "the app stopped answering");
      return;
    }
    try {
      this.#socket.send(JSON.stringify(pingFrame()));
    } catch {
      // The close event follows.
    }
  }

  /**
   * A frame from the authenticated app.
   * @param {string} data
   */
  #dispatch(data) {
    if (exceedsFrameLimit(data, MAX_FRAME_AFTER_AUTH)) {
      this.#socket.close(1009, "frame too big");
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
    /** @type {import("../shared/frames.js").AppFrame | null} */
    let received;
    try {
      received = parseAppFrame(message);
    } catch (error) {
      // A command that is not one: answered when it has an id to answer.
      const id = /** @type {{id?: string}} */ (error).id;
      if (id !== undefined && error instanceof CommandError) {
        this.send(failureFrame(id, error.message, error.code));
      }
      return;
    }
    switch (received?.kind) {
      case "command":
        this.#run(received.frame);
        break;
      case "ping":
        this.send(pongFrame());
        break;
      case "error":
        console.warn("Tabrelay: the app rejected a message:", received.frame.code);
        break;
      case "relay.port":
        // The app (it proved itself) will listen there from its next start: look there too.
        this.hooks.onRelayPort(received.frame.port);
        break;
      default:
      // A pong (its arrival is what counts), or a frame this version does not know: ignored.
    }
  }

  /** @param {import("../shared/frames.js").CommandFrame} command */
  #run(command) {
    Promise.resolve()
      .then(() => this.hooks.onCommand(command))
      .then(
        (result) => {
          this.send(
            result instanceof WithTab
              ? resultFrame(command.id, result.result ?? {}, result.tab)
              : resultFrame(command.id, result ?? {}),
          );
        },
        (error) => {
          const code = error instanceof CommandError ? error.code : undefined;
          this.send(failureFrame(command.id, error instanceof Error ? error.message : String(error), code));
        },
      );
  }
}
