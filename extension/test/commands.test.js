// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { bindChromeApi } from "../src/background/chrome_api.js";
import { CommandRouter, PROTOCOL_METHODS } from "../src/background/commands.js";
import { DebuggerSessions } from "../src/background/debugger_sessions.js";
import { TabRegistry } from "../src/background/tab_registry.js";
import { CommandError } from "../src/shared/errors.js";
import { WithTab } from "../src/shared/frames.js";
import { fakeChrome } from "./fake_chrome.js";

function setup() {
  const fake = fakeChrome({
    tabs: [
      { id: 1, windowId: 1, url: "https://example.com/", title: "Example", active: true },
      { id: 2, windowId: 1, url: "chrome://settings/", title: "Settings" },
      { id: 3, windowId: 1, url: "https://example.org/", title: "Org" },
    ],
  });
  const api = bindChromeApi(fake.chrome);
  /** @type {Array<{tabId: number, method: string}>} */
  const events = [];
  /** @type {number[][]} */
  const statuses = [];
  const sessions = new DebuggerSessions({
    api,
    onEvent: (tabId, method) => events.push({ tabId, method }),
    onChange: (tabs) => statuses.push(tabs),
    cue: false,
  });
  const tabs = new TabRegistry({
    api,
    isAttached: (id) => sessions.isAttached(id),
    isSharedByPerson: (id) => sessions.isSharedByPerson(id),
  });
  const router = new CommandRouter({ tabs, sessions, relayPort: () => 23001 });
  /** @param {string} method @param {Record<string, unknown>} [params] */
  const run = (method, params = {}) => router.handle({ method, params });
  return { fake, sessions, tabs, router, run, events, statuses };
}

/**
 * @param {Promise<unknown>} promise
 * @param {string} code
 */
async function rejectsWith(promise, code) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof CommandError, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  });
}

test("the router obeys exactly the protocol's methods", () => {
  const { router } = setup();
  assert.deepEqual([...router.methods].sort(), [...PROTOCOL_METHODS].sort());
});

test("a forged cookie dump is refused before chrome.debugger is touched", async () => {
  const { fake, run } = setup();
  await assert.rejects(run("cdp.send", { tabId: 1, method: "Network.getAllCookies" }), /method not allowed/);
  await rejectsWith(run("cdp.send", { tabId: 1, method: "Storage.getCookies", params: {} }), "blocked_method");
  await rejectsWith(run("cdp.send", { tabId: 1, method: "Target.createTarget", params: { url: "about:blank" } }), "blocked_method");
  assert.deepEqual(fake.callsTo("debugger."), []);
});

test("a method outside the allowlist answers unknown_method and has no side effect", async () => {
  const { fake, run } = setup();
  for (const method of ["chrome.management.setEnabled", "management.setEnabled", "__proto__", "constructor", "toString", "hasOwnProperty", "tabs.list.call", "eval"]) {
    await rejectsWith(run(method, { id: "x", enabled: false }), "unknown_method");
  }
  assert.deepEqual(fake.calls, []);
});

test("browser and extension pages are refused and never attached", async () => {
  const { fake, run } = setup();
  await rejectsWith(run("debugger.attach", { tabId: 2 }), "restricted_url");
  await rejectsWith(run("cdp.send", { tabId: 2, method: "Runtime.evaluate", params: { expression: "1" } }), "restricted_url");
  await rejectsWith(run("tabs.get", { tabId: 2 }), "restricted_url");
  await rejectsWith(run("tabs.navigate", { tabId: 1, url: "chrome://settings" }), "restricted_url");
  await rejectsWith(run("tabs.create", { url: "chrome-extension://abcdefghijklmnopabcdefghijklmnop/options.html" }), "restricted_url");
  assert.deepEqual(fake.callsTo("debugger.attach"), []);
  assert.deepEqual(fake.callsTo("tabs.update"), []);
  assert.deepEqual(fake.callsTo("tabs.create"), []);
});

test("tabs.list leaves out browser pages", async () => {
  const { run } = setup();
  const tabs = /** @type {Array<{id: number}>} */ (await run("tabs.list"));
  assert.deepEqual(tabs.map((t) => t.id), [1, 3]);
});

test("tabs.list marks the active tab of the window that last had focus", async () => {
  const { run } = setup();
  const tabs = /** @type {Array<{id: number, active: boolean, focused: boolean}>} */ (await run("tabs.list"));
  const active = tabs.filter((t) => t.active);
  assert.ok(active.length > 0);
  assert.deepEqual(tabs.filter((t) => t.focused).map((t) => t.id), active.slice(0, 1).map((t) => t.id));
});

