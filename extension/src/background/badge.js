// @ts-check
/**
 * The toolbar badge: ON (connected), … (connecting or waiting for approval), ! (rejected,
 * unverified or unreachable), blank (not paired). On a tab an agent is driving (attached while
 * connected) the badge says AI instead, so the person sees which tab is being used.
 */

/** @typedef {import("./relay_connection.js").RelayStateName} RelayStateName */

/** @type {Record<RelayStateName, {text: string, color: string}>} */
export const BADGES = Object.freeze({
  connected: { text: "ON", color: "#1a7f37" },
  connecting: { text: "…", color: "#6e7781" },
  authenticating: { text: "…", color: "#6e7781" },
  pairing: { text: "…", color: "#6e7781" },
  awaiting_approval: { text: "…", color: "#9a6700" },
  unreachable: { text: "!", color: "#cf222e" },
  refused: { text: "!", color: "#cf222e" },
  unverified: { text: "!", color: "#cf222e" },
  rejected: { text: "!", color: "#cf222e" },
  unpaired: { text: "", color: "#6e7781" },
});

export const DRIVEN_TAB_BADGE = Object.freeze({ text: "AI", color: "#d97706" });

export class Badge {
  /** @type {Set<number>} */ #marked = new Set();

  /** @param {import("./chrome_api.js").ChromeApi} api */
  constructor(api) {
    this.api = api;
  }

  /**
   * @param {RelayStateName} state
   * @param {string} detail
   */
  async showState(state, detail) {
    const look = BADGES[state] ?? BADGES.connecting;
    await Promise.all([
      this.api.action.setBadgeText({ text: look.text }),
      this.api.action.setBadgeBackgroundColor({ color: look.color }),
      this.api.action.setTitle({ title: `Tabrelay: ${detail}` }),
    ]);
  }

  /**
   * Mark the tabs agents are driving; unmark the others.
   * @param {number[]} tabIds attached tabs
   * @param {boolean} connected
   */
  async markTabs(tabIds, connected) {
    const driven = new Set(connected ? tabIds : []);
    const calls = [];
    for (const tabId of driven) {
      if (this.#marked.has(tabId)) continue;
      calls.push(
        this.api.action.setBadgeText({ tabId, text: DRIVEN_TAB_BADGE.text }),
        this.api.action.setBadgeBackgroundColor({ tabId, color: DRIVEN_TAB_BADGE.color }),
        this.api.action.setTitle({ tabId, title: "Tabrelay: an agent is using this tab" }),
      );
    }
    for (const tabId of this.#marked) {
      if (driven.has(tabId)) continue;
      // null clears the tab's own value so the global badge shows again.
      calls.push(
        this.api.action.setBadgeText({ tabId, text: null }),
        this.api.action.setBadgeBackgroundColor({ tabId, color: null }),
        this.api.action.setTitle({ tabId, title: null }),
      );
    }
    this.#marked = driven;
    // A tab that closed meanwhile rejects; that is fine.
    await Promise.allSettled(calls);
  }
}
