// @ts-check
/**
 * The tabs as the relay sees them: listing, opening, navigating, closing, activating and
 * grouping, and the tab_event messages that keep the app's list live.
 *
 * A tab is `shared` when the person put it in agents' reach: it is in a "Tabrelay" tab group
 * (agents' tabs go there; the person may drag others in) or the person shared it from the
 * popup. The app uses this when the person lets agents use shared tabs only (DESIGN §4.9).
 *
 * Browser, extension and web store pages are skipped: never listed, never announced, and any
 * command that names one fails with restricted_url (DESIGN §4.10). Tabs agents open go into the
 * "Tabrelay" tab group of their window, so the person sees them together.
 */

import { CommandError, describeChromeError } from "../shared/errors.js";
import { tabEventFrame, tabRemovedFrame } from "../shared/frames.js";
import { ErrorCode } from "../shared/protocol.js";
import { isRestrictedUrl } from "../shared/validation.js";

export const GROUP_TITLE = "Tabrelay";
const GROUP_COLOR = "orange";

/**
 * @typedef {object} ChromeTab
 * @property {number} [id]
 * @property {number} windowId
 * @property {string} [url]
 * @property {string} [pendingUrl]
 * @property {string} [title]
 * @property {boolean} active
 * @property {string} [favIconUrl]
 * @property {number} [groupId]
 * @property {number} [openerTabId]
 */

/** @typedef {import("../shared/frames.js").WireTab} WireTab */

/**
 * A tab in the protocol's shape.
 * @param {ChromeTab} tab
 * @param {boolean} attached
 * @param {boolean} [shared]
 * @returns {WireTab}
 */
export function tabToWire(tab, attached, shared = false) {
  /** @type {WireTab} */
  const wire = {
    id: /** @type {number} */ (tab.id),
    windowId: tab.windowId,
    url: tab.url || tab.pendingUrl || "",
    title: tab.title ?? "",
    active: tab.active,
    attached,
    shared,
    groupId: tab.groupId ?? -1,
  };
  // Only http(s) icons: a data: icon can be large and says nothing the app needs.
  if (tab.favIconUrl && /^https?:/.test(tab.favIconUrl)) {
    wire.favIconUrl = tab.favIconUrl;
  }
  if (typeof tab.openerTabId === "number") {
    wire.openerTabId = tab.openerTabId;
  }
  return wire;
}

/**
 * @param {ChromeTab} tab
 * @returns {boolean}
 */
export function isRestrictedTab(tab) {
  return isRestrictedUrl(tab.url || tab.pendingUrl);
}

export class TabRegistry {
  /** Ids of the tab groups titled "Tabrelay" (one per window at most, normally). */
  /** @type {Set<number>} */ #tabrelayGroups = new Set();

  /**
   * @param {object} deps
   * @param {import("./chrome_api.js").ChromeApi} deps.api
   * @param {(tabId: number) => boolean} deps.isAttached
   * @param {(tabId: number) => boolean} [deps.isSharedByPerson]
   */
  constructor({ api, isAttached, isSharedByPerson = () => false }) {
    this.api = api;
    this.isAttached = isAttached;
    this.isSharedByPerson = isSharedByPerson;
  }

  /** @returns {Promise<WireTab[]>} every tab the relay may use */
  async list() {
    /** @type {ChromeTab[]} */
    const tabs = await this.api.tabs.query({});
    /** @type {ChromeTab[]} */
    const focused = await this.api.tabs.query({ active: true, lastFocusedWindow: true });
    const focusedId = focused[0]?.id;
    await this.#refreshGroups();
    return tabs
      .filter((tab) => tab.id !== undefined && !isRestrictedTab(tab))
      .map((tab) => ({ ...this.wire(tab), focused: tab.id === focusedId }));
  }

  /**
   * A tab the relay may use.
   * @param {number} tabId
   * @returns {Promise<ChromeTab>}
   * @throws {CommandError} no_tab, restricted_url
   */
  async require(tabId) {
    /** @type {ChromeTab} */
    let tab;
    try {
      tab = await this.api.tabs.get(tabId);
    } catch (error) {
      throw describeChromeError(error, { tabId });
    }
    if (isRestrictedTab(tab)) {
      throw new CommandError(
        `Tabrelay does not use tab ${tabId}: it shows a browser, extension or web store page`,
        ErrorCode.RESTRICTED_URL,
      );
    }
    return tab;
  }

  /** @param {number} tabId */
  async get(tabId) {
    return this.wired(await this.require(tabId));
  }

  /**
   * The tab as it is now, read last: after any look at its group, so nothing that happened
   * before the answer leaves the extension can be newer than it (a cdp.send's carried tab).
   * @param {number} tabId
   */
  async now(tabId) {
    const tab = await this.require(tabId);
    if (this.#groupUnknown(tab)) {
      await this.#refreshGroups();
      return this.wire(await this.require(tabId));
    }
    return this.wire(tab);
  }