test("cdp.send attaches first, announces the attached tab, then sends", async () => {
  const { fake, run, statuses } = setup();
  fake.onCommand(async (method) => (method === "Runtime.evaluate" ? { result: { value: 2 } } : {}));
  const result = await run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "1+1" } });
  assert.deepEqual(result, { result: { value: 2 } });
  assert.equal(fake.callsTo("debugger.attach").length, 1);
  assert.deepEqual(statuses.at(-1), [1]);
  assert.deepEqual(fake.session.debuggerTabs, { attached: [1], wanted: [1], canceled: [], shared: [] });
});

test("cdp.send asked for the tab answers with it as it is once the command ended", async () => {
  const { fake, run } = setup();
  fake.onCommand(async (method, _params, tabId) => {
    // The script navigated its page: the tab has moved by the time the command answers.
    Object.assign(/** @type {object} */ (fake.tabs.get(tabId)), { url: "https://example.com/next", title: "Next" });
    return { result: { value: 2 } };
  });
  const answer = await run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "1+1" }, tab: true });
  assert.ok(answer instanceof WithTab);
  assert.deepEqual(answer.result, { result: { value: 2 } });
  assert.equal(answer.tab?.id, 1);
  assert.equal(answer.tab?.url, "https://example.com/next");
  assert.equal(answer.tab?.attached, true);
  const tabsGets = fake.callsTo("tabs.get").length;
  const plain = await run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "1" } });
  assert.deepEqual(plain, { result: { value: 2 } }); // not asked: no tab, no look
  assert.equal(fake.callsTo("tabs.get").length, tabsGets);
});

test("the carried tab is read last, after a look at a group the registry did not know", async () => {
  const { fake, run } = setup();
  Object.assign(/** @type {object} */ (fake.tabs.get(1)), { groupId: 42 }); // the person's own group
  fake.onCommand(async () => ({ result: { value: 1 } }));
  const answer = await run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: {}, tab: true });
  assert.ok(answer instanceof WithTab);
  const after = fake.calls.map(([name]) => name).slice(fake.calls.findIndex(([name]) => name === "debugger.sendCommand"));
  assert.deepEqual(after.filter((name) => name.startsWith("tab")), ["tabs.get", "tabGroups.query", "tabs.get"]);
});

test("cdp.send whose tab closed as it answered answers without the tab", async () => {
  const { fake, run } = setup();
  fake.onCommand(async (_method, _params, tabId) => {
    fake.tabs.delete(tabId); // window.close() in the script
    return { result: { type: "undefined" } };
  });
  const answer = await run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "close()" }, tab: true });
  assert.ok(answer instanceof WithTab);
  assert.deepEqual(answer.result, { result: { type: "undefined" } });
  assert.equal(answer.tab, undefined);
});

test("cdp.send's tab must be true or false", async () => {
  const { fake, run } = setup();
  for (const tab of ["yes", 1, {}]) {
    await rejectsWith(run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: {}, tab }), "invalid_params");
  }
  assert.deepEqual(fake.callsTo("debugger."), []);
});

test("two commands at once attach only once", async () => {
  const { fake, run } = setup();
  await Promise.all([
    run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "1" } }),
    run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: { expression: "2" } }),
  ]);
  assert.equal(fake.callsTo("debugger.attach").length, 1);
});

test("a tab closed during a command fails that command with a clear no_tab error", async () => {
  const { fake, sessions, run } = setup();
  fake.onCommand(() => new Promise(() => {})); // never answers, like a hanging evaluate
  await run("debugger.attach", { tabId: 3 });
  const pending = run("cdp.send", { tabId: 3, method: "Runtime.evaluate", params: { expression: "new Promise(() => {})", awaitPromise: true } });
  await new Promise((resolve) => setTimeout(resolve, 5));
  fake.tabs.delete(3);
  await sessions.handleDetach({ tabId: 3 }, "target_closed");
  await assert.rejects(pending, (error) => {
    assert.ok(error instanceof CommandError);
    assert.equal(error.code, "no_tab");
    assert.match(error.message, /Tab 3 was closed while Runtime\.evaluate was running/);
    return true;
  });
  assert.equal(sessions.isAttached(3), false);
});

