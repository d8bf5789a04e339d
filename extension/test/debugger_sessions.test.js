// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { bindChromeApi } from "../src/background/chrome_api.js";
import { CUE_ELEMENT_ID, HIDE_TIMEOUT_MS } from "../src/background/cue.js";
import { DebuggerSessions } from "../src/background/debugger_sessions.js";
import { SessionKeys } from "../src/background/settings.js";
import { CommandError } from "../src/shared/errors.js";
import { fakeChrome } from "./fake_chrome.js";

function setup() {
  const fake = fakeChrome({
    tabs: [
      { id: 1, windowId: 1, url: "https://example.com/", title: "Example", active: true },
      { id: 3, windowId: 1, url: "https://example.org/", title: "Org" },
      { id: 4, windowId: 1, url: "https://example.net/", title: "Net" },
    ],
  });
  /** @type {number[][]} */
  const changes = [];
  const sessions = new DebuggerSessions({
    api: bindChromeApi(fake.chrome),
    onEvent: () => {},
    onChange: (tabs) => changes.push(tabs),
  });
  return { fake, sessions, changes };
}

/** The removals of the on-page cue sent to each tab. @param {ReturnType<typeof fakeChrome>} fake */
function cueRemovals(fake) {
  return fake
    .callsTo("debugger.sendCommand")
    .filter(([, , method, params]) => method === "Runtime.evaluate" && String(/** @type {any} */ (params).expression).includes(`${JSON.stringify(CUE_ELEMENT_ID)})?.remove()`))
    .map(([, target]) => /** @type {{tabId: number}} */ (target).tabId)
    .sort();
}

test("letting go detaches every tab, removes its cue, and keeps none to re-attach", async () => {
  const { fake, sessions, changes } = setup();
  await sessions.attach(1);
  await sessions.attach(3, { byUser: true });
  assert.deepEqual([...fake.attached].sort(), [1, 3]);
  const shown = fake.callsTo("debugger.sendCommand").filter(([, , method]) => method === "Page.addScriptToEvaluateOnNewDocument");
  assert.equal(shown.length, 2, "both tabs showed the cue");

  await sessions.releaseAll();

  assert.deepEqual([...fake.attached], [], "chrome.debugger is attached to no tab");
  assert.deepEqual(sessions.attachedTabs(), []);
  assert.deepEqual(cueRemovals(fake), [1, 3]);
  assert.deepEqual(changes.at(-1), [], "the badge and the app hear of it");
  assert.equal(sessions.isSharedByPerson(3), false, "the person's share ends with the app");
  assert.deepEqual(/** @type {any} */ (fake.session[SessionKeys.DEBUGGER]), { attached: [], wanted: [], canceled: [], shared: [] });

  // A navigation no longer brings the debugger back.
  sessions.handleTabUpdated(1, { status: "loading" }, { url: "https://example.com/next" });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual([...fake.attached], []);
});

test("a command running on a tab fails at once when the tab is let go", async () => {
  const { fake, sessions } = setup();
  /** @type {(value: unknown) => void} */
  let never = () => {};
  fake.onCommand((method, params) => (params?.expression === "1" ? new Promise((resolve) => (never = resolve)) : Promise.resolve({})));
  const running = sessions.send(4, "Runtime.evaluate", { expression: "1" });
  await new Promise((resolve) => setTimeout(resolve, 5));
  await sessions.releaseAll();
  await assert.rejects(running, (error) => error instanceof CommandError && error.code === "detached");
  never({});
});

