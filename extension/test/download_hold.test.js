// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { CommandRouter } from "../src/background/commands.js";
import { DownloadHold, HOLD_LIMIT_MS, MAX_HELD, facts } from "../src/background/download_hold.js";
import { CommandError } from "../src/shared/errors.js";
import { MAX_HELD_URL_LENGTH } from "../src/shared/protocol.js";

/** A hold over a recording chrome.downloads, a recording app and timers run by hand. */
function setup({ connected = true } = {}) {
  /** @type {string[]} */
  const calls = [];
  /** @type {unknown[][]} what each worker kept for the next, as it kept it */
  const remembered = [];
  /** @type {string[]} what Chrome heard and what was remembered, in order */
  const order = [];
  /** @type {Map<number, Record<string, unknown>>} what chrome.downloads.search finds */
  const items = new Map();
  /** @type {any[]} */
  const sent = [];
  /** @type {Map<number, () => void>} */
  const timers = new Map();
  let nextTimer = 1;
  const hold = new DownloadHold({
    downloads: {
      cancel: async (/** @type {number} */ id) => void calls.push(`cancel ${id}`),
      removeFile: async (/** @type {number} */ id) => void calls.push(`removeFile ${id}`),
      search: async (/** @type {{id: number}} */ { id }) => (items.has(id) ? [items.get(id)] : []),
    },
    send: (frame) => (connected ? (sent.push(frame), true) : false),
    remember: async (held) => {
      remembered.push(held);
      order.push(`remember [${held.map((h) => h.id)}]`);
    },
    setTimer: (fn, ms) => {
      assert.equal(ms, HOLD_LIMIT_MS);
      const id = nextTimer++;
      timers.set(id, fn);
      return id;
    },
    clearTimer: (id) => void timers.delete(/** @type {number} */ (id)),
  });
  /** @param {number} id */
  const suggest = (id) => () => {
    calls.push(`suggest ${id}`);
    order.push(`suggest ${id}`);
  };
  /** @param {number} id @param {Record<string, unknown>} [more] */
  const begin = (id, more = {}) =>
    hold.determining({ id, url: `https://shop.test/${id}.csv`, filename: `/home/p/Downloads/${id}.csv`, mime: "text/csv", totalBytes: 12, danger: "safe", startTime: `T${id}`, ...more }, suggest(id));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { hold, calls, remembered, order, items, sent, timers, begin, settle };
}

/** @param {Promise<unknown>} promise */
async function rejectsInvalid(promise) {
  await assert.rejects(promise, (error) => error instanceof CommandError && error.code === "invalid_params");
}

test("nothing is held before the connected app asks: Chrome goes on at once", () => {
  const { begin, sent, calls } = setup();
  assert.equal(begin(1), false, "Chrome suggests for a listener that returns false");
  assert.deepEqual(sent, []);
  assert.deepEqual(calls, []);
});

test("a held download waits for the app's word: allowed goes on, refused is cancelled first", async () => {
  const { hold, begin, sent, calls, timers } = setup();
  hold.hold();
  assert.equal(begin(1), true);
  assert.equal(begin(2), true);
  assert.deepEqual(sent[0], {
    type: "download",
    download: { id: 1, url: "https://shop.test/1.csv", finalUrl: "https://shop.test/1.csv", filename: "1.csv", mime: "text/csv", totalBytes: 12, danger: "safe" },
  });
  assert.deepEqual(hold.held, [1, 2]);
  assert.deepEqual(calls, [], "Chrome waits");

  assert.deepEqual(await hold.decide(1, true), {});
  assert.deepEqual(await hold.decide(2, false), {});
  assert.deepEqual(calls, ["suggest 1", "cancel 2", "suggest 2"], "not one byte more of a refused download completes");
  assert.equal(timers.size, 0, "the limits are cleared");
  // Decided once: a second word, or one about a download never held, changes nothing.
  await rejectsInvalid(hold.decide(1, false));
  await rejectsInvalid(hold.decide(99, true));
  assert.deepEqual(calls, ["suggest 1", "cancel 2", "suggest 2"]);
});