  /**
   * Open a tab for an agent, in the window's Tabrelay group.
   * @param {{url: string, active: boolean}} options
   */
  async create({ url, active }) {
    /** @type {ChromeTab} */
    const tab = await this.api.tabs.create({ url, active });
    const tabId = /** @type {number} */ (tab.id);
    try {
      await this.group([tabId], GROUP_TITLE);
    } catch {
      // Tab groups are a courtesy (a browser without them still gets the tab).
    }
    try {
      return await this.wired(await this.api.tabs.get(tabId));
    } catch {
      return this.wire(tab);
    }
  }

  /**
   * @param {number} tabId
   * @param {string} url already checked by checkNavigationUrl
   */
  async navigate(tabId, url) {
    await this.require(tabId);
    return this.wired(await this.#call(tabId, () => this.api.tabs.update(tabId, { url })));
  }

  /** @param {number} tabId */
  async close(tabId) {
    await this.require(tabId);
    await this.#call(tabId, () => this.api.tabs.remove(tabId));
    return {};
  }

  /** @param {number} tabId */
  async activate(tabId) {
    const tab = await this.require(tabId);
    const updated = await this.#call(tabId, () => this.api.tabs.update(tabId, { active: true }));
    try {
      await this.api.windows.update(tab.windowId, { focused: true });
    } catch {
      // Focusing can be refused (another app in front, headless); the tab is active anyway.
    }
    return this.wired(updated);
  }

  /**
   * Put tabs into the group titled `title` of the first tab's window, creating it if needed.
   * @param {number[]} tabIds
   * @param {string} title
   * @returns {Promise<{groupId: number}>}
   */
  async group(tabIds, title) {
    const first = await this.require(tabIds[0]);
    for (const tabId of tabIds.slice(1)) {
      await this.require(tabId);
    }
    /** @type {Array<{id: number}>} */
    const groups = await this.api.tabGroups.query({ windowId: first.windowId, title });
    /** @type {number} */
    let groupId;
    if (groups.length > 0) {
      groupId = await this.api.tabs.group({ groupId: groups[0].id, tabIds });
    } else {
      groupId = await this.api.tabs.group({ tabIds, createProperties: { windowId: first.windowId } });
      await this.api.tabGroups.update(groupId, { title, color: GROUP_COLOR });
    }
    if (title === GROUP_TITLE) {
      this.#tabrelayGroups.add(groupId);
    }
    return { groupId };
  }

  /**
   * The active tab of a window (the focused window when none is named).
   * @param {number | undefined} windowId
   * @returns {Promise<ChromeTab>}
   */
  async activeTab(windowId) {
    /** @type {ChromeTab[]} */
    const tabs = await this.api.tabs.query(
      windowId === undefined ? { active: true, lastFocusedWindow: true } : { active: true, windowId },
    );
    const tab = tabs[0];
    if (tab === undefined || tab.id === undefined) {
      throw new CommandError(
        windowId === undefined ? "No window has an active tab" : `No window with id ${windowId} (or it has no tab)`,
        ErrorCode.NO_TAB,
      );
    }
    return this.require(tab.id);
  }

  /**
   * The tab_event message for a chrome.tabs event, or null when the tab is not the relay's to
   * see. A tab that navigates to a restricted page is announced as removed.
   *
   * @param {"created" | "updated" | "activated"} kind
   * @param {ChromeTab} tab
   * @returns {Promise<import("../shared/frames.js").TabEventFrame | null>}
   */
  async eventFor(kind, tab) {
    if (tab.id === undefined) {
      return null;
    }
    if (isRestrictedTab(tab)) {
      return kind === "updated" ? tabRemovedFrame(tab.id) : null;
    }
    return tabEventFrame(kind, await this.wired(tab));
  }

  /**
   * A tab in the protocol's shape, with what is known of its group now.
   * @param {ChromeTab} tab
   */
  wire(tab) {
    const id = tab.id;
    const inTabrelayGroup = tab.groupId !== undefined && this.#tabrelayGroups.has(tab.groupId);
    const shared = id !== undefined && (inTabrelayGroup || this.isSharedByPerson(id));
    return tabToWire(tab, id !== undefined && this.isAttached(id), shared);
  }

  /**
   * Like wire, after looking up a group the registry has not seen (new, or made by the person).
   * @param {ChromeTab} tab
   */
  async wired(tab) {
    if (this.#groupUnknown(tab)) {
      await this.#refreshGroups();
    }
    return this.wire(tab);
  }

  /**
   * Whether the tab is in a group the registry has not seen (new, or made by the person).
   * @param {ChromeTab} tab
   */
  #groupUnknown(tab) {
    return tab.groupId !== undefined && tab.groupId !== -1 && !this.#tabrelayGroups.has(tab.groupId);
  }

  async #refreshGroups() {
    try {
      /** @type {Array<{id: number}>} */
      const groups = await this.api.tabGroups.query({ title: GROUP_TITLE });
      this.#tabrelayGroups = new Set(groups.map((group) => group.id));
    } catch {
      // A browser without tab groups: nothing is shared through a group.
    }
  }

  /**
   * @template T
   * @param {number} tabId
   * @param {() => Promise<T>} call
   * @returns {Promise<T>}
   */
  async #call(tabId, call) {
    try {
      return await call();
    } catch (error) {
      throw describeChromeError(error, { tabId });
    }
  }
}
