// @ts-check
/**
 * Static checks of the extension as shipped: the manifest's promises (DESIGN §4.10, §10) and
 * the code rules that make them true.
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

import { ALLOWED_CHROME_CALLS, bindChromeApi } from "../src/background/chrome_api.js";
import { fakeChrome } from "./fake_chrome.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"));

/** @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".js") ? [join(dir, entry.name)] : [],
  );
}
/** @param {string} file */
const read = (file) => readFileSync(join(root, file), "utf8");
/** The code without its comments (which may name chrome.* calls in prose). @param {string} file */
const code = (file) => read(file).replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/[^\n]*/g, "$1");

test("the manifest is MV3 for Chrome 116+ with exactly the permissions the design lists", () => {
  assert.equal(manifest.manifest_version, 3);
  assert.equal(manifest.minimum_chrome_version, "116");
  // downloads: downloads.search, to follow a download an agent's action started (issue 26).
  assert.deepEqual([...manifest.permissions].sort(), ["alarms", "debugger", "downloads", "storage", "tabGroups", "tabs"]);
  assert.equal(manifest.optional_permissions, undefined);
});

test("the extension asks for no host permission beyond loopback", () => {
  for (const pattern of [...(manifest.host_permissions ?? []), ...(manifest.optional_host_permissions ?? [])]) {
    assert.match(pattern, /^(http|ws):\/\/127\.0\.0\.1(:\*)?\/\*$/, pattern);
  }
});

test("no web page and no other extension can talk to the extension", () => {
  assert.deepEqual(manifest.externally_connectable, { ids: [], matches: [] });
  assert.equal(manifest.content_scripts, undefined);
  assert.equal(manifest.web_accessible_resources, undefined);
});

test("the extension's pages and worker can connect to loopback only", () => {
  const csp = manifest.content_security_policy.extension_pages;
  const connect = /connect-src ([^;]+)/.exec(csp)?.[1].trim().split(/\s+/);
  assert.deepEqual(connect, ["http://127.0.0.1:*", "ws://127.0.0.1:*"]);
  assert.match(csp, /script-src 'self'/);
});

test("the manifest pins its key, so the unpacked extension id is stable", () => {
  assert.match(manifest.key, /^[A-Za-z0-9+/]+=*$/);
  assert.ok(manifest.key.length > 300);
});

test("the files the manifest names exist", () => {
  const files = [
    manifest.background.service_worker,
    manifest.action.default_popup,
    manifest.options_ui.page,
    ...Object.values(manifest.icons),
    ...Object.values(manifest.action.default_icon),
  ];
  for (const file of files) {
    assert.doesNotThrow(() => read(/** @type {string} */ (file)), String(file));
  }
  assert.equal(manifest.background.type, "module");
});

test("every script is type-checked (// @ts-check on its first line)", () => {
  for (const file of [...sources("src"), ...sources("test")]) {
    assert.ok(read(file).startsWith("// @ts-check\n"), file);
  }
});

test("background modules reach chrome.* only through the allowlisted facade", () => {
  for (const file of sources("src/background")) {
    const name = relative("src/background", file);
    if (name === "chrome_api.js" || name === "service_worker.js") continue;
    assert.doesNotMatch(code(file), /\bchrome\s*\./, `${file} names chrome. directly`);
  }
});

test("the service worker only registers listeners on chrome and builds the facade", () => {
  const worker = code("src/background/service_worker.js");
  const uses = [...worker.matchAll(/\bchrome\.([A-Za-z.]+)/g)].map((m) => m[1]);
  assert.ok(uses.length > 0);
  for (const use of uses) {
    assert.match(use, /^(\w+\.on[A-Z]\w*\.addListener|runtime\.id)$/, use);
  }
  assert.match(worker, /bindChromeApi\(chrome\)/);
});

test("the facade exposes exactly the allowlisted calls", () => {
  const api = /** @type {Record<string, any>} */ (bindChromeApi(fakeChrome().chrome));
  /** @type {string[]} */
  const exposed = [];
  /** @param {Record<string, any>} node @param {string} prefix */
  const walk = (node, prefix) => {
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === "function") exposed.push(prefix + key);
      else walk(value, `${prefix}${key}.`);
    }
  };
  walk(api, "");
  assert.deepEqual(exposed.sort(), [...ALLOWED_CHROME_CALLS].sort());
  assert.equal(api.management, undefined);
  assert.ok(Object.isFrozen(api) && Object.isFrozen(api.tabs));
});

test("nothing writes to chrome.storage.sync (the token stays on this device)", () => {
  for (const file of sources("src")) {
    assert.doesNotMatch(code(file), /storage\s*\.\s*sync/, file);
  }
});

test("no page reads its URL's query or fragment (nothing can set the relay from a link)", () => {
  for (const file of sources("src/pages")) {
    assert.doesNotMatch(code(file), /location\s*\.\s*(search|hash|href)|URLSearchParams/, file);
  }
});

test("errors are told apart by code: only shared/errors.js reads Chrome's messages", () => {
  for (const file of sources("src")) {
    if (file === join("src", "shared", "errors.js")) continue;
    assert.doesNotMatch(
      code(file),
      /\.(test|match|includes|startsWith|endsWith)\(\s*(String\()?\s*(error|err|e|reason)\b|(error|err|reason)(\.message)?\s*\.\s*(match|includes|startsWith|endsWith)\(/,
      file,
    );
  }
});

test("frames are built by shared/frames.js, not written as object literals", () => {
  for (const file of sources("src")) {
    if (file === join("src", "shared", "frames.js") || file === join("src", "shared", "validation.js")) continue;
    assert.doesNotMatch(code(file), /\btype:\s*MessageType\./, file);
    assert.doesNotMatch(code(file), /\{\s*id(:\s*[\w.]+)?,\s*(result|error)\b/, file);
  }
});