test("a command running in a frame's session fails at once when that session ends, with those of the frames in it", async () => {
  // Chrome may never answer a command sent to a frame's child session that ends meanwhile.
  const { fake, sessions } = setup();
  /** @type {Array<(value: unknown) => void>} */
  const unanswered = [];
  fake.onCommand((method, params) => (params?.expression === "1" ? new Promise((resolve) => unanswered.push(resolve)) : Promise.resolve({})));
  await sessions.attach(4);
  sessions.handleEvent({ tabId: 4 }, "Target.attachedToTarget", { sessionId: "card", targetInfo: { type: "iframe" } });
  sessions.handleEvent({ tabId: 4, sessionId: "card" }, "Target.attachedToTarget", { sessionId: "verify", targetInfo: { type: "iframe" } });
  sessions.handleEvent({ tabId: 4 }, "Target.attachedToTarget", { sessionId: "chat", targetInfo: { type: "iframe" } });
  /** @type {Map<string, string>} */
  const outcome = new Map();
  const running = ["card", "verify", "chat", undefined].map((session) =>
    sessions.send(4, "Runtime.evaluate", { expression: "1" }, session).then(
      () => outcome.set(String(session), "answered"),
      (error) => outcome.set(String(session), error.message),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 5));
  sessions.handleEvent({ tabId: 4 }, "Target.detachedFromTarget", { sessionId: "card" });
  await Promise.all(running.slice(0, 2));
  assert.match(String(outcome.get("card")), /frame went away while Runtime\.evaluate was running in it/);
  assert.match(String(outcome.get("verify")), /session verify ended/, "the frame in it ended with it");
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(outcome.has("chat"), false, "another frame's command still runs");
  assert.equal(outcome.has("undefined"), false, "the tab's own command still runs");
  // Events that name no session, or a session never heard of, change nothing.
  sessions.handleEvent({ tabId: 4 }, "Target.detachedFromTarget", { sessionId: 5 });
  sessions.handleEvent({ tabId: 4 }, "Target.detachedFromTarget", { sessionId: "unknown" });
  sessions.handleEvent({ tabId: 4 }, "Target.detachedFromTarget", {});
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(outcome.size, 2);
  for (const answer of unanswered) answer({});
  await Promise.all(running);
  assert.equal(outcome.get("chat"), "answered");
});

test("a page held by a dialog does not keep its tab attached", async () => {
  const { fake, sessions } = setup();
  await sessions.attach(1);
  fake.onCommand(() => new Promise(() => {})); // alert(): the page answers nothing
  const started = Date.now();
  await sessions.releaseAll();
  assert.deepEqual([...fake.attached], []);
  assert.ok(Date.now() - started < HIDE_TIMEOUT_MS + 500, "not held up by the page");
});

test("an attach still on its way is let go too", async () => {
  const { fake, sessions } = setup();
  const attaching = sessions.attach(4);
  await sessions.releaseAll();
  await assert.rejects(attaching, (error) => error instanceof CommandError && error.code === "detached");
  assert.deepEqual([...fake.attached], []);
  assert.deepEqual(sessions.attachedTabs(), []);
});

test("letting go with nothing attached touches no tab", async () => {
  const { fake, sessions } = setup();
  await sessions.releaseAll();
  assert.deepEqual(fake.callsTo("debugger."), []);
});

test("a command Chrome answers as not attached while the tab stays attached is sent again", async () => {
  // Chrome swapping the tab's page into another process (its PDF viewer loading) answers for a
  // moment as if the debugger were detached, and tells of no detach.
  const { fake, sessions } = setup();
  await sessions.attach(1);
  let refusals = 3;
  fake.onCommand((method) => {
    if (method === "Page.getFrameTree" && refusals > 0) {
      refusals -= 1;
      return Promise.reject(new Error(refusals % 2 ? "Debugger is not attached to the tab with id: 1." : "Detached while handling command."));
    }
    return Promise.resolve({ frameTree: {} });
  });
  assert.deepEqual(await sessions.send(1, "Page.getFrameTree", {}), { frameTree: {} });
  const sent = fake.callsTo("debugger.sendCommand").filter(([, , method]) => method === "Page.getFrameTree");
  assert.equal(sent.length, 4, "three refusals, then the answer");
});

