// @ts-check
/**
 * The toolbar badge: ON (connected), … (connecting or waiting for approval), ! (rejected,
 * unverified or unreachable), blank (not paired, or the person declined pairing). On a tab an agent is driving (attached while
 * connected) the badge says AI instead, so the person sees which tab is being used.
 */

/** @typedef {import("./relay_state.js").RelayStateName} RelayStateName */

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
  declined: { text: "", color: "#6e7781" },
});

export const DRIVEN_TAB_BADGE = Object.freeze({ text: "AI", color: "#d97706" });

export class Badge {
  /** @type {Set<number>} */ #marked = new Set();
  #look = BADGES.connecting;
  #title = "Tabrelay";

  /** @param {import("./chrome_api.js").ChromeApi} api */
  constructor(api) {
    this.api = api;
  }

  /**
   * @param {RelayStateName} state
   * @param {string} detail
   */
  async showState(state, detail) {
    this.#look = BADGES[state] ?? BADGES.connecting;
    this.#title = `Tabrelay: ${detail}`;
    await Promise.allSettled([
      call(() => this.api.action.setBadgeText({ text: this.#look.text })),
      call(() => this.api.action.setBadgeBackgroundColor({ color: this.#look.color })),
      call(() => this.api.action.setTitle({ title: this.#title })),
    ]);
  }

  /**
   * Chrome clears a tab's own badge when the tab navigates: mark a driven tab again.
   * @param {number} tabId
   */
  async tabNavigated(tabId) {
    if (this.#marked.has(tabId)) {
      await Promise.allSettled(this.#markCalls(tabId));
    }
  }

  /**
   * Mark the tabs agents are driving; unmark the others.
   * @param {number[]} tabIds attached tabs
   * @param {boolean} connected
   */
  async markTabs(tabIds, connected) {
    const driven = new Set(connected ? tabIds : []);
    // An attached tab no app drives is unmarked even if this worker did not mark it: the
    // marks outlive the worker that set them (a new worker takes over the tabs, not its Set).
    const unmarked = [...new Set([...this.#marked, ...tabIds])].filter((tabId) => !driven.has(tabId));
    const added = [...driven].filter((tabId) => !this.#marked.has(tabId));
    this.#marked = driven;
    const calls = [];
    for (const tabId of added) {
      calls.push(...this.#markCalls(tabId));
    }
    for (const tabId of unmarked) {
      // A null text clears the tab's own text so the global one shows again; color and title
      // have no such reset, so they get the global values.
      calls.push(
        call(() => this.api.action.setBadgeText({ tabId, text: null })),
        call(() => this.api.action.setBadgeBackgroundColor({ tabId, color: this.#look.color })),
        call(() => this.api.action.setTitle({ tabId, title: this.#title })),
      );
    }
    // A tab that closed meanwhile rejects; that is fine.
    await Promise.allSettled(calls);
  }

  /** @param {number} tabId */
  #markCalls(tabId) {
    return [
      call(() => this.api.action.setBadgeText({ tabId, text: DRIVEN_TAB_BADGE.text })),
      call(() => this.api.action.setBadgeBackgroundColor({ tabId, color: DRIVEN_TAB_BADGE.color })),
      call(() => this.api.action.setTitle({ tabId, title: "Tabrelay: an agent is using this tab" })),
    ];
  }
}

/**
 * Run a chrome.action call; chrome throws synchronously on bad arguments, and a closed tab
 * rejects: neither may break the caller.
 * @param {() => Promise<unknown>} fn
 * @returns {Promise<unknown>}
 */
function call(fn) {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}
