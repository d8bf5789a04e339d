// @ts-check
/**
 * What the popup and the options page say about the relay state. Pure.
 */

/**
 * @typedef {import("../background/relay_connection.js").RelayState} RelayState
 */

/** @type {Record<string, {headline: string, tone: "ok" | "bad" | "wait" | "off"}>} */
const HEADLINES = {
  connected: { headline: "Connected to the Tabrelay app", tone: "ok" },
  connecting: { headline: "Connecting to the Tabrelay app…", tone: "wait" },
  authenticating: { headline: "Connecting to the Tabrelay app…", tone: "wait" },
  pairing: { headline: "Asking the Tabrelay app to pair…", tone: "wait" },
  awaiting_approval: { headline: "Approve this browser in the Tabrelay app", tone: "wait" },
  unreachable: { headline: "The Tabrelay app is not running", tone: "bad" },
  refused: { headline: "The Tabrelay app refused this browser", tone: "bad" },
  unverified: { headline: "Relay unverified: not the Tabrelay app", tone: "bad" },
  rejected: { headline: "Rejected by the Tabrelay app", tone: "bad" },
  unpaired: { headline: "Not paired with the Tabrelay app", tone: "off" },
  declined: { headline: "Pairing was declined in the Tabrelay app", tone: "off" },
};

/** States in which pairing (again) is what helps. */
export const PAIRABLE_STATES = new Set(["unpaired", "rejected", "refused", "declined"]);

/**
 * The Pair button's words in each state where it shows.
 * @param {string | undefined} state
 */
export function pairButtonText(state) {
  if (state === "unpaired") return "Pair with the Tabrelay app";
  if (state === "declined") return "Ask the Tabrelay app again";
  return "Pair again";
}

/**
 * @param {RelayState | undefined} state
 * @returns {{headline: string, detail: string, tone: string}}
 */
export function describeState(state) {
  if (state === undefined) {
    return { headline: "Starting…", detail: "", tone: "wait" };
  }
  const known = HEADLINES[state.state] ?? { headline: state.state, tone: "wait" };
  let detail = state.detail;
  if (state.retryAt !== undefined && state.state !== "connected") {
    const seconds = Math.max(0, Math.round((state.retryAt - Date.now()) / 1000));
    detail += seconds > 0 ? ` (trying again in ${seconds} s)` : "";
  }
  return { headline: known.headline, detail, tone: known.tone };
}
