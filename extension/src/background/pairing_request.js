// @ts-check
/**
 * The pairing request: asking the app for a credential until the person answers in its tray.
 *
 * A request keeps one code from its start to its end, across polls, clicks on Pair and worker
 * restarts (the app's dialog shows the code of the request it asks about); it keeps asking while
 * the app says its question is open, stops after a while otherwise, and ends at a "no" (the
 * app's quiet time after it is respected even when the person asks again). It only ever asks
 * on the port it is given: relay_connection.js decides when a request starts and where.
 */

import { askingPollDelay, pairingPollDelay } from "../shared/backoff.js";
import { newPairingCode } from "../shared/handshake.js";

/** A window the person opened for this request: collect the credential at once. */
const ALLOWED_POLL_MS = 100;

export const DECLINED = "You declined pairing this browser in the Tabrelay app. Click Pair to ask again.";
export const NOT_APPROVED = "The Tabrelay app has not approved this browser. Click Pair to ask again.";
export const UNPAIRED = "This browser was unpaired in the Tabrelay app. Click Pair to pair it again.";

export class PairingRequest {
  /**
   * @param {object} deps
   * @param {import("./settings.js").ConnectionSettings} deps.settings
   * @param {import("./relay_admission.js").RelayAdmission} deps.admission
   * @param {import("./relay_state.js").RelayStatus} deps.status
   * @param {import("../shared/backoff.js").Backoff} deps.backoff
   * @param {() => number} deps.now epoch ms
   * @param {Crypto} deps.crypto
   */
  constructor({ settings, admission, status, backoff, now, crypto }) {
    this.settings = settings;
    this.admission = admission;
    this.status = status;
    this.backoff = backoff;
    this.now = now;
    this.crypto = crypto;
  }

  /** Whether a request is under way (it has a code). */
  async underWay() {
    return (await this.settings.pairingCode()) !== undefined;
  }

  /**
   * When the last request ended without a credential (or the app unpaired this browser), show
   * it: nothing asks again until the person presses Pair.
   * @param {boolean} unpaired the app revoked this browser's pairing
   * @returns {Promise<boolean>} whether it ended so (the caller stops)
   */
  async showEnded(unpaired) {
    const ended = unpaired ? "unpaired" : await this.settings.pairingEnded();
    if (ended === undefined) return false;
    if (ended === "declined") {
      this.status.set("declined", DECLINED);
    } else {
      this.status.set("unpaired", ended === "unpaired" ? UNPAIRED : NOT_APPROVED);
    }
    return true;
  }

  /**
   * Ask the config endpoint for a credential, with the code of the request under way (or of a
   * new one), on the port that request asks.
   * @param {number} port for a new request
   * @param {() => boolean} isCurrent false once the connection started over
   * @returns {Promise<number | null>} delay before the next step, or null to stop
   */
  async ask(port, isCurrent) {
    const now = this.now();
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
      this.status.port = port;
      const shown = this.status.state;
      if (this.status.showsProblem) {
        this.status.set(shown.state, shown.detail);
      } else {
        this.status.set("pairing", "Asking the Tabrelay app to pair");
      }
    } else {
      port = (await this.settings.pairingPort()) ?? port;
      this.status.port = port;
    }
    const quietUntil = await this.settings.declinedUntil();
    if (quietUntil !== undefined && now < quietUntil) {
      // The person said no a moment ago; the app would not ask them again before this.
      const wait = quietUntil - now;
      this.status.set("pairing", "You declined this browser in the Tabrelay app a moment ago; Tabrelay waits until it may ask you again", wait);
      return wait;
    }
    const answer = await this.admission.fetchConfig(port, code);
    if (!isCurrent()) return null;
    switch (answer.kind) {
      case "token":
        await this.settings.saveToken(answer.token);
        await this.end(null);
        await this.settings.setDeclinedUntil(null);
        this.backoff.reset();
        return 0;
      case "pairing_required": {
        const status = await this.admission.pairingStatus(port, code);
        if (!isCurrent()) return null;
        if (status?.pairing === "declined") {
          await this.settings.setDeclinedUntil(this.now() + status.retryAfter * 1000);
          await this.end("declined");
          this.status.set("declined", DECLINED);
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
          await this.end("expired");
          this.status.set("unpaired", NOT_APPROVED);
          return null;
        }
        this.status.set(
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
        this.status.set("unreachable", `The Tabrelay app is not running on port ${port}`, delay);
        return delay;
      }
      case "rate_limited": {
        const delay = this.backoff.atMaximum();
        this.status.set("refused", "The Tabrelay app asks to wait (too many attempts)", delay);
        return delay;
      }
      default: {
        const delay = this.backoff.next();
        this.status.set("refused", answer.detail, delay);
        return delay;
      }
    }
  }

  /**
   * The request is over: forget its code, start and port; remember how it ended.
   * @param {import("./settings.js").PairingEnd | null} ended
   */
  async end(ended) {
    await this.settings.setPairingCode(null);
    await this.settings.setPairingSince(null);
    await this.settings.setPairingPort(null);
    await this.settings.setPairingEnded(ended);
  }
}
