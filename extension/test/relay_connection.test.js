// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { RelayConnection } from "../src/background/relay_connection.js";
import { Backoff } from "../src/shared/backoff.js";
import { WithTab, cdpEventFrame, pingFrame } from "../src/shared/frames.js";
import { appProof, extensionProof, newNonce } from "../src/shared/handshake.js";

const TOKEN = "tok_abcdefghijklmnopqrstuvwxyz0123456789ABCDE";
const PORT = 23001;

/** A WebSocket the test plays the server side of. */
class FakeSocket {
  /** @type {FakeSocket[]} */
  static instances = [];

  /** @type {() => number} */
  static clock = () => 0;

  /** @param {string} url */
  constructor(url) {
    this.url = url;
    this.createdAt = FakeSocket.clock();
    /** @type {string[]} */
    this.sent = [];
    this.closed = false;
    /** @type {number | undefined} */
    this.closedWith = undefined;
    /** @type {((event: any) => void) | null} */ this.onopen = null;
    /** @type {((event: any) => void) | null} */ this.onmessage = null;
    /** @type {((event: any) => void) | null} */ this.onclose = null;
    /** @type {((event: any) => void) | null} */ this.onerror = null;
    FakeSocket.instances.push(this);
  }

  /** @param {string} data */
  send(data) {
    if (this.closed) throw new Error("closed");
    this.sent.push(data);
  }

  close(code = 1000) {
    if (this.closed) return;
    this.closed = true;
    this.closedWith = code;
    queueMicrotask(() => this.onclose?.({ code, reason: "" }));
  }

  // --- the server's side ---
  open() {
    this.onopen?.({});
  }

  /** @param {unknown} message */
  receive(message) {
    this.onmessage?.({ data: typeof message === "string" ? message : JSON.stringify(message) });
  }

  /** @param {number} code */
  serverClose(code) {
    this.closed = true;
    this.onclose?.({ code, reason: "" });
  }

  messages() {
    return this.sent.map((s) => JSON.parse(s));
  }
}

function fakeTimers() {
  let now = 1_000_000;
  let nextId = 0;
  /** @type {Map<number, {at: number, fn: () => void, every?: number}>} */
  const timers = new Map();
  return {
    /** @param {() => void} fn @param {number} ms */
    setTimeout: (fn, ms) => (timers.set(++nextId, { at: now + ms, fn }), nextId),
    /** @param {number} id */
    clearTimeout: (id) => void timers.delete(id),
    /** @param {() => void} fn @param {number} ms */
    setInterval: (fn, ms) => (timers.set(++nextId, { at: now + ms, fn, every: ms }), nextId),
    /** @param {number} id */
    clearInterval: (id) => void timers.delete(id),
    now: () => now,
    pending: () => timers.size,
    /** Let time pass, firing due timers in order. @param {number} ms */
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (due === undefined) break;
        const [id, timer] = due;
        now = timer.at;
        if (timer.every) timer.at += timer.every;
        else timers.delete(id);
        timer.fn();
        await settle();
      }
      now = end;
    },
  };
}

