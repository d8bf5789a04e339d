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
  /** @type {string[]} pausing and resuming, apart from what decides */
  const flow = [];
  /** @type {number[][]} what each worker kept for the next */
  const remembered = [];
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
      pause: async (/** @type {number} */ id) => void flow.push(`pause ${id}`),
      resume: async (/** @type {number} */ id) => void flow.push(`resume ${id}`),
      removeFile: async (/** @type {number} */ id) => void calls.push(`removeFile ${id}`),
      search: async (/** @type {{id: number}} */ { id }) => (items.has(id) ? [items.get(id)] : []),
    },
    send: (frame) => (connected ? (sent.push(frame), true) : false),
    remember: async (ids) => void remembered.push(ids),
    setTimer: (fn, ms) => {
      assert.equal(ms, HOLD_LIMIT_MS);
      const id = nextTimer++;
      timers.set(id, fn);
      return id;
    },
    clearTimer: (id) => void timers.delete(/** @type {number} */ (id)),
  });
  /** @param {number} id */
  const suggest = (id) => () => void calls.push(`suggest ${id}`);
  /** @param {number} id @param {Record<string, unknown>} [more] */
  const begin = (id, more = {}) =>
    hold.determining({ id, url: `https://shop.test/${id}.csv`, filename: `/home/p/Downloads/${id}.csv`, mime: "text/csv", totalBytes: 12, danger: "safe", ...more }, suggest(id));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { hold, calls, flow, remembered, items, sent, timers, begin, settle };
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

test("a download Chrome will not cancel is never let go", async () => {
  /** @type {string[]} */
  const calls = [];
  const refuse = async () => Promise.reject(new Error("Download must be in progress"));
  const hold = new DownloadHold({
    downloads: { cancel: refuse, pause: refuse, resume: refuse, removeFile: refuse, search: async () => [] },
    send: () => true,
    remember: async () => undefined,
  });
  hold.hold();
  hold.determining({ id: 1, url: "https://a.test/x" }, () => void calls.push("suggest 1"));
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    await hold.decide(1, false);
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(calls, [], "not suggested: Chrome keeps it unfinished");
});

test("a held download is paused while it waits, resumed once allowed, and remembered while held", async () => {
  const { hold, begin, flow, remembered, calls } = setup();
  hold.hold();
  begin(1);
  begin(2);
  assert.deepEqual(flow, ["pause 1", "pause 2"], "nothing more of it is written while the person decides");
  assert.deepEqual(remembered, [[1], [1, 2]]);
  await hold.decide(1, true);
  await hold.decide(2, false);
  assert.deepEqual(calls, ["suggest 1", "cancel 2", "suggest 2"]);
  assert.deepEqual(flow, ["pause 1", "pause 2", "resume 1"], "named first, then it goes on");
  assert.deepEqual(remembered.at(-1), [], "nothing held: nothing for the next worker to undo");
});

test("a new worker undoes what a stopped one held: unfinished cancelled, completed removed", async () => {
  const { hold, calls, remembered, items } = setup();
  items.set(1, { id: 1, state: "in_progress" });
  items.set(2, { id: 2, state: "complete", exists: true });
  items.set(3, { id: 3, state: "interrupted" }); // cancelled already: nothing to undo
  items.set(4, { id: 4, state: "complete", exists: false }); // its file is gone already
  await hold.recover([1, 2, 3, 4, 5]); // 5: Chrome no longer knows it
  assert.deepEqual(calls, ["cancel 1", "removeFile 2"]);
  assert.deepEqual(remembered.at(-1), [], "undone once: the next worker finds nothing");

  // What the storage holds is the extension's own, but read as untrusted all the same.
  calls.length = 0;
  for (const bad of [undefined, null, "1,2", { 0: 1 }, [1.5, "2", -0.5, Number.MAX_VALUE, null]]) {
    await hold.recover(bad);
  }
  assert.deepEqual(calls, []);
});

test("a download Chrome asks the new worker about again is cancelled all the same, and a failure to undo one does not stop the rest", async () => {
  const { hold, begin, calls, items } = setup();
  hold.hold();
  begin(1);
  items.set(1, { id: 1, state: "in_progress" });
  items.set(2, { id: 2, state: "in_progress" });
  items.set(3, { id: 3, state: "in_progress" });
  const search = items.get.bind(items);
  items.get = (id) => {
    if (id === 2) throw new Error("search failed");
    return search(id);
  };
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    await hold.recover([1, 2, 3]);
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(calls, ["cancel 1", "suggest 1", "cancel 3"]);
  assert.deepEqual(hold.held, []);
});
