// @ts-check
/**
 * Reconnect timing: jittered exponential backoff from about 0.5 s to 30 s, and the polite
 * polling schedule while a pairing waits for the person's approval.
 *
 * Pure (the random source is injected), so node can test it. Timers themselves belong to
 * the relay connection; when the service worker sleeps through a delay, chrome.alarms wakes it.
 */

export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 30_000;
/** Each delay is scaled by a random factor in [1 - JITTER, 1 + JITTER], then capped. */
export const BACKOFF_JITTER = 0.2;

/** While the app answers pairing_required, ask again this often (plus jitter)... */
export const PAIRING_POLL_MS = 3_000;
/** ...for this long after the first pairing_required; then wait for the person to click Pair. */
export const PAIRING_WINDOW_MS = 120_000;
/** While the app says it is asking the person, ask again this often once the window is over. */
export const PAIRING_SLOW_POLL_MS = 10_000;

export class Backoff {
  /**
   * @param {object} [options]
   * @param {number} [options.initialMs]
   * @param {number} [options.maxMs]
   * @param {number} [options.jitter]
   * @param {() => number} [options.random] uniform in [0, 1)
   */
  constructor({
    initialMs = BACKOFF_INITIAL_MS,
    maxMs = BACKOFF_MAX_MS,
    jitter = BACKOFF_JITTER,
    random = Math.random,
  } = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.jitter = jitter;
    this.random = random;
    /** Failed attempts since the last success. */
    this.attempts = 0;
  }

  /**
   * The delay before the next attempt; each call doubles the base, up to the maximum.
   * @returns {number} milliseconds
   */
  next() {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempts, 30));
    this.attempts += 1;
    return this.#jittered(base);
  }

  /**
   * A delay at the maximum, for "wait" answers such as rate limiting; later calls stay there.
   * @returns {number} milliseconds
   */
  atMaximum() {
    this.attempts = Math.max(this.attempts, Math.ceil(Math.log2(this.maxMs / this.initialMs)) + 1);
    return this.#jittered(this.maxMs);
  }

  /** After a success the next failure starts from the initial delay again. */
  reset() {
    this.attempts = 0;
  }

  /**
   * @param {number} base
   * @returns {number}
   */
  #jittered(base) {
    const factor = 1 - this.jitter + 2 * this.jitter * this.random();
    return Math.round(Math.min(this.maxMs, base * factor));
  }
}

/**
 * When to ask the app for the config again while pairing waits for approval.
 *
 * @param {number} waitedMs time since the app first answered pairing_required
 * @param {() => number} [random]
 * @returns {number | null} milliseconds until the next request, or null when the window is
 *   over and only the person (the popup's Pair button) should start a new request
 */
export function pairingPollDelay(waitedMs, random = Math.random) {
  if (waitedMs >= PAIRING_WINDOW_MS) {
    return null;
  }
  return Math.round(PAIRING_POLL_MS * (1 + 0.3 * random()));
}

/**
 * When to ask the app again while it says its window asks the person about this very request.
 * The person may take longer than the window (the app's question waits for them), so there is
 * no end: only a "no", the credential, or the question going away ends it. It slows down after
 * the window; each poll is cheap and raises no second question.
 *
 * @param {number} waitedMs time since the app first answered pairing_required
 * @param {() => number} [random]
 * @returns {number} milliseconds until the next request
 */
export function askingPollDelay(waitedMs, random = Math.random) {
  const base = waitedMs < PAIRING_WINDOW_MS ? PAIRING_POLL_MS : PAIRING_SLOW_POLL_MS;
  return Math.round(base * (1 + 0.3 * random()));
}
