// @ts-check
/**
 * What follows a closed session: wait (jittered exponential backoff, or its maximum when the
 * app asks to wait), ask to pair again, or stop until the person acts — and what the person
 * is told meanwhile.
 *
 * Only an app that proved itself may make the extension fetch a new credential or forget its
 * pairing (THREATS R5). A program squatting the port learns nothing and is obeyed in nothing,
 * but it can stop the extension: an authentication rejection (4401) comes before any proof —
 * the real app cannot prove a credential it does not know — so one from the port is taken as
 * final (after looking on the other ports) until the person presses Pair or sets another port
 * (docs/protocol.md, close codes). Everything else a squatter can say only makes it wait.
 * It neither opens sockets nor asks the app anything but the health probe.
 */

import { UNPAIRED } from "./pairing_request.js";
import { closeMeaning } from "./relay_session.js";

export class ReconnectPolicy {
  /**
   * @param {object} deps
   * @param {import("./settings.js").ConnectionSettings} deps.settings
   * @param {import("./relay_admission.js").RelayAdmission} deps.admission
   * @param {import("./pairing_request.js").PairingRequest} deps.pairing
   * @param {import("./relay_state.js").RelayStatus} deps.status
   * @param {import("../shared/backoff.js").Backoff} deps.backoff
   */
  constructor({ settings, admission, pairing, status, backoff }) {
    this.settings = settings;
    this.admission = admission;
    this.pairing = pairing;
    this.status = status;
    this.backoff = backoff;
  }

  /**
   * Decide what follows a closed session on `port`.
   * @param {import("./relay_session.js").SocketOutcome} outcome
   * @param {number} port
   * @param {number[]} looked every port the app was looked for on
   * @param {() => boolean} isCurrent false once the connection started over
   * @returns {Promise<number | null>} delay before the next step, or null to stop
   */
  async afterClose(outcome, port, looked, isCurrent) {
    if (!isCurrent()) return null;
    const { status, backoff } = this;
    const meaning = closeMeaning(outcome);
    switch (meaning) {
      case "unverified": {
        const delay = backoff.next();
        const detail = /** @type {{detail: string}} */ (outcome.failure).detail;
        status.set("unverified", `The program on port ${port} is not the Tabrelay app (${detail}); Tabrelay obeys nothing from it`, delay);
        return delay;
      }
      case "no_answer": {
        const reachable = await this.admission.reachable(port);
        if (!isCurrent()) return null;
        const delay = backoff.next();
        if (reachable) {
          status.set(
            "refused",
            "The Tabrelay app refused this browser (it may have been unpaired, or it asks to wait). Click Pair to pair again.",
            delay,
          );
        } else {
          status.set("unreachable", `The Tabrelay app is not running: Tabrelay looked for it on ${portsText(looked)}`, delay);
        }
        return delay;
      }
      case "rotated":
        // The old credential is dead: ask to pair again, here (the person approves in the
        // app). A new request: whatever an earlier one left is over.
        await this.settings.forgetToken();
        await this.pairing.end(null);
        status.set("pairing", "The Tabrelay app replaced its credentials; asking to pair again");
        return this.pairing.ask(port, isCurrent);
      case "unpaired":
        await this.settings.forgetToken();
        await this.settings.setUnpaired(true);
        status.set("unpaired", UNPAIRED);
        return null;
      case "wait": {
        const delay = backoff.atMaximum();
        status.set("connecting", "The Tabrelay app asks to wait before reconnecting", delay);
        return delay;
      }
      case "app_quit": {
        const delay = backoff.next();
        status.set("unreachable", "The Tabrelay app quit; Tabrelay connects again when it runs", delay);
        return delay;
      }
      case "dropped": {
        const delay = backoff.next();
        status.set("connecting", `The connection to the Tabrelay app closed (${outcome.code}); reconnecting`, delay);
        return delay;
      }
      case "rejected": {
        // Permanent until the person clicks Pair. Nothing is fetched here: whoever sits on the
        // port can close with 4401 and serve a credential of its own, and asking the real app
        // would spend a pairing window the person opened without using it.
        const message =
          "The Tabrelay app no longer accepts this browser's credential (it was unpaired, or the " +
          "app's data was reset). Click Pair to pair again.";
        await this.settings.setAuthProblem(message);
        status.set("rejected", message);
        return null;
      }
      case "too_many_attempts": {
        const delay = backoff.atMaximum();
        status.set("refused", "The Tabrelay app asks to wait (too many attempts)", delay);
        return delay;
      }
      case "secrets_locked": {
        // The credential is kept: the app cannot check it until the person unlocks its keychain.
        const delay = backoff.next();
        status.set(
          "refused",
          "The Tabrelay app cannot read its credentials (its keychain is locked): unlock it in the app. Retrying",
          delay,
        );
        return delay;
      }
      case "handshake_timeout": {
        const delay = backoff.next();
        status.set("unverified", `The program on port ${port} did not finish the Tabrelay handshake`, delay);
        return delay;
      }
      default: {
        const delay = backoff.next();
        status.set("connecting", `The Tabrelay app closed the connection (${outcome.code}); retrying`, delay);
        return delay;
      }
    }
  }
}

/** @param {number[]} ports */
function portsText(ports) {
  if (ports.length === 1) return `port ${ports[0]}`;
  return `ports ${ports.slice(0, -1).join(", ")} and ${ports[ports.length - 1]}`;
}