test("fail closed: the app gone, or silent past the limit, or a flood, cancels", async () => {
  const { hold, begin, calls, timers, settle } = setup();
  hold.hold();
  begin(1);
  const [limit] = timers.values();
  limit(); // the app never answered
  await settle();
  assert.deepEqual(calls, ["cancel 1", "suggest 1"]);

  calls.length = 0;
  begin(2);
  begin(3);
  hold.connectionEnded();
  await settle();
  assert.deepEqual(calls, ["cancel 2", "cancel 3", "suggest 2", "suggest 3"]);
  assert.deepEqual(hold.held, []);
  assert.equal(begin(4), false, "a new connection holds nothing until its app asks");

  hold.hold();
  calls.length = 0;
  for (let id = 10; id < 10 + MAX_HELD; id += 1) begin(id);
  assert.equal(begin(99), true);
  await settle();
  assert.deepEqual(calls, ["cancel 99", "suggest 99"], "past MAX_HELD: cancelled, not let through");
  assert.equal(hold.held.length, MAX_HELD);
});

test("a download that cannot be told to the app is cancelled, not let through", async () => {
  const { hold, calls, settle } = setup({ connected: false });
  hold.hold();
  assert.equal(hold.determining({ id: 5, url: "https://a.test/x" }, () => void calls.push("suggest 5")), true);
  await settle();
  assert.deepEqual(calls, ["cancel 5", "suggest 5"]);
  assert.deepEqual(hold.held, []);
});

test("what the app is told is bounded and names no folder", () => {
  const told = facts({ id: 7, url: `data:text/csv,${"a".repeat(10_000)}`, filename: "C:\\Users\\p\\Downloads\\r.csv", totalBytes: 0 });
  assert.equal(told.url.length, MAX_HELD_URL_LENGTH);
  assert.equal(told.finalUrl.length, MAX_HELD_URL_LENGTH);
  assert.equal(told.filename, "r.csv");
  assert.equal(told.totalBytes, -1, "a size the server did not say");
  assert.equal(told.danger, "safe");
  assert.equal(facts({ id: 8, totalBytes: /** @type {any} */ ("9") }).totalBytes, -1);
});

test("downloads.hold and downloads.decide through the router validate what the app sends", async () => {
  const { hold, begin, calls } = setup();
  const router = new CommandRouter({ tabs: /** @type {any} */ ({}), sessions: /** @type {any} */ ({}), relayPort: () => 23001, hold });
  /** @param {string} method @param {Record<string, unknown>} params */
  const run = (method, params) => router.handle({ method, params });
  assert.deepEqual(await run("downloads.hold", {}), {});
  begin(1);
  for (const params of [{}, { id: 1 }, { id: "1", allow: true }, { id: -1, allow: true }, { id: 1.5, allow: true }, { id: 1, allow: "yes" }]) {
    await rejectsInvalid(run("downloads.decide", params));
  }
  assert.deepEqual(calls, [], "nothing decided by a malformed word");
  assert.deepEqual(await run("downloads.decide", { id: 1, allow: true }), {});
  assert.deepEqual(calls, ["suggest 1"]);
  const bare = new CommandRouter({ tabs: /** @type {any} */ ({}), sessions: /** @type {any} */ ({}), relayPort: () => 23001 });
  await assert.rejects(bare.handle({ method: "downloads.hold", params: {} }), (error) => error instanceof CommandError && error.code === "unknown_method");
});

test("a download Chrome will not cancel is never let go, and stays remembered for the next worker", async () => {
  /** @type {string[]} */
  const calls = [];
  /** @type {unknown[][]} */
  const remembered = [];
  const refuse = async () => Promise.reject(new Error("Download must be in progress"));
  const hold = new DownloadHold({
    downloads: { cancel: refuse, removeFile: refuse, search: async () => [] },
    send: () => true,
    remember: async (held) => void remembered.push(held),
  });
  hold.hold();
  hold.determining({ id: 1, url: "https://a.test/x", startTime: "T1" }, () => void calls.push("suggest 1"));
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    await hold.decide(1, false);
  } finally {
    console.warn = warn;
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(calls, [], "not suggested: Chrome keeps it unfinished");
  assert.deepEqual(hold.held, []);
  assert.deepEqual(remembered.at(-1), [{ id: 1, start: "T1" }]);
});

