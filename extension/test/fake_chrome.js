// @ts-check
/**
 * A recording stand-in for the `chrome` object, for node tests of the background modules.
 * Not a test file; node runs it as one and finds no tests.
 */

/**
 * @typedef {{id: number, windowId: number, url: string, title?: string, active?: boolean, groupId?: number}} FakeTab
 */

/**
 * @param {{tabs?: FakeTab[]}} [options]
 */
export function fakeChrome({ tabs = [] } = {}) {
  /** @type {Array<[string, ...unknown[]]>} */
  const calls = [];
  /** @type {Map<number, FakeTab>} */
  const tabMap = new Map(tabs.map((t) => [t.id, { active: false, title: "", groupId: -1, ...t }]));
  /** @type {Set<number>} */
  const attached = new Set();
  /** @type {Record<string, unknown>} */
  const local = {};
  /** @type {Record<string, unknown>} */
  const session = {};
  /** @type {(method: string, params: any, tabId: number) => Promise<unknown>} */
  let commandHandler = async () => ({});
  let nextTabId = 1000;
  let nextGroupId = 1;
  // The window that last had focus: the first tab's.
  const focusedWindow = tabs[0]?.windowId ?? 1;
  /** @type {Map<number, {id: number, title: string, windowId: number}>} */
  const groups = new Map();

  /**
   * @param {string} name
   * @param {(...args: any[]) => unknown} impl
   */
  const record =
    (name, impl) =>
    (/** @type {any[]} */ ...args) => {
      calls.push([name, ...args]);
      return Promise.resolve().then(() => impl(...args));
    };
  /** @param {number} id */
  const tab = (id) => {
    const found = tabMap.get(id);
    if (found === undefined) throw new Error(`No tab with id: ${id}.`);
    return { ...found };
  };
  /** @param {string[] | string | null} keys @param {Record<string, unknown>} area */
  const pick = (keys, area) => {
    if (keys === null) return { ...area };
    const list = Array.isArray(keys) ? keys : [keys];
    return Object.fromEntries(list.filter((k) => k in area).map((k) => [k, area[k]]));
  };

  const chrome = {
    action: {
      setBadgeText: record("action.setBadgeText", () => undefined),
      setBadgeBackgroundColor: record("action.setBadgeBackgroundColor", () => undefined),
      setTitle: record("action.setTitle", () => undefined),
    },
    alarms: { create: record("alarms.create", () => undefined), get: record("alarms.get", () => undefined) },
    debugger: {
      attach: record("debugger.attach", (/** @type {{tabId: number}} */ target) => {
        const t = tab(target.tabId);
        if (t.url.startsWith("chrome://")) throw new Error("Cannot access a chrome:// URL");
        if (attached.has(target.tabId)) throw new Error(`Another debugger is already attached to the tab with id: ${target.tabId}.`);
        attached.add(target.tabId);
      }),
      detach: record("debugger.detach", (/** @type {{tabId: number}} */ target) => {
        if (!attached.delete(target.tabId)) throw new Error(`Debugger is not attached to the tab with id: ${target.tabId}.`);
      }),
      getTargets: record("debugger.getTargets", () =>
        [...tabMap.values()].map((t) => ({ type: "page", tabId: t.id, attached: attached.has(t.id), url: t.url })),
      ),
      sendCommand: record("debugger.sendCommand", (/** @type {{tabId: number}} */ target, /** @type {string} */ method, /** @type {any} */ params) => {
        if (!attached.has(target.tabId)) throw new Error(`Debugger is not attached to the tab with id: ${target.tabId}.`);
        return commandHandler(method, params, target.tabId);
      }),
    },
    runtime: { getManifest: () => ({ version: "0.1.0" }) },
    storage: {
      local: {
        get: record("storage.local.get", (/** @type {any} */ keys) => pick(keys, local)),
        set: record("storage.local.set", (/** @type {Record<string, unknown>} */ items) => void Object.assign(local, items)),
        remove: record("storage.local.remove", (/** @type {string[]} */ keys) => {
          // Chrome refuses the whole call for a key that is not a string (an undefined constant).
          if (!keys.every((k) => typeof k === "string")) throw new TypeError("Error in invocation of storage.remove");
          keys.forEach((k) => delete local[k]);
        }),
      },
      session: {
        get: record("storage.session.get", (/** @type {any} */ keys) => pick(keys, session)),
        set: record("storage.session.set", (/** @type {Record<string, unknown>} */ items) => void Object.assign(session, items)),
      },
    },
    tabGroups: {
      query: record("tabGroups.query", (/** @type {{title?: string, windowId?: number}} */ filter) =>
        [...groups.values()].filter(
          (g) => (filter.title === undefined || g.title === filter.title) && (filter.windowId === undefined || g.windowId === filter.windowId),
        ),
      ),
      update: record("tabGroups.update", (/** @type {number} */ id, /** @type {{title?: string}} */ props) => {
        Object.assign(/** @type {object} */ (groups.get(id)), props);
        return { ...groups.get(id) };
      }),
    },
    tabs: {
      get: record("tabs.get", tab),
      query: record("tabs.query", (/** @type {{active?: boolean, lastFocusedWindow?: boolean}} */ filter = {}) =>
        [...tabMap.values()]
          .filter((t) => filter.active === undefined || t.active === filter.active)
          .filter((t) => !filter.lastFocusedWindow || t.windowId === focusedWindow)
          .map((t) => ({ ...t })),
      ),
      create: record("tabs.create", (/** @type {{url: string, active: boolean}} */ props) => {
        const created = { id: nextTabId++, windowId: 1, url: props.url, title: "", active: props.active, groupId: -1 };
        tabMap.set(created.id, created);
        return { ...created };
      }),
      update: record("tabs.update", (/** @type {number} */ id, /** @type {object} */ props) => {
        const t = tab(id);
        Object.assign(/** @type {FakeTab} */ (tabMap.get(id)), props);
        return { ...t, ...props };
      }),
      remove: record("tabs.remove", (/** @type {number} */ id) => {
        tab(id);
        tabMap.delete(id);
        attached.delete(id);
      }),
      group: record("tabs.group", (/** @type {{tabIds: number[], groupId?: number}} */ options) => {
        const groupId = options.groupId ?? nextGroupId++;
        if (!groups.has(groupId)) groups.set(groupId, { id: groupId, title: "", windowId: 1 });
        for (const id of options.tabIds) Object.assign(/** @type {FakeTab} */ (tabMap.get(id)), { groupId });
        return groupId;
      }),
    },
    windows: { update: record("windows.update", () => ({})) },
    management: { setEnabled: record("management.setEnabled", () => undefined) },
  };

  return {
    chrome,
    calls,
    attached,
    tabs: tabMap,
    local,
    session,
    /** @param {string} prefix */
    callsTo: (prefix) => calls.filter(([name]) => name.startsWith(prefix)),
    /** @param {(method: string, params: any, tabId: number) => Promise<unknown>} handler */
    onCommand: (handler) => {
      commandHandler = handler;
    },
  };
}