test("a command that may have run, or that does more than read, is not sent again; reads are, a bounded number of times", async () => {
  const { fake, sessions } = setup();
  await sessions.attach(1);
  fake.onCommand((method) =>
    method === "Input.dispatchMouseEvent" ? Promise.reject(new Error("Detached while handling command.")) : Promise.resolve({}),
  );
  await assert.rejects(sessions.send(1, "Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 1 }), /Detached while handling/);
  const clicks = fake.callsTo("debugger.sendCommand").filter(([, , method]) => method === "Input.dispatchMouseEvent");
  assert.equal(clicks.length, 1, "an input event is never sent twice");
  // Refused as not attached, text to type is not sent again either: the tab may show another
  // document by the time it is back.
  fake.onCommand(() => Promise.reject(new Error("Debugger is not attached to the tab with id: 1.")));
  await assert.rejects(sessions.send(1, "Input.insertText", { text: "secret" }), /not attached/);
  assert.equal(fake.callsTo("debugger.sendCommand").filter(([, , method]) => method === "Input.insertText").length, 1);

  // A read refused for good: tried a bounded number of times, then the error.
  const started = Date.now();
  await assert.rejects(sessions.send(1, "DOM.describeNode", { backendNodeId: 1 }), /not attached/);
  assert.ok(Date.now() - started < 3000, "bounded");
  const described = fake.callsTo("debugger.sendCommand").filter(([, , method]) => method === "DOM.describeNode");
  assert.equal(described.length, 20);
});

test("enabling a domain, fetching a resource and reading its stream are sent again too; a script to run is not", async () => {
  // What a tool sends while Chrome's PDF viewer takes the tab's page into another process: none
  // of these acts on the page, and refused as not attached they reached nothing.
  const { fake, sessions } = setup();
  await sessions.attach(1);
  const refused = new Map();
  fake.onCommand((method) => {
    if ((refused.get(method) ?? 0) < 2) {
      refused.set(method, (refused.get(method) ?? 0) + 1);
      return Promise.reject(new Error("Debugger is not attached to the tab with id: 1."));
    }
    return Promise.resolve({ ok: method });
  });
  for (const method of ["Page.enable", "Runtime.disable", "Network.loadNetworkResource", "IO.read", "IO.close"]) {
    assert.deepEqual(await sessions.send(1, method, {}), { ok: method }, method);
  }
  const scripts = () => fake.callsTo("debugger.sendCommand").filter(([, , , params]) => /** @type {any} */ (params)?.expression === "tabrelay-test");
  await assert.rejects(sessions.send(1, "Runtime.evaluate", { expression: "tabrelay-test" }), /not attached/);
  assert.equal(scripts().length, 1);
});

test("a read in flight when Chrome detaches the tab for a moment is sent again once it is back", async () => {
  const { fake, sessions } = setup();
  await sessions.attach(1);
  let first = true;
  fake.onCommand((method) => {
    if (method === "DOM.describeNode" && first) {
      first = false;
      return new Promise(() => {}); // in flight when the detach comes
    }
    return Promise.resolve({ node: { backendNodeId: 7 } });
  });
  const reading = sessions.send(1, "DOM.describeNode", { backendNodeId: 7 });
  await new Promise((resolve) => setTimeout(resolve, 5));
  fake.attached.delete(1); // Chrome let the debugger go (a process swap) and told of it
  await sessions.handleDetach({ tabId: 1 }, "target_closed");
  assert.deepEqual(await reading, { node: { backendNodeId: 7 } });
  assert.deepEqual([...fake.attached], [1], "attached again");
});

test("Target.setAutoAttach goes to Chrome only to attach to the tab's frames, or to stop", async () => {
  const { fake, sessions } = setup();
  await sessions.attach(1);
  fake.onCommand(() => Promise.resolve({}));
  const frames = { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: "iframe" }] };
  await sessions.send(1, "Target.setAutoAttach", frames);
  await sessions.send(1, "Target.setAutoAttach", { autoAttach: false, waitForDebuggerOnStart: false }, "child-1");
  for (const params of [
    { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, // every kind of target
    { ...frames, filter: [{ type: "service_worker" }] },
    { ...frames, filter: [{ type: "iframe" }, {}] },
    { ...frames, filter: [{ type: "iframe", exclude: true }] },
    { ...frames, waitForDebuggerOnStart: true }, // frames held until someone lets them run
    { ...frames, flatten: false },
    { ...frames, extra: 1 },
    undefined,
  ]) {
    await assert.rejects(sessions.send(1, "Target.setAutoAttach", params), (/** @type {any} */ error) => error.code === "blocked_method", JSON.stringify(params));
  }
  await assert.rejects(sessions.send(1, "Target.attachToTarget", { targetId: "x" }), (/** @type {any} */ error) => error.code === "blocked_method");
  const sent = fake.callsTo("debugger.sendCommand").filter(([, , method]) => String(method).startsWith("Target."));
  assert.equal(sent.length, 2, "only the two let through reached Chrome");
});
