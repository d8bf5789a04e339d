// @ts-check
/**
 * docs/protocol.md against the extension: every `json frame` block is read; a frame the
 * extension receives must pass its validator (validation.parseAppFrame) unchanged, a frame it
 * sends must come out of its builder (shared/frames.js) equal, and every frame type and
 * builder the extension has needs an example. tests/unit/test_protocol_doc.py reads the same
 * blocks against the app's frame classes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

import { tabToWire } from "../src/background/tab_registry.js";
import * as frames from "../src/shared/frames.js";
import { APP_FRAME_KINDS, EXTENSION_FRAME_KINDS } from "../src/shared/frames.js";
import { parseAppFrame } from "../src/shared/validation.js";

const DOC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "protocol.md");

/**
 * Every block whose info string is exactly `json frame`, parsed.
 * @param {string} markdown
 * @returns {Array<Record<string, any>>}
 */
function frameBlocks(markdown) {
  return [...markdown.matchAll(/^```json frame\n([\s\S]*?)\n```$/gm)].map((match) => JSON.parse(match[1]));
}

/**
 * The document's rule: `id` with `method` is a command, `id` with `result` or `error` an
 * answer, anything else is told by its `type`.
 * @param {Record<string, any>} frame
 * @returns {string}
 */
function kindOf(frame) {
  if ("id" in frame) {
    if ("method" in frame) return "command";
    return "result" in frame ? "result" : "failure";
  }
  return String(frame.type);
}

/**
 * A tab as chrome.tabs gives it, from its wire form: tabToWire must give the wire form back.
 * @param {Record<string, any>} wire
 */
function rebuildTab(wire) {
  const { attached, shared, ...chromeTab } = wire;
  return tabToWire(/** @type {any} */ (chromeTab), attached, shared);
}

/**
 * The builder of each frame the extension sends, fed with the example's values.
 * @type {Record<string, {builders: string[], build: (f: Record<string, any>) => unknown}>}
 */
const REBUILD = {
  "auth.response": { builders: ["authResponseFrame"], build: (f) => frames.authResponseFrame(f.nonce, f.proof) },
  hello: {
    builders: ["helloFrame"],
    build: (f) => frames.helloFrame({ extension: f.extension, browser: f.browser, capabilities: f.capabilities, instance: f.instance }),
  },
  status: { builders: ["statusFrame"], build: (f) => frames.statusFrame(f.attachedTabs) },
  cdp_event: { builders: ["cdpEventFrame"], build: (f) => frames.cdpEventFrame(f.tabId, f.method, f.params, f.sessionId) },
  tab_event: {
    builders: ["tabEventFrame", "tabRemovedFrame"],
    build: (f) => (f.event === "removed" ? frames.tabRemovedFrame(f.tab.id) : frames.tabEventFrame(f.event, rebuildTab(f.tab))),
  },
  download: { builders: ["downloadFrame"], build: (f) => frames.downloadFrame(f.download) },
  ping: { builders: ["pingFrame"], build: () => frames.pingFrame() },
  pong: { builders: ["pongFrame"], build: () => frames.pongFrame() },
  result: {
    builders: ["resultFrame"],
    build: (f) => frames.resultFrame(f.id, f.result, f.tab === undefined ? undefined : rebuildTab(f.tab)),
  },
  failure: { builders: ["failureFrame"], build: (f) => frames.failureFrame(f.id, f.error, f.code) },
};

/**
 * What is wrong with one example, as the extension sees it; [] when nothing is.
 * @param {Record<string, any>} example
 * @param {Set<string>} [builders] collects the builders used
 * @returns {string[]}
 */
function problemsWith(example, builders = new Set()) {
  const kind = kindOf(example);
  const text = JSON.stringify(example);
  /** @type {string[]} */
  const problems = [];
  const received = APP_FRAME_KINDS.includes(kind);
  const sent = EXTENSION_FRAME_KINDS.includes(kind);
  if (!received && !sent) {
    problems.push(`${text}: a frame type the extension does not know (${kind})`);
  }
  if (received) {
    /** @type {ReturnType<typeof parseAppFrame>} */
    let parsed = null;
    try {
      parsed = parseAppFrame(example);
    } catch (error) {
      problems.push(`${text}: refused by the extension (${error instanceof Error ? error.message : error})`);
    }
    if (parsed === null) {
      problems.push(`${text}: not a valid ${kind} frame for the extension`);
    } else {
      try {
        assert.equal(parsed.kind, kind);
        assert.deepEqual(parsed.frame, example);
      } catch (error) {
        problems.push(`${text}: read as something else: ${JSON.stringify(parsed)}`);
      }
    }
  }
  if (sent) {
    const rebuild = REBUILD[kind];
    for (const name of rebuild.builders) builders.add(name);
    const built = rebuild.build(example);
    try {
      assert.deepEqual(JSON.parse(JSON.stringify(built)), example);
    } catch {
      problems.push(`${text}: the extension builds it as ${JSON.stringify(built)}`);
    }
  }
  return problems;
}

const examples = frameBlocks(readFileSync(DOC, "utf8"));

test("every json frame example of docs/protocol.md is what the extension reads or writes", () => {
  assert.ok(examples.length > 0, "docs/protocol.md has no json frame block");
  const problems = examples.flatMap((example) => problemsWith(example));
  assert.deepEqual(problems, []);
});

test("every frame type the extension knows has an example in docs/protocol.md", () => {
  const documented = new Set(examples.map(kindOf));
  const missing = [...new Set([...APP_FRAME_KINDS, ...EXTENSION_FRAME_KINDS])].filter((kind) => !documented.has(kind));
  assert.deepEqual(missing, [], "frame types without an example");
});

test("every frame builder of the extension is checked against an example", () => {
  /** @type {Set<string>} */
  const used = new Set();
  for (const example of examples) problemsWith(example, used);
  const builders = Object.entries(frames)
    .filter(([name, value]) => typeof value === "function" && name.endsWith("Frame"))
    .map(([name]) => name);
  assert.deepEqual(builders.filter((name) => !used.has(name)), []);
  assert.deepEqual(Object.keys(REBUILD).sort(), [...EXTENSION_FRAME_KINDS].sort(), "one rebuild per kind the extension sends");
});

test("an example the extension would not read or write as written is caught", () => {
  const wrong = [
    { type: "status", attached_tabs: [5] }, // the app's field name, not the wire's
    { type: "auth.challenge", protocol: 1, nonce: "short" }, // not a nonce
    { type: "relay.port", port: "23005" }, // a string
    { id: "1", method: "tabs.list", params: [] }, // params not an object
    { id: "1", result: {}, extra: true }, // a field the extension never writes
    { type: "tab_event", event: "updated", tab: { id: 5, url: "https://example.com/" } }, // half a tab
    { type: "hello", protocol: 2, extension: "0.1.0", browser: "Chrome 131", capabilities: [], instance: "i" },
    { type: "handshake" }, // no such frame
  ];
  for (const example of wrong) {
    assert.notDeepEqual(problemsWith(example), [], JSON.stringify(example));
  }
});