test("what is held is remembered until it is let go, and forgotten before Chrome hears it is allowed", async () => {
  const { hold, begin, remembered, order, settle } = setup();
  hold.hold();
  begin(1);
  begin(2);
  await settle();
  assert.deepEqual(remembered, [[{ id: 1, start: "T1" }], [{ id: 1, start: "T1" }, { id: 2, start: "T2" }]]);
  order.length = 0;
  await hold.decide(1, true);
  await hold.decide(2, false);
  await settle();
  // A worker stopped between the two steps never undoes the download the app allowed.
  assert.deepEqual(order.slice(0, 2), ["remember [2]", "suggest 1"]);
  assert.deepEqual(remembered.at(-1), [], "nothing held: nothing for the next worker to undo");
});

test("a new worker undoes what a stopped one held: unfinished cancelled, completed removed, another's left", async () => {
  const { hold, calls, remembered, items } = setup();
  items.set(1, { id: 1, state: "in_progress", startTime: "T1" });
  items.set(2, { id: 2, state: "complete", exists: true, startTime: "T2" });
  items.set(3, { id: 3, state: "interrupted", startTime: "T3" }); // cancelled already: nothing to undo
  items.set(4, { id: 4, state: "complete", exists: false, startTime: "T4" }); // its file is gone already
  items.set(6, { id: 6, state: "complete", exists: true, startTime: "later" }); // the id given again
  const stored = [1, 2, 3, 4, 5, 6].map((id) => ({ id, start: `T${id}` })); // 5: Chrome no longer knows it
  await hold.recover(stored);
  assert.deepEqual(calls, ["cancel 1", "removeFile 2"]);
  assert.deepEqual(remembered.at(-1), [], "undone once: the next worker finds nothing");

  // What the storage holds is the extension's own, but read as untrusted all the same.
  calls.length = 0;
  items.set(1, { id: 1, state: "in_progress", startTime: "T1" });
  for (const bad of [undefined, null, "1,2", { 0: 1 }, [1, "2", { id: 1.5, start: "T1" }, { id: -1, start: "T1" }, { id: 1 }, { id: 1, start: "x".repeat(41) }, null]]) {
    await hold.recover(bad);
  }
  assert.deepEqual(calls, []);
});

test("a predecessor's download is remembered until undone; one Chrome asks the new worker about again is cancelled", async () => {
  const { hold, begin, calls, items, remembered } = setup();
  hold.hold();
  begin(1);
  items.set(1, { id: 1, state: "in_progress", startTime: "T1" });
  items.set(2, { id: 2, state: "in_progress", startTime: "T2" });
  items.set(3, { id: 3, state: "in_progress", startTime: "T3" });
  const search = items.get.bind(items);
  items.get = (id) => {
    if (id === 2) throw new Error("search failed");
    return search(id);
  };
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    await hold.recover([1, 2, 3].map((id) => ({ id, start: `T${id}` })));
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(calls, ["cancel 1", "suggest 1", "cancel 3"]);
  assert.deepEqual(hold.held, []);
  assert.deepEqual(remembered.at(-1), [{ id: 2, start: "T2" }], "not undone yet: still remembered");
});

test("a download neither told to the app nor cancelled by Chrome is remembered for the next worker", async () => {
  /** @type {unknown[][]} */
  const remembered = [];
  const hold = new DownloadHold({
    downloads: { cancel: async () => Promise.reject(new Error("no")), removeFile: async () => undefined, search: async () => [] },
    send: () => false,
    remember: async (held) => void remembered.push(held),
  });
  hold.hold();
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    hold.determining({ id: 9, url: "https://a.test/x", startTime: "T9" }, () => assert.fail("never let go"));
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(remembered.at(-1), [{ id: 9, start: "T9" }]);
});
