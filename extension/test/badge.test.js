// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { Badge, DRIVEN_TAB_BADGE } from "../src/background/badge.js";
import { bindChromeApi } from "../src/background/chrome_api.js";
import { fakeChrome } from "./fake_chrome.js";

const DRIVEN_TITLE = "Tabrelay: an agent is using this tab";

/** The last title and text set for a tab. @param {ReturnType<typeof fakeChrome>} fake @param {number} tabId */
function tabLook(fake, tabId) {
  /** @param {string} call @param {string} field */
  const last = (call, field) =>
    fake
      .callsTo(call)
      .map(([, details]) => /** @type {any} */ (details))
      .filter((details) => details.tabId === tabId)
      .at(-1)?.[field];
  return { title: last("action.setTitle", "title"), text: last("action.setBadgeText", "text") };
}

test("a driven tab is marked while connected and unmarked when the app is gone", async () => {
  const fake = fakeChrome();
  const badge = new Badge(bindChromeApi(fake.chrome));
  await badge.showState("connected", "Connected");
  await badge.markTabs([5], true);
  assert.deepEqual(tabLook(fake, 5), { title: DRIVEN_TITLE, text: DRIVEN_TAB_BADGE.text });
  await badge.showState("unreachable", "The Tabrelay app quit");
  await badge.markTabs([], false);
  assert.deepEqual(tabLook(fake, 5), { title: "Tabrelay: The Tabrelay app quit", text: null });
});

test("a tab an earlier worker marked is unmarked by the next one while no app drives it", async () => {
  const fake = fakeChrome();
  const badge = new Badge(bindChromeApi(fake.chrome)); // a new worker: it marked nothing itself
  await badge.showState("connecting", "Connecting");
  await badge.markTabs([7], false); // the tab it took over, still attached
  assert.deepEqual(tabLook(fake, 7), { title: "Tabrelay: Connecting", text: null });
});
