// @ts-check
/**
 * The service worker: builds the parts and wires them to chrome's events. No logic of its own.
 *
 * Every listener is registered synchronously at the top level, so Chrome can wake a suspended
 * worker for it (an alarm, a tab event, a debugger event); work waits for `ready`.
 */

import { announcement, browserName } from "./announcement.js";
import { Badge } from "./badge.js";
import { bindChromeApi } from "./chrome_api.js";
import { CommandRouter } from "./commands.js";
import { DebuggerSessions } from "./debugger_sessions.js";
import { DownloadHold } from "./download_hold.js";
import { handlePageRequest, isOwnPage } from "./page_requests.js";
import { RelayConnection } from "./relay_connection.js";
import { Keys, SessionKeys, SettingsStore } from "./settings.js";
import { TabRegistry } from "./tab_registry.js";
import { cdpEventFrame, statusFrame, tabRemovedFrame } from "../shared/frames.js";

const WAKE_ALARM = "tabrelay-wake";
// 30 s is the shortest period Chrome allows; it restarts a worker that was suspended while
// waiting to reconnect (timers do not survive a suspension).
const WAKE_PERIOD_MINUTES = 0.5;

const api = bindChromeApi(chrome);
const settings = new SettingsStore(api);
const badge = new Badge(api);
let lastStatus = "";
/** @type {Promise<void>} */
let tabEvents = Promise.resolve();

let wasConnected = false;

const sessions = new DebuggerSessions({
  api,
  onEvent: (tabId, method, params, sessionId) => {
    if (!connection.send(cdpEventFrame(tabId, method, params, sessionId)) && method === "Fetch.requestPaused") {
      sessions.letThrough(tabId, params, sessionId);
    }
  },
  onChange: (attachedTabs) => {
    const key = JSON.stringify(attachedTabs);
    if (key !== lastStatus && connection.send(statusFrame(attachedTabs))) {
      lastStatus = key;
    }
    badge.markTabs(attachedTabs, connection.connected);
  },
});
const tabs = new TabRegistry({
  api,
  isAttached: (tabId) => sessions.isAttached(tabId),
  isSharedByPerson: (tabId) => sessions.isSharedByPerson(tabId),
});
const hold = new DownloadHold({
  downloads: api.downloads,
  send: (frame) => connection.send(frame),
  remember: (held) => api.storage.local.set({ [Keys.HELD_DOWNLOADS]: held }),
});
/** @type {CommandRouter} */
const router = new CommandRouter({ tabs, sessions, relayPort: () => connection.port, downloads: api.downloads, hold });
/** @type {RelayConnection} */
const connection = new RelayConnection({
  settings,
  WebSocketImpl: WebSocket,
  fetchImpl: (input, init) => fetch(input, init),
  onCommand: (command) => router.handle(command),
  announcement: async () => {
    const attachedTabs = sessions.attachedTabs();
    lastStatus = JSON.stringify(attachedTabs);
    return announcement({
      version: api.runtime.getManifest().version,
      browser: browserName(/** @type {any} */ (navigator).userAgentData, navigator.userAgent),
      instance: await settings.instanceId(),
      attachedTabs,
    });
  },
  onState: (state) => {
    const connected = state.state === "connected";
    if (wasConnected && !connected) {
      sessions.stopHolding().catch((error) => console.warn("Tabrelay:", error));
    }
    if (!connected) {
      hold.connectionEnded();
    }
    wasConnected = connected;
    api.storage.session.set({ [SessionKeys.RELAY_STATE]: state });
    badge.showState(state.state, state.detail);
    badge.markTabs(sessions.attachedTabs(), state.state === "connected");
  },
  // The app quit, unpaired or rejected this browser, or is gone: no tab stays attached for it.
  onRelease: () => {
    sessions.releaseAll().catch((error) => console.warn("Tabrelay: could not let every tab go", error));
  },
});