/** Let promises, WebCrypto and queued callbacks run. */
async function settle() {
  for (let i = 0; i < 5; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * @param {() => boolean} condition
 * @param {string} what
 */
async function until(condition, what) {
  // Real time, generous: on a busy machine the promises behind a fake timer take a while.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/**
 * The settings store in memory, as settings.js keeps it in chrome.storage.
 * @param {{token?: string | null, port?: number}} [initial] token null: not paired yet
 */
function memorySettings({ token: initialToken = TOKEN, port = PORT } = {}) {
  const token = initialToken ?? undefined;
  const data = {
    port,
    token,
    /** @type {string | undefined} */ authProblem: undefined,
    unpaired: false,
    /** @type {number[]} */ knownPorts: [],
    /** @type {number | undefined} */ announcedPort: undefined,
    /** @type {number | undefined} */ pairingSince: undefined,
    /** @type {string | undefined} */ pairingCode: undefined,
    /** @type {number | undefined} */ pairingPort: undefined,
    /** @type {"declined" | "expired" | undefined} */ pairingEnded: undefined,
    /** @type {number | undefined} */ declinedUntil: undefined,
  };
  return {
    data,
    load: async () => ({
      port: data.port,
      token: data.token,
      authProblem: data.authProblem,
      unpaired: data.unpaired,
      knownPorts: [...data.knownPorts],
      announcedPort: data.announcedPort,
    }),
    /** @param {string} t */ saveToken: async (t) => void ((data.token = t), (data.unpaired = false), (data.authProblem = undefined)),
    forgetToken: async () => void (data.token = undefined),
    /** @param {string | undefined} m */ setAuthProblem: async (m) => void (data.authProblem = m),
    /** @param {boolean} u */ setUnpaired: async (u) => void (data.unpaired = u),
    pairingSince: async () => data.pairingSince,
    /** @param {number | null} s */ setPairingSince: async (s) => void (data.pairingSince = s ?? undefined),
    pairingCode: async () => data.pairingCode,
    /** @param {string | null} c */ setPairingCode: async (c) => void (data.pairingCode = c ?? undefined),
    pairingPort: async () => data.pairingPort,
    /** @param {number | null} p */ setPairingPort: async (p) => void (data.pairingPort = p ?? undefined),
    pairingEnded: async () => data.pairingEnded,
    /** @param {"declined" | "expired" | null} e */ setPairingEnded: async (e) => void (data.pairingEnded = e ?? undefined),
    declinedUntil: async () => data.declinedUntil,
    /** @param {number | null} u */ setDeclinedUntil: async (u) => void (data.declinedUntil = u ?? undefined),
    /** @param {number} p */
    rememberPort: async (p) => {
      data.knownPorts = [p, ...data.knownPorts.filter((k) => k !== p)].slice(0, 4);
      if (data.announcedPort === p) data.announcedPort = undefined;
    },
    /** @param {number} p */ setAnnouncedPort: async (p) => void (data.announcedPort = p),
  };
}

/**
 * @param {object} [options]
 * @param {ReturnType<typeof memorySettings>} [options.settings]
 * @param {(url: string) => Promise<{status: number, body: string}>} [options.fetch]
 * @param {(url: string, init: RequestInit) => Promise<{status: number, text: () => Promise<string>}>} [options.fetchImpl]
 *   the whole fetch, when the test needs the request's options
 * @param {(command: {id: string, method: string}) => Promise<unknown>} [options.run] how a command is carried out
 */
function setup({ settings = memorySettings(), fetch, fetchImpl, run } = {}) {
  FakeSocket.instances = [];
  const timers = fakeTimers();
  FakeSocket.clock = timers.now;
  /** @type {Array<{id: string, method: string}>} */
  const obeyed = [];
  /** @type {string[]} */
  const fetched = [];
  /** @type {any[]} */
  const states = [];
  const released = { count: 0 };
  const connection = new RelayConnection({
    settings,
    WebSocketImpl: /** @type {any} */ (FakeSocket),
    fetchImpl: /** @type {any} */ (
      async (/** @type {string} */ url, /** @type {RequestInit} */ init) => {
        fetched.push(url);
        if (fetchImpl) return fetchImpl(url, init);
        if (!fetch) throw new TypeError("Failed to fetch");
        const answer = await fetch(url);
        return { status: answer.status, text: async () => answer.body };
      }
    ),
    onState: (state) => states.push(state),
    onRelease: () => {
      released.count += 1;
    },
    onCommand: async (command) => {
      obeyed.push(command);
      return run ? run(command) : { done: command.method };
    },
    announcement: async () => [
      { type: "hello", protocol: 1, extension: "0.1.0", browser: "Test 1", capabilities: [], instance: "i" },
      { type: "status", attachedTabs: [4] },
    ],
    timers,
    backoff: new Backoff({ random: () => 0.5 }),
  });
  const socket = () => FakeSocket.instances[FakeSocket.instances.length - 1];
  const state = () => states[states.length - 1]?.state;
  return { connection, settings, timers, obeyed, fetched, states, socket, state, released };
}

/**
 * Play the real app's side of the handshake on the latest socket.
 * @param {FakeSocket} socket
 * @param {{token?: string, appProofOverride?: string}} [options]
 */
async function authenticate(socket, { token = TOKEN, appProofOverride } = {}) {
  socket.open();
  const appNonce = newNonce();
  socket.receive({ type: "auth.challenge", protocol: 1, nonce: appNonce });
  await until(() => socket.sent.length === 1, "auth.response");
  const response = JSON.parse(socket.sent[0]);
  const binding = { port: Number(new URL(socket.url).port), appNonce, extensionNonce: response.nonce };
  assert.equal(response.type, "auth.response");
  assert.equal(response.proof, await extensionProof(token, binding), "the extension's proof");
  socket.receive({ type: "auth.ok", proof: appProofOverride ?? (await appProof(token, binding)) });
  await settle();
}

test("connects, proves itself, checks the app's proof, then announces hello and status", async () => {
  const { connection, socket, state } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  assert.equal(socket().url, "ws://127.0.0.1:23001/ws/browser-relay");
  await authenticate(socket());
  const sent = socket().messages();
  assert.deepEqual(sent.slice(1).map((m) => m.type), ["hello", "status"]);
  assert.equal(state(), "connected");
  assert.equal(connection.connected, true);
});

test("commands are answered once connected, errors with their code", async () => {
  const { connection, socket, obeyed } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().receive({ id: "1", method: "tabs.list", params: {} });
  socket().receive({ id: "2", method: "tabs.get", params: [1] });
  await until(() => socket().sent.length === 5, "two answers");
  assert.deepEqual(obeyed.map((c) => c.id), ["1"]);
  const answers = socket().messages().slice(3);
  const answer = answers.find((m) => m.id === "1");
  const error = answers.find((m) => m.id === "2");
  assert.deepEqual(answer, { id: "1", result: { done: "tabs.list" } });
  assert.equal(error.id, "2");
  assert.equal(error.code, "invalid_params");
});

test("an answer that carries its tab puts it beside the result, and only when one was read", async () => {
  const tab = { id: 5, windowId: 1, url: "https://example.com/", title: "Example", active: true, attached: true, groupId: -1, shared: false };
  const { connection, socket } = setup({
    run: async (command) => new WithTab({ value: command.id }, command.id === "1" ? tab : undefined),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().receive({ id: "1", method: "cdp.send", params: { tabId: 5, method: "Runtime.evaluate", tab: true } });
  socket().receive({ id: "2", method: "cdp.send", params: { tabId: 5, method: "Runtime.evaluate", tab: true } });
  await until(() => socket().sent.length === 5, "two answers");
  const answers = socket().messages().slice(3);
  assert.deepEqual(answers.find((m) => m.id === "1"), { id: "1", result: { value: "1" }, tab });
  assert.deepEqual(answers.find((m) => m.id === "2"), { id: "2", result: { value: "2" } });
});

test("a command of a connection that dropped is answered on no other connection", async () => {
  /** @type {(value: unknown) => void} */
  let finish = () => {};
  const { connection, socket, obeyed, timers } = setup({ run: () => new Promise((resolve) => (finish = resolve)) });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  const first = socket();
  await authenticate(first);
  first.receive({ id: "7", method: "cdp.send", params: { tabId: 1, method: "Runtime.evaluate" } });
  await until(() => obeyed.length === 1, "the command runs");
  first.serverClose(4504); // the app lost the heartbeat; its pending command 7 failed there
  await settle();
  await timers.advance(1_000);
  await until(() => FakeSocket.instances.length === 2, "a reconnect");
  const second = socket();
  await authenticate(second);
  assert.equal(connection.connected, true);
  const before = second.sent.length;
  finish({ value: 2 });
  await settle();
  assert.deepEqual(second.sent.slice(before), [], "the new app never asked for command 7");
  assert.ok(!first.sent.some((frame) => frame.includes('"id":"7"')), "the closed socket gets nothing either");
});

test("a command sent before the app proves itself is never obeyed", async () => {
  const { connection, socket, obeyed, state } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().open();
  socket().receive({ id: "1", method: "tabs.create", params: { url: "https://evil.test/" } });
  await settle();
  assert.deepEqual(obeyed, []);
  assert.equal(socket().closed, true);
  assert.equal(state(), "unverified");
  assert.deepEqual(socket().sent, []);
});

test("an impostor that cannot prove the token learns nothing and is obeyed in nothing", async () => {
  const { connection, socket, obeyed, state } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  const impostor = socket();
  await authenticate(impostor, { appProofOverride: "A".repeat(43) });
  impostor.receive({ id: "1", method: "debugger.attach", params: { tabId: 1 } });
  impostor.receive({ type: "ping" });
  await settle();
  assert.deepEqual(obeyed, []);
  assert.equal(state(), "unverified");
  assert.deepEqual(impostor.messages().map((m) => m.type), ["auth.response"]);
  assert.ok(!impostor.sent.some((frame) => frame.includes(TOKEN)), "the token never goes on the wire");
  assert.equal(connection.connected, false);
});

test("an impostor's close codes neither unpair the browser nor swap its token", async () => {
  const evil = "evil_token_abcdefghijklmnopqrstuvwxyz012345";
  const { connection, socket, settings, timers } = setup({
    fetch: async () => ({ status: 200, body: JSON.stringify({ port: PORT, token: evil, protocol: 1 }) }),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().open();
  socket().serverClose(4410);
  await settle();
  await timers.advance(1_000);
  await until(() => FakeSocket.instances.length === 2, "a retry");
  socket().open();
  socket().serverClose(4403);
  await settle();
  assert.equal(settings.data.token, TOKEN);
  assert.equal(settings.data.unpaired, false);
});

test("a 4401 rejection is permanent and visible until the person pairs again", async () => {
  const { connection, socket, settings, timers, state, fetched } = setup({
    fetch: async () => ({ status: 200, body: JSON.stringify({ port: PORT, token: "new_token_abcdefghijklmnopqrstuvwxyz0123456", protocol: 1 }) }),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().open();
  socket().serverClose(4401);
  await until(() => state() === "rejected", "rejected");
  assert.equal(fetched.length, 0, "nothing is asked of whoever is on the port");
  assert.equal(settings.data.token, TOKEN, "a token from the port is not adopted without the person");
  assert.match(/** @type {string} */ (settings.data.authProblem), /no longer accepts this browser's credential/);
  await timers.advance(10 * 60_000);
  connection.start(); // an alarm wakes the worker
  await settle();
  assert.equal(FakeSocket.instances.length, 1, "no new attempt");
  await connection.pair();
  await until(() => FakeSocket.instances.length === 2, "a new attempt after Pair");
  assert.equal(settings.data.token, "new_token_abcdefghijklmnopqrstuvwxyz0123456");
});

test("a rotation announced by the authenticated app fetches the new token and reconnects", async () => {
  const next = "rotated_abcdefghijklmnopqrstuvwxyz0123456789";
  const { connection, socket, settings } = setup({
    fetch: async () => ({ status: 200, body: JSON.stringify({ port: PORT, token: next, protocol: 1 }) }),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().serverClose(4410);
  await until(() => FakeSocket.instances.length === 2, "a reconnect");
  assert.equal(settings.data.token, next);
  await authenticate(socket(), { token: next });
  assert.equal(connection.connected, true);
});

test("after a rotation it waits for the person's approval, never retrying the dead credential", async () => {
  const next = "rotated_abcdefghijklmnopqrstuvwxyz0123456789";
  let approved = false;
  const { connection, socket, settings, state, timers } = setup({
    fetch: async () =>
      approved
        ? { status: 200, body: JSON.stringify({ port: PORT, token: next, protocol: 1 }) }
        : { status: 403, body: JSON.stringify({ error: "pairing_required" }) },
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().serverClose(4410);
  await until(() => state() === "awaiting_approval", "awaiting approval");
  assert.equal(settings.data.token, undefined, "the dead credential is forgotten");
  await timers.advance(8_000);
  assert.equal(FakeSocket.instances.length, 1, "no connection with the old credential");
  approved = true;
  await timers.advance(4_000);
  await until(() => FakeSocket.instances.length === 2, "connects once approved");
  await authenticate(socket(), { token: next });
  assert.equal(connection.connected, true);
});

test("an unpairing by the authenticated app forgets the token and stops", async () => {
  const { connection, socket, settings, timers, state } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().serverClose(4403);
  await until(() => state() === "unpaired", "unpaired");
  assert.equal(settings.data.token, undefined);
  await timers.advance(60_000);
  connection.start();
  await settle();
  assert.equal(FakeSocket.instances.length, 1);
});

test("an event larger than the app takes is left out and the connection stays", async () => {
  const { connection, socket } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  const before = socket().sent.length;
  const huge = cdpEventFrame(1, "Runtime.consoleAPICalled", { text: "x".repeat(33 * 1024 * 1024) });
  assert.equal(connection.send(huge), false);
  assert.equal(socket().sent.length, before, "nothing went on the wire");
  assert.equal(connection.send(pingFrame()), true, "still connected");
});

test("an event under the limit in characters but over it in UTF-8 bytes is left out too", async () => {
  const { connection, socket } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  const before = socket().sent.length;
  // 12 Mi euro signs: 12 Mi UTF-16 code units (under 32 MiB) but 36 MiB on the wire.
  const text = "\u20ac".repeat(12 * 1024 * 1024);
  assert.equal(connection.send(cdpEventFrame(1, "Runtime.consoleAPICalled", { text })), false);
  assert.equal(socket().sent.length, before, "nothing went on the wire");
  // The same count of ASCII characters fits, and is sent.
  const ascii = "x".repeat(12 * 1024 * 1024);
  assert.equal(connection.send(cdpEventFrame(1, "Runtime.consoleAPICalled", { text: ascii })), true);
  // Just over the limit in bytes, with only a few multi-byte characters, is left out.
  const edge = "x".repeat(32 * 1024 * 1024 - 200) + "\u20ac".repeat(100);
  assert.equal(connection.send(cdpEventFrame(1, "Runtime.consoleAPICalled", { text: edge })), false);
  assert.equal(connection.send(pingFrame()), true, "still connected");
});

test("while connected the extension pings every 20 seconds", async () => {
  const { connection, socket, timers } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  const before = socket().sent.length;
  for (let i = 0; i < 3; i += 1) {
    socket().receive({ type: "pong" });
    await timers.advance(20_000);
  }
  const pings = socket().messages().slice(before).filter((m) => m.type === "ping");
  assert.equal(pings.length, 3);
});

test("a silent app is presumed gone and the extension reconnects", async () => {
  const { connection, socket, timers } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  await timers.advance(60_000);
  assert.equal(socket().closed, true);
  await timers.advance(1_000);
  assert.equal(FakeSocket.instances.length, 2);
});

test("the app's own pings are answered", async () => {
  const { connection, socket } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  socket().receive({ type: "ping" });
  assert.deepEqual(socket().messages().at(-1), { type: "pong" });
});

test("an unreachable app is retried with growing delays", async () => {
  const { connection, socket, timers, state } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a first attempt");
  for (let i = 1; i < 5; i += 1) {
    socket().serverClose(1006); // the connection failed before opening
    await settle();
    assert.equal(state(), "unreachable");
    while (FakeSocket.instances.length === i) {
      await timers.advance(100);
    }
  }
  const times = FakeSocket.instances.map((s) => s.createdAt);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  assert.deepEqual(gaps, [500, 1_000, 2_000, 4_000]);
});

test("without a token it asks the app to pair, and asks again while approval is pending", async () => {
  let approved = false;
  const { connection, socket, state, fetched, timers, settings } = setup({
    settings: memorySettings({ token: null }),
    fetch: async () =>
      approved
        ? { status: 200, body: JSON.stringify({ port: PORT, token: TOKEN, protocol: 1 }) }
        : { status: 403, body: JSON.stringify({ error: "pairing_required" }) },
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  const [first] = fetched;
  const code = /** @type {string} */ (settings.data.pairingCode);
  assert.match(code, /^[A-HJ-NP-Z2-9]{6}$/);
  assert.equal(first, `http://127.0.0.1:23001/api/browser-relay/config?code=${code}`);
  assert.match(connection.state.detail, new RegExp(`code ${code}`), "the popup shows the code");
  await timers.advance(4_000);
  const configs = fetched.filter((url) => url.includes("/config"));
  assert.equal(configs.length, 2);
  assert.equal(configs[1], first, "the same code while the same request waits");
  assert.equal(FakeSocket.instances.length, 0, "no connection without a token");
  approved = true;
  await timers.advance(4_000);
  await until(() => FakeSocket.instances.length === 1, "connects once approved");
  assert.equal(settings.data.token, TOKEN);
  assert.equal(settings.data.pairingCode, undefined, "a code serves one request");
  await authenticate(socket());
  assert.equal(state(), "connected");
});

test("an app that hides its pairing answer from CORS still counts as asking for approval", async () => {
  const { connection, state } = setup({
    settings: memorySettings({ token: null }),
    // The config request fails (CORS), the no-cors health probe arrives.
    fetchImpl: async (url, init) => {
      if (init.mode === "no-cors") return { status: 0, text: async () => "" };
      throw new TypeError("Failed to fetch");
    },
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
});

test("pairing stops asking after two minutes without approval", async () => {
  const { connection, state, fetched, timers } = setup({
    settings: memorySettings({ token: null }),
    fetch: async () => ({ status: 403, body: JSON.stringify({ error: "pairing_required" }) }),
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  await timers.advance(130_000);
  await settle();
  assert.equal(state(), "unpaired");
  const asked = fetched.length;
  await timers.advance(120_000);
  connection.start();
  await settle();
  assert.equal(fetched.length, asked, "no more pairing requests until the person clicks Pair");
});

test("a new port drops the connection and connects there at once", async () => {
  const { connection, socket, settings } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  settings.data.port = 24000;
  connection.restart();
  await until(() => FakeSocket.instances.length === 2, "a new socket");
  assert.equal(FakeSocket.instances[0].closed, true);
  assert.equal(socket().url, "ws://127.0.0.1:24000/ws/browser-relay");
});

// --- letting the tabs go ----------------------------------------------------------------------

/** @param {ReturnType<typeof setup>} context */
async function connected({ connection, socket }) {
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  await authenticate(socket());
  assert.equal(connection.connected, true);
}

test("when the app quits (1001) the tabs are let go at once, and the extension waits for it", async () => {
  const context = setup();
  const { socket, state, released, timers } = context;
  await connected(context);
  assert.equal(released.count, 0, "nothing is let go while connected");
  socket().serverClose(1001); // websockets closes every connection with 1001 when the app stops
  await until(() => released.count === 1, "the tabs let go");
  assert.equal(state(), "unreachable");
  assert.match(context.connection.state.detail, /quit/);
  await timers.advance(1_000);
  assert.equal(FakeSocket.instances.length, 2, "it tries again");
  socket().serverClose(1006);
  await settle();
  await timers.advance(2_000);
  assert.equal(released.count, 1, "once: a tab the person shares meanwhile stays shared");
  await authenticate(socket());
  assert.equal(state(), "connected");
});

for (const [code, name, expected] of [
  [4403, "an unpairing", "unpaired"],
  [4410, "a rotation of the credentials", "pairing"],
]) {
  test(`${name} (${code}) by the authenticated app lets the tabs go`, async () => {
    const context = setup({
      fetch: async () => ({ status: 403, body: JSON.stringify({ error: "pairing_required" }) }),
    });
    await connected(context);
    context.socket().serverClose(/** @type {number} */ (code));
    await until(() => context.released.count === 1, "the tabs let go");
    assert.ok([expected, "awaiting_approval"].includes(context.state()), context.state());
  });
}

test("a rejected credential (4401) lets the tabs a previous worker attached go", async () => {
  const context = setup();
  context.connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  context.socket().open();
  context.socket().serverClose(4401);
  await until(() => context.state() === "rejected", "rejected");
  assert.equal(context.released.count, 1);
});

test("a drop the app did not mean keeps the tabs while it reconnects, until the app is gone", async () => {
  const context = setup();
  const { socket, state, released, timers } = context;
  await connected(context);
  socket().serverClose(4504); // heartbeat lost: the app is there and takes the browser back
  await settle();
  assert.equal(state(), "connecting");
  assert.equal(released.count, 0, "kept for the reconnect");
  await timers.advance(1_000);
  assert.equal(FakeSocket.instances.length, 2);
  socket().serverClose(1006); // and then nothing answers: the app crashed or was killed
  await until(() => state() === "unreachable", "unreachable");
  assert.equal(released.count, 1);
});

test("a worker that starts and finds no app lets go the tabs it took over", async () => {
  const { connection, socket, state, released } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().serverClose(1006);
  await until(() => state() === "unreachable", "unreachable");
  assert.equal(released.count, 1);
});

test("a program on the port that cannot prove itself is no app: the tabs go", async () => {
  const context = setup();
  await connected(context);
  const { socket, released, timers } = context;
  socket().serverClose(4504);
  await settle();
  await timers.advance(1_000);
  await authenticate(socket(), { appProofOverride: "A".repeat(43) });
  assert.equal(context.state(), "unverified");
  // A squatter gains nothing by it: it could deny service anyway.
  assert.equal(released.count, 1);
});

// --- finding the way back by itself -------------------------------------------------------

/**
 * An app's pairing answers, as the real app gives them: the config endpoint (403 outside a
 * window, readable only as a failure) and the status endpoint (readable by the extension).
 * @param {{pairing: string, retry_after?: number}} status
 * @param {string | null} [token] the credential once the person allowed the request
 */
function pairingAnswers(status, token = null) {
  return async (/** @type {string} */ url) => {
    if (url.includes("/api/browser-relay/pairing")) return { status: 200, body: JSON.stringify(status) };
    if (token !== null) return { status: 200, body: JSON.stringify({ port: PORT, token, protocol: 1 }) };
    return { status: 403, body: JSON.stringify({ error: "pairing_required" }) };
  };
}

test("while the app says the person is being asked it keeps asking past two minutes, with one code", async () => {
  /** @type {{pairing: string}} */
  const status = { pairing: "asking" };
  /** @type {string | null} */
  let token = null;
  const answers = (/** @type {string} */ url) => pairingAnswers(status, token)(url);
  const { connection, state, fetched, timers, settings, socket } = setup({
    settings: memorySettings({ token: null }),
    fetch: answers,
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  const code = settings.data.pairingCode;
  assert.match(connection.state.detail, /asking you now/);
  await timers.advance(5 * 60_000);
  assert.equal(state(), "awaiting_approval", "the person may take their time");
  const configs = fetched.filter((url) => url.includes("/config"));
  assert.ok(configs.every((url) => url.endsWith(`code=${code}`)), "one code for the whole request");
  assert.ok(configs.length < 60, `slower after two minutes (${configs.length} requests in 5 min)`);
  token = TOKEN; // the person allows it, late
  // Step to the next slow poll (10–13 s, jittered), not past it: 10 s after the connection
  // opens, the handshake timer would close it unanswered.
  for (let waited = 0; FakeSocket.instances.length === 0 && waited < 13_000; waited += 100) {
    await timers.advance(100);
  }
  assert.equal(FakeSocket.instances.length, 1, "connects once approved, at the next poll");
  await authenticate(socket());
  assert.equal(state(), "connected");
});

test("after the person's no it stops, and a click within the app's quiet time waits it out", async () => {
  /** @type {{pairing: string, retry_after?: number}} */
  let status = { pairing: "asking" };
  const { connection, state, fetched, timers, settings } = setup({
    settings: memorySettings({ token: null }),
    fetch: (url) => pairingAnswers(status)(url),
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  const first = settings.data.pairingCode;
  status = { pairing: "declined", retry_after: 60 };
  await timers.advance(4_000);
  await until(() => state() === "declined", "declined");
  assert.match(connection.state.detail, /declined/);
  assert.equal(settings.data.pairingCode, undefined, "the request is over");
  const asked = fetched.length;
  await timers.advance(10 * 60_000);
  connection.start(); // alarms wake the worker: it does not start a new request by itself
  await settle();
  assert.equal(fetched.length, asked, "no request after a no until the person asks");
  assert.equal(state(), "declined");

  // Asked again within the quiet time: it waits for its end, then asks once, with a new code.
  settings.data.declinedUntil = timers.now() + 30_000;
  status = { pairing: "asking" };
  await connection.pair();
  await until(() => state() === "pairing", "waiting out the quiet time");
  assert.match(connection.state.detail, /waits until it may ask you again/);
  assert.equal(connection.state.retryAt, timers.now() + 30_000, "the popup counts down to it");
  await timers.advance(29_000);
  assert.equal(fetched.length, asked, "nothing within the quiet time");
  await timers.advance(2_000);
  await until(() => state() === "awaiting_approval", "asks again");
  assert.notEqual(settings.data.pairingCode, first);
});

test("a 'no' that asks for an hour of quiet is held for two minutes at most (the port proved nothing yet)", async () => {
  /** @type {{pairing: string, retry_after?: number}} */
  let status = { pairing: "asking" };
  const { connection, state, timers, settings } = setup({
    settings: memorySettings({ token: null }),
    fetch: (url) => pairingAnswers(status)(url),
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  status = { pairing: "declined", retry_after: 3600 };
  await timers.advance(4_000);
  await until(() => state() === "declined", "declined");
  const until_ = Number(settings.data.declinedUntil);
  assert.ok(until_ <= timers.now() + 120_000, `quiet until ${until_ - timers.now()} ms from now`);
});

test("Pair pressed again while a request waits keeps its code: the app's dialog shows that one", async () => {
  const { connection, state, settings, fetched } = setup({
    settings: memorySettings({ token: null }),
    fetch: pairingAnswers({ pairing: "asking" }),
  });
  connection.start();
  await until(() => state() === "awaiting_approval", "awaiting approval");
  const code = settings.data.pairingCode;
  await connection.pair();
  await connection.pair();
  await until(() => fetched.filter((url) => url.includes("/config")).length >= 3, "asks again");
  assert.equal(settings.data.pairingCode, code);
  assert.ok(fetched.every((url) => !url.includes("code=") || url.endsWith(`code=${code}`)));
});

test("Pair after a rejection keeps asking until the person answers, never retrying the refused credential", async () => {
  let allowed = false;
  const next = "new_token_abcdefghijklmnopqrstuvwxyz0123456";
  const { connection, socket, state, timers, settings } = setup({
    fetch: (url) => pairingAnswers({ pairing: "asking" }, allowed ? next : null)(url),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().open();
  socket().serverClose(4401);
  await until(() => state() === "rejected", "rejected");
  await connection.pair();
  await until(() => state() === "awaiting_approval", "asks the person");
  await timers.advance(60_000);
  assert.equal(FakeSocket.instances.length, 1, "the refused credential is not tried meanwhile");
  assert.equal(state(), "awaiting_approval");
  allowed = true;
  await timers.advance(4_000);
  await until(() => FakeSocket.instances.length === 2, "connects with the new credential");
  assert.equal(settings.data.token, next);
  await authenticate(socket(), { token: next });
  assert.equal(state(), "connected");
});

/**
 * Close every socket on the given port as a place with no app for this browser would.
 * @param {"nothing" | "stranger" | "other_app"} kind
 * @param {FakeSocket} socket
 */
async function noApp(kind, socket) {
  if (kind === "nothing") {
    socket.serverClose(1006);
  } else if (kind === "other_app") {
    socket.open();
    socket.serverClose(4401);
  } else {
    await authenticate(socket, { appProofOverride: "A".repeat(43) });
  }
  await settle();
}

test("with no app on its port it looks on the announced, the known and the default port, telling nothing to the rest", async () => {
  const settings = memorySettings({ port: 24000 });
  settings.data.knownPorts = [24000, 24100];
  settings.data.announcedPort = 24200;
  const { connection, socket, state } = setup({ settings });
  connection.start();
  const urls = () => FakeSocket.instances.map((s) => new URL(s.url).port);
  await until(() => FakeSocket.instances.length === 1, "the set port");
  await noApp("stranger", socket());
  await until(() => FakeSocket.instances.length === 2, "the announced port");
  await noApp("other_app", socket());
  await until(() => FakeSocket.instances.length === 3, "a known port");
  await noApp("nothing", socket());
  await until(() => FakeSocket.instances.length === 4, "the default port");
  assert.deepEqual(urls(), ["24000", "24200", "24100", "23001"]);
  await authenticate(socket());
  assert.equal(state(), "connected");
  assert.equal(connection.port, 23001);
  assert.match(connection.state.detail, /port 23001/);
  assert.deepEqual(settings.data.knownPorts, [23001, 24000, 24100], "found there: looked at first next time but one");
  assert.equal(settings.data.token, TOKEN, "the credential is kept");
  assert.equal(settings.data.authProblem, undefined, "another app's 4401 is no rejection");
  for (const stranger of FakeSocket.instances.slice(0, 3)) {
    const sent = stranger.messages();
    assert.ok(sent.every((m) => m.type === "auth.response"), "nothing but the challenge–response");
    assert.ok(!stranger.sent.some((frame) => frame.includes(TOKEN)), "the credential never goes on the wire");
  }
});

test("when no port has an app it says where it looked, and the set port's answer counts", async () => {
  const settings = memorySettings({ port: 24000 });
  settings.data.announcedPort = 24200;
  const { connection, socket, state, timers } = setup({ settings });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "the set port");
  for (let i = 1; i <= 3; i += 1) {
    await noApp("nothing", socket());
    if (i < 3) await until(() => FakeSocket.instances.length === i + 1, "the next port");
  }
  await until(() => state() === "unreachable", "unreachable");
  assert.match(connection.state.detail, /looked for it on ports 24000, 24200 and 23001/);
  assert.equal(connection.port, 24000);
  // A rejection on the set port, and no app elsewhere: that is a rejection.
  await timers.advance(1_000);
  await until(() => FakeSocket.instances.length === 4, "a new look");
  await noApp("other_app", socket());
  for (let i = 5; i <= 6; i += 1) {
    await until(() => FakeSocket.instances.length === i, "the next port");
    await noApp("nothing", socket());
  }
  await until(() => state() === "rejected", "rejected");
  assert.match(/** @type {string} */ (settings.data.authProblem), /no longer accepts/);
});

test("a port the authenticated app announces is remembered; a stranger's is never heard", async () => {
  const { connection, socket, settings, timers } = setup();
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "a socket");
  socket().open();
  socket().receive({ type: "relay.port", port: 24500 }); // before any proof: not obeyed
  await settle();
  assert.equal(settings.data.announcedPort, undefined);
  await timers.advance(1_000);
  await until(() => FakeSocket.instances.length === 2, "a retry");
  await authenticate(socket());
  socket().receive({ type: "relay.port", port: 24500 });
  socket().receive({ type: "relay.port", port: "x" });
  await settle();
  assert.equal(settings.data.announcedPort, 24500);
  socket().serverClose(1001); // the app quits
  await settle();
  await timers.advance(1_000);
  await until(() => FakeSocket.instances.length === 3, "looks again");
  assert.equal(new URL(socket().url).port, "23001");
  socket().serverClose(1006);
  await until(() => FakeSocket.instances.length === 4, "the announced port");
  assert.equal(new URL(socket().url).port, "24500");
});

test("a credential replaced while it was away: the app proves itself with the old one, and the request goes to that port", async () => {
  const settings = memorySettings({ port: 24000 });
  settings.data.announcedPort = 24200;
  const next = "rotated_abcdefghijklmnopqrstuvwxyz0123456789";
  let allowed = false;
  const { connection, socket, state, fetched, timers } = setup({
    settings,
    fetch: (url) => pairingAnswers({ pairing: "asking" }, allowed ? next : null)(url),
  });
  connection.start();
  await until(() => FakeSocket.instances.length === 1, "the set port");
  await noApp("nothing", socket());
  await until(() => FakeSocket.instances.length === 2, "the announced port");
  await authenticate(socket()); // the old credential: the app proves itself with it...
  socket().serverClose(4410); // ...and says it was replaced
  await until(() => state() === "awaiting_approval", "asks the person");
  assert.equal(settings.data.token, undefined);
  assert.ok(fetched.every((url) => url.startsWith("http://127.0.0.1:24200/")), "only where the app proved itself");
  allowed = true;
  await timers.advance(4_000);
  await until(() => FakeSocket.instances.length >= 3, "connects");
  assert.equal(settings.data.token, next);
});

test("a pairing request never goes to a port whose program did not prove itself", async () => {
  const settings = memorySettings({ port: 24000 });
  const { connection, socket, state, fetched, timers } = setup({
    settings,
    fetch: pairingAnswers({ pairing: "asking" }, "evil_token_abcdefghijklmnopqrstuvwxyz012345"),
  });
  connection.start();
  for (let round = 0; round < 3; round += 1) {
    await until(() => FakeSocket.instances.length === 2 * round + 1, "the set port");
    socket().open();
    socket().serverClose(4410); // unauthenticated: whoever it is, it proved nothing
    await until(() => FakeSocket.instances.length === 2 * round + 2, "the default port");
    socket().serverClose(1006);
    await settle();
    while (FakeSocket.instances.length === 2 * round + 2) {
      await timers.advance(100);
    }
  }
  assert.deepEqual(fetched.filter((url) => !url.endsWith("/healthz")), [], "no pairing request, no credential");
  assert.equal(settings.data.token, TOKEN);
  assert.notEqual(state(), "connected");
});
