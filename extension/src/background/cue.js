// @ts-check
/**
 * The light on-page cue of a tab an agent is driving: a thin outline around the viewport and a
 * small label, injected through the tab's own debugger session (no content scripts, which could
 * read extension storage). Drawn in a closed shadow root that ignores the pointer and is hidden
 * from assistive technology, so it neither catches clicks nor changes the page's layout.
 */

export const CUE_ELEMENT_ID = "tabrelay-agent-cue";

// Runs in the page; must not leak globals and must survive pages with Trusted Types (no
// innerHTML). Re-runs on every new document through Page.addScriptToEvaluateOnNewDocument.
export const CUE_SOURCE = `(() => {
  const id = ${JSON.stringify(CUE_ELEMENT_ID)};
  const add = () => {
    if (!document.documentElement || document.getElementById(id)) return;
    const host = document.createElement("div");
    host.id = id;
    host.setAttribute("aria-hidden", "true");
    host.style.cssText = "all:initial;position:fixed;inset:0;pointer-events:none;z-index:2147483647;";
    const root = host.attachShadow({ mode: "closed" });
    const frame = document.createElement("div");
    frame.style.cssText = "position:fixed;inset:0;border:2px solid rgba(217,119,6,.75);border-radius:3px;box-sizing:border-box;";
    const label = document.createElement("div");
    label.textContent = "Tabrelay: an agent is using this tab";
    label.style.cssText = "position:fixed;right:8px;bottom:8px;padding:2px 8px;border-radius:9px;background:rgba(217,119,6,.9);color:#fff;font:12px/18px system-ui,sans-serif;";
    root.append(frame, label);
    document.documentElement.append(host);
  };
  if (document.documentElement) add();
  else document.addEventListener("readystatechange", add, { once: true });
})()`;

const REMOVE_SOURCE = `document.getElementById(${JSON.stringify(CUE_ELEMENT_ID)})?.remove()`;
// A page held by a dialog (alert, beforeunload) answers no Runtime.evaluate until the person
// closes it; the detach that follows must not wait for that.
export const HIDE_TIMEOUT_MS = 1_000;

/**
 * Show the cue now and on every document the tab loads while attached. Best effort: a page
 * that refuses it (or a tab that just closed) does not fail the attach.
 *
 * @param {import("./chrome_api.js").ChromeApi} api
 * @param {number} tabId
 */
export async function showCue(api, tabId) {
  try {
    await api.debugger.sendCommand({ tabId }, "Page.addScriptToEvaluateOnNewDocument", { source: CUE_SOURCE });
    await api.debugger.sendCommand({ tabId }, "Runtime.evaluate", { expression: CUE_SOURCE });
  } catch {
    // The cue is a courtesy; the badge still marks the tab.
  }
}

/**
 * Remove the cue from the current document (detaching drops the new-document script).
 *
 * @param {import("./chrome_api.js").ChromeApi} api
 * @param {number} tabId
 */
export async function hideCue(api, tabId) {
  /** @type {any} */
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, HIDE_TIMEOUT_MS);
  });
  try {
    await Promise.race([api.debugger.sendCommand({ tabId }, "Runtime.evaluate", { expression: REMOVE_SOURCE }), late]);
  } catch {
    // The tab may be gone already.
  } finally {
    clearTimeout(timer);
  }
}