const ready = (async () => {
  if (!(await api.alarms.get(WAKE_ALARM))) {
    await api.alarms.create(WAKE_ALARM, { periodInMinutes: WAKE_PERIOD_MINUTES });
  }
  try {
    await sessions.restore();
  } catch (error) {
    console.warn("Tabrelay: could not restore debugger sessions", error);
  }
  // What a stopped worker held, read before this one holds anything (it overwrites the list).
  const stored = await api.storage.local.get([Keys.HELD_DOWNLOADS]).catch(() => ({}));
  connection.start();
  await hold.recover(stored[Keys.HELD_DOWNLOADS]);
})();

/** @param {() => unknown} work */
function whenReady(work) {
  ready.then(work).catch((error) => console.warn("Tabrelay:", error));
}

/**
 * @param {"created" | "updated" | "activated"} kind
 * @param {import("./tab_registry.js").ChromeTab} tab
 */
function forwardTab(kind, tab) {
  // One queue, so events leave in the order Chrome fired them even when one of them has to
  // look up a tab group first (a late, stale title would overwrite the app's fresh one).
  tabEvents = tabEvents
    .then(async () => {
      const event = await tabs.eventFor(kind, tab);
      if (event !== null) connection.send(event);
    })
    .catch((error) => console.warn("Tabrelay: a tab event was not sent", error));
  return tabEvents;
}

/**
 * The person shared or unshared a tab: the app's list shows it at once.
 * @param {number} tabId
 */
async function announceTab(tabId) {
  try {
    await forwardTab("updated", await api.tabs.get(tabId));
  } catch {
    // The tab closed meanwhile; its removal is announced on its own.
  }
}

chrome.runtime.onStartup.addListener(() => whenReady(() => connection.start()));
chrome.runtime.onInstalled.addListener(() => whenReady(() => connection.start()));
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) whenReady(() => connection.start());
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== "local") return;
  whenReady(async () => {
    const token = changes[Keys.TOKEN];
    if (token !== undefined && typeof token.newValue === "string" && !settings.wroteToken(token.newValue)) {
      // The person pasted a token in the options page: that is pairing by hand, and it ends
      // any pairing request under way.
      await settings.setAuthProblem(undefined);
      await settings.setUnpaired(false);
      await settings.setPairingCode(null);
      await settings.setPairingSince(null);
      await settings.setPairingPort(null);
      connection.restart();
    } else if (changes[Keys.PORT] !== undefined) {
      // The person set the port: a rejection met on the old one, and where the app was
      // before, no longer count; a credential that works there connects at once.
      await settings.setAuthProblem(undefined);
      await settings.forgetPorts();
      connection.restart();
    }
  });
});

chrome.tabs.onCreated.addListener((tab) => whenReady(() => forwardTab("created", tab)));
chrome.tabs.onUpdated.addListener((tabId, changeInfo, tab) =>
  whenReady(() => {
    sessions.handleTabUpdated(tabId, changeInfo, tab);
    if (changeInfo.status !== undefined || changeInfo.url !== undefined) {
      badge.tabNavigated(tabId);
    }
    return forwardTab("updated", tab);
  }),
);
chrome.tabs.onActivated.addListener(({ tabId }) =>
  whenReady(async () => forwardTab("activated", await api.tabs.get(tabId))),
);
chrome.tabs.onRemoved.addListener((tabId) =>
  whenReady(async () => {
    tabEvents = tabEvents.then(() => void connection.send(tabRemovedFrame(tabId)));
    await sessions.handleTabRemoved(tabId);
  }),
);

// Not behind `ready`: Chrome must hear at once whether to wait (nothing is held before the
// connected app asks, and a worker that just woke has no connection).
chrome.downloads.onDeterminingFilename.addListener((item, suggest) => hold.determining(item, suggest));
// A download changing wakes a stopped worker, whose start undoes what its predecessor held.
chrome.downloads.onChanged.addListener(() => whenReady(() => undefined));

chrome.debugger.onEvent.addListener((source, method, params) => sessions.handleEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => whenReady(() => sessions.handleDetach(source, reason)));

chrome.runtime.onMessage.addListener((request, sender, sendResponse) => {
  if (!isOwnPage(sender, chrome.runtime.id)) {
    return false;
  }
  ready
    .then(() => handlePageRequest(request, { connection, sessions, announceTab }))
    .then(sendResponse, (error) => sendResponse({ ok: false, error: String(error) }));
  return true; // the answer is sent asynchronously
});
