// @ts-check
/**
 * The connection's state as the person sees it (popup, options, badge): the one place it
 * changes, and the one place that says when no app drives this browser any more, so the tabs
 * are let go (onRelease, once per loss).
 *
 * It neither connects nor decides anything: relay_connection.js and its parts report here.
 */

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

/** States that say something is wrong; a new attempt does not hide them until it succeeds. */
const PROBLEM_STATES = new Set(["unreachable", "refused", "unverified"]);

/**
 * States in which no app drives this browser: the app is not running, refused or rejected it,
 * unpaired it, or it is waiting for the person to pair it (again). Only "connecting" (a drop
 * the app did not mean, or a worker that just started) keeps the tabs for a while.
 * @type {ReadonlySet<RelayStateName>}
 */
const RELEASING_STATES = new Set([
  "unreachable",
  "refused",
  "unverified",
  "rejected",
  "unpaired",
  "declined",
  "pairing",
  "awaiting_approval",
]);

export class RelayStatus {
  // Whether tabs may be held for an app: from the start (a worker takes over what its
  // predecessor attached) and after each connection, until a releasing state.
  #holding = true;
  /** @type {RelayState} */ #state = { state: "connecting", detail: "Starting", port: 0 };
  /** The relay port of the current attempt. */
  port = 0;

  /**
   * @param {object} deps
   * @param {() => number} deps.now epoch ms
   * @param {(state: RelayState) => void} deps.onState
   * @param {() => void} deps.onRelease no app drives this browser any more: let the tabs go
   */
  constructor({ now, onState, onRelease }) {
    this.now = now;
    this.onState = onState;
    this.onRelease = onRelease;
  }

  /** @returns {RelayState} */
  get state() {
    return this.#state;
  }

  /** Whether the state shown says something is wrong (kept until an attempt succeeds). */
  get showsProblem() {
    return PROBLEM_STATES.has(this.#state.state);
  }

  /**
   * @param {RelayStateName} state
   * @param {string} detail
   * @param {number} [retryIn] ms until the next attempt
   */
  set(state, detail, retryIn) {
    /** @type {RelayState} */
    const next = { state, detail, port: this.port };
    if (retryIn !== undefined) {
      next.retryAt = this.now() + retryIn;
    }
    this.#state = next;
    this.onState(next);
    if (state === "connected") {
      this.#holding = true;
    } else if (this.#holding && RELEASING_STATES.has(state)) {
      this.#holding = false;
      this.onRelease();
    }
  }
}
