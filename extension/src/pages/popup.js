// @ts-check
/**
 * The popup: connection state, the tabs agents are using, attach or detach the current tab,
 * and pair (again). It reads state from chrome.storage.session (written by the service worker)
 * and asks the worker to act through runtime messages; it never reads the relay token.
 */

import { isRestrictedUrl } from "../shared/validation.js";
import { PAIRABLE_STATES, describeState, pairButtonText } from "./state_text.js";

/** @typedef {import("../background/relay_connection.js").RelayState} RelayState */

const RELAY_STATE = "relayState";
const DEBUGGER_TABS = "debuggerTabs";

/** @param {string} id */
const element = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @type {chrome.tabs.Tab | undefined} */
let currentTab;

async function render() {
  const stored = await chrome.storage.session.get([RELAY_STATE, DEBUGGER_TABS]);
  const state = /** @type {RelayState | undefined} */ (stored[RELAY_STATE]);
  const { headline, detail, tone } = describeState(state);
  element("headline").textContent = headline;
  element("headline").dataset.tone = tone;
  element("headline").dataset.state = state?.state ?? "";
  element("detail").textContent = detail === headline ? "" : detail;
  element("pair").hidden = !PAIRABLE_STATES.has(state?.state ?? "");
  element("pair").textContent = pairButtonText(state?.state);

  const debuggerTabs = /** @type {{attached?: number[]} | undefined} */ (stored[DEBUGGER_TABS]);
  const attached = debuggerTabs?.attached ?? [];
  const list = element("attached");
  list.replaceChildren();
  for (const tabId of attached) {
    const item = document.createElement("li");
    try {
      const tab = await chrome.tabs.get(tabId);
      item.textContent = tab.title || tab.url || `Tab ${tabId}`;
      item.title = tab.url ?? "";
    } catch {
      item.textContent = `Tab ${tabId}`;
    }
    list.append(item);
  }
  element("none-attached").hidden = attached.length > 0;

  const toggle = /** @type {HTMLButtonElement} */ (element("toggle-tab"));
  const note = element("tab-note");
  if (currentTab?.id === undefined) {
    toggle.disabled = true;
    note.textContent = "";
  } else if (isRestrictedUrl(currentTab.url || currentTab.pendingUrl)) {
    toggle.disabled = true;
    toggle.textContent = "Let agents use this tab";
    note.textContent = "Tabrelay never uses browser, extension or web store pages.";
  } else {
    const isAttached = attached.includes(currentTab.id);
    toggle.disabled = false;
    toggle.textContent = isAttached ? "Stop agents using this tab" : "Let agents use this tab";
    toggle.dataset.action = isAttached ? "detach" : "attach";
    note.textContent = isAttached ? "Chrome shows a bar while Tabrelay can debug this tab." : "";
  }
}

/** @param {object} request */
async function ask(request) {
  const answer = await chrome.runtime.sendMessage(request);
  if (!answer?.ok) {
    element("tab-note").textContent = answer?.error ?? "The request failed.";
  }
  await render();
}

element("pair").addEventListener("click", () => ask({ type: "pair" }));
element("toggle-tab").addEventListener("click", (event) => {
  const action = /** @type {HTMLElement} */ (event.currentTarget).dataset.action;
  if (currentTab?.id !== undefined && (action === "attach" || action === "detach")) {
    ask({ type: action, tabId: currentTab.id });
  }
});
chrome.storage.onChanged.addListener((_changes, area) => {
  if (area === "session") render();
});

[currentTab] = await chrome.tabs.query({ active: true, currentWindow: true });
await render();
// Keep the "trying again in N s" countdown honest while the popup is open.
setInterval(render, 1000);