test("after the person cancels the debugging bar, commands are refused, not re-attached", async () => {
  const { fake, sessions, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  await sessions.handleDetach({ tabId: 1 }, "canceled_by_user");
  fake.attached.delete(1);
  await rejectsWith(run("cdp.send", { tabId: 1, method: "Runtime.evaluate", params: {} }), "canceled_by_user");
  await rejectsWith(run("debugger.attach", { tabId: 1 }), "canceled_by_user");
  assert.equal(fake.callsTo("debugger.attach").length, 1);
  // The person shares it again from the popup.
  await sessions.attach(1, { byUser: true });
  assert.equal(sessions.isAttached(1), true);
});

test("a tab that stays open after target_closed is re-attached", async () => {
  const { fake, sessions, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  fake.attached.delete(1);
  await sessions.handleDetach({ tabId: 1 }, "target_closed");
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(sessions.isAttached(1), true);
  assert.equal(fake.callsTo("debugger.attach").length, 2);
});

test("a wanted tab that navigated to a browser page is re-attached when it leaves it", async () => {
  const { fake, sessions, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  Object.assign(/** @type {object} */ (fake.tabs.get(1)), { url: "chrome://version/" });
  fake.attached.delete(1);
  await sessions.handleDetach({ tabId: 1 }, "target_closed");
  assert.equal(sessions.isAttached(1), false);
  Object.assign(/** @type {object} */ (fake.tabs.get(1)), { url: "https://example.com/back" });
  sessions.handleTabUpdated(1, { url: "https://example.com/back" }, { url: "https://example.com/back" });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(sessions.isAttached(1), true);
});

test("a restarted worker re-adopts the sessions its predecessor attached", async () => {
  const { fake, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  // A new worker: fresh objects over the same browser state.
  const api = bindChromeApi(fake.chrome);
  const restarted = new DebuggerSessions({ api, onEvent: () => {}, onChange: () => {}, cue: false });
  await restarted.restore();
  assert.deepEqual(restarted.attachedTabs(), [1]);
  assert.equal(fake.callsTo("debugger.attach").length, 1);
});

test("a tab a previous worker attached but did not record is adopted, another debugger's is refused", async () => {
  const { fake, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  // A new worker whose record of tab 1 was lost: Chrome answers that a debugger is attached.
  const api = bindChromeApi(fake.chrome);
  const restarted = new DebuggerSessions({ api, onEvent: () => {}, onChange: () => {}, cue: false });
  const tabs = new TabRegistry({ api, isAttached: (id) => restarted.isAttached(id), isSharedByPerson: () => false });
  const router = new CommandRouter({ tabs, sessions: restarted, relayPort: () => 23001 });
  await router.handle({ method: "debugger.attach", params: { tabId: 1 } });
  assert.equal(restarted.isAttached(1), true, "its own session, adopted");
  // DevTools holds tab 3: the extension's harmless command fails there, so it is not adopted.
  fake.attached.add(3);
  fake.onCommand(async (_method, _params, tabId) => {
    if (tabId === 3) throw new Error("Debugger is not attached to the tab with id: 3.");
    return {};
  });
  await rejectsWith(router.handle({ method: "debugger.attach", params: { tabId: 3 } }), "another_debugger");
  assert.equal(restarted.isAttached(3), false);
});

test("debugger events are forwarded with their tab", () => {
  const { sessions, events } = setup();
  sessions.handleEvent({ tabId: 1 }, "Page.loadEventFired", { timestamp: 1 });
  assert.deepEqual(events, [{ tabId: 1, method: "Page.loadEventFired" }]);
});

test("tabs agents open go into the Tabrelay group", async () => {
  const { fake, run } = setup();
  const tab = /** @type {{groupId: number, url: string}} */ (await run("tabs.create", { url: "https://example.net/" }));
  assert.equal(tab.url, "https://example.net/");
  assert.notEqual(tab.groupId, -1);
  const update = fake.callsTo("tabGroups.update")[0];
  assert.deepEqual(update[2], { title: "Tabrelay", color: "orange" });
});

test("screenshots come from the active tab through CDP", async () => {
  const { fake, run } = setup();
  fake.onCommand(async (method, params) => {
    assert.equal(method, "Page.captureScreenshot");
    assert.deepEqual(params, { format: "jpeg", quality: 50 });
    return { data: "AAAA" };
  });
  assert.deepEqual(await run("tabs.screenshot", { format: "jpeg", quality: 50 }), { dataUrl: "data:image/jpeg;base64,AAAA" });
});

test("tabs in the Tabrelay group and tabs the person shared are marked shared; others are not", async () => {
  const { run, sessions } = setup();
  /** @param {number} id */
  const shared = async (id) => /** @type {{shared: boolean}} */ (await run("tabs.get", { tabId: id })).shared;
  const opened = /** @type {{id: number, shared: boolean}} */ (await run("tabs.create", { url: "https://example.net/" }));
  assert.equal(opened.shared, true, "an agent's tab is in the Tabrelay group");
  assert.equal(await shared(1), false);

  await sessions.attach(1, { byUser: true });
  assert.equal(await shared(1), true, "shared from the popup");
  await sessions.detach(1);
  assert.equal(await shared(1), true, "an agent detaching does not unshare it");
  await sessions.detach(1, { byUser: true });
  assert.equal(await shared(1), false, "unshared from the popup");

  await run("tabs.group", { tabIds: [3], title: "Research" });
  assert.equal(await shared(3), false, "another group is not the Tabrelay group");
  await run("tabs.group", { tabIds: [3] });
  assert.equal(await shared(3), true);
});

test("a tab the person shared stops being shared when they cancel the debugging bar", async () => {
  const { sessions } = setup();
  await sessions.attach(1, { byUser: true });
  await sessions.handleDetach({ tabId: 1 }, "canceled_by_user");
  assert.equal(sessions.isSharedByPerson(1), false);
});

test("a held document request is let through when the app cannot decide, and all are when it leaves", async () => {
  const { fake, sessions, run } = setup();
  await run("debugger.attach", { tabId: 1 });
  await run("debugger.attach", { tabId: 3 });
  const before = fake.calls.length;
  sessions.letThrough(1, { requestId: "interception-1" });
  sessions.letThrough(2, { requestId: "not-attached" }); // nothing of ours holds it
  sessions.letThrough(1, { requestId: 7 }); // malformed: ignored
  sessions.letThrough(1, { requestId: "in-a-frame" }, "child-1"); // a frame of another process
  await sessions.stopHolding();
  const sent = fake.calls
    .slice(before)
    .filter(([name]) => name === "debugger.sendCommand")
    .map(([, target, method, params]) => [/** @type {any} */ (target).tabId, /** @type {any} */ (target).sessionId, method, params]);
  const letGo = { autoAttach: false, waitForDebuggerOnStart: false, flatten: true };
  assert.deepEqual(sent, [
    [1, undefined, "Fetch.continueRequest", { requestId: "interception-1" }],
    [1, "child-1", "Fetch.continueRequest", { requestId: "in-a-frame" }],
    // The frames the app attached to go (their held requests with them).
    [1, undefined, "Fetch.disable", {}],
    [1, undefined, "Target.setAutoAttach", letGo],
    [3, undefined, "Fetch.disable", {}],
    [3, undefined, "Target.setAutoAttach", letGo],
  ]);
});

test("downloads.search names only the downloads of the address asked, since the time asked", async () => {
  /** @type {Array<Record<string, unknown>>} */
  const queries = [];
  const items = [
    { id: 1, url: "https://shop.test/report.csv", finalUrl: "https://cdn.test/r.csv", filename: "/home/p/Downloads/report.csv", mime: "text/csv", state: "complete", bytesReceived: 12, totalBytes: 12, fileSize: 12, exists: true, startTime: "2026-11-29T10:00:00.000Z", referrer: "https://shop.test/" },
    { id: 2, url: "https://other.test/private.pdf", finalUrl: "https://other.test/private.pdf", filename: "/home/p/Downloads/private.pdf", state: "complete", startTime: "2026-11-29T10:00:01.000Z" },
  ];
  const downloads = {
    /** @param {Record<string, unknown>} query */
    search: async (query) => {
      queries.push(query);
      return items.filter((item) => (query.url === undefined || item.url === query.url) && (query.finalUrl === undefined || item.finalUrl === query.finalUrl));
    },
  };
  const { tabs, sessions } = setup();
  const router = new CommandRouter({ tabs, sessions, relayPort: () => 23001, downloads });
  /** @param {Record<string, unknown>} params */
  const search = (params) => router.handle({ method: "downloads.search", params });

  const found = /** @type {Array<Record<string, unknown>>} */ (await search({ url: "https://shop.test/report.csv", startedAfter: Date.parse("2026-11-29T09:59:59Z") }));
  assert.deepEqual(found.map((item) => item.id), [1]);
  assert.equal(found[0].filename, "/home/p/Downloads/report.csv");
  assert.equal("referrer" in found[0], false, "only the fields the protocol names");
  assert.deepEqual(queries[0], { startedAfter: "2026-11-29T09:59:58.999Z", orderBy: ["-startTime"], url: "https://shop.test/report.csv" });
  // Newest first, whichever address matched.
  items.push({ ...items[0], id: 3, url: "https://shop.test/report.csv?again", startTime: "2026-11-29T10:00:05.000Z" });
  const both = /** @type {any[]} */ (await search({ url: "https://cdn.test/r.csv" }));
  assert.deepEqual(both.map((i) => i.id), [3, 1]);
  items.pop();
  // By the address it ended at after redirects, too: once.
  assert.deepEqual((/** @type {any[]} */ (await search({ url: "https://cdn.test/r.csv" }))).map((i) => i.id), [1]);

  for (const params of [{}, { url: "" }, { url: 5 }, { url: "x".repeat(9000) }, { url: "https://a.test/", startedAfter: -1 }, { url: "https://a.test/", startedAfter: "soon" }]) {
    await rejectsWith(search(params), "invalid_params");
  }
  const { run } = setup(); // a router without chrome.downloads
  await rejectsWith(run("downloads.search", { url: "https://shop.test/report.csv" }), "unknown_method");
});
