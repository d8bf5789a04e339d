// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { CommandError } from "../src/shared/errors.js";
import {
  cdpParams,
  checkNavigationUrl,
  groupParams,
  isRestrictedUrl,
  isValidNonce,
  parseAppFrame,
  parseCommand,
  parsePort,
  parseToken,
  requireTabId,
  screenshotParams,
} from "../src/shared/validation.js";

/**
 * @param {() => unknown} fn
 * @param {string} code
 */
function throwsCode(fn, code) {
  assert.throws(fn, (error) => error instanceof CommandError && error.code === code);
}

test("a command needs a string id and method; params default to an empty object", () => {
  assert.deepEqual(parseCommand({ id: "1", method: "tabs.list" }), { id: "1", method: "tabs.list", params: {} });
  throwsCode(() => parseCommand({ id: 1, method: "tabs.list" }), "invalid_params");
  throwsCode(() => parseCommand({ id: "x".repeat(65), method: "tabs.list" }), "invalid_params");
  throwsCode(() => parseCommand([]), "invalid_params");
});

test("a command with a usable id but bad params can still be answered", () => {
  try {
    parseCommand({ id: "7", method: "tabs.get", params: [1] });
    assert.fail("expected an error");
  } catch (error) {
    assert.equal(/** @type {{id?: string}} */ (error).id, "7");
  }
});

test("a frame from the app is typed by its id or type; anything else is refused as a whole", () => {
  const nonce = "A".repeat(43);
  assert.deepEqual(parseAppFrame({ id: "1", method: "tabs.list" }), {
    kind: "command",
    frame: { id: "1", method: "tabs.list", params: {} },
  });
  assert.deepEqual(parseAppFrame({ type: "auth.challenge", protocol: 1, nonce }), {
    kind: "auth.challenge",
    frame: { type: "auth.challenge", protocol: 1, nonce },
  });
  assert.deepEqual(parseAppFrame({ type: "ping", extra: 1 }), { kind: "ping", frame: { type: "ping" } });
  // The limits are docs/protocol.md's, the same the app's parser applies (protocol.js constants).
  const longest = { type: "error", code: "x".repeat(1024), message: "m".repeat(64 * 1024) };
  assert.deepEqual(parseAppFrame(longest)?.frame, longest, "kept whole up to the limits");
  const proof = "P".repeat(128);
  assert.deepEqual(parseAppFrame({ type: "auth.ok", proof })?.frame, { type: "auth.ok", proof });
  for (const refused of [
    null,
    [],
    "ping",
    { type: "auth.challenge", protocol: "1", nonce },
    { type: "auth.challenge", protocol: 1, nonce: "short" },
    { type: "auth.ok" },
    { type: "auth.ok", proof: 7 },
    { type: "error", code: 400 },
    { type: "error", code: "x" },
    { type: "error", code: "x", message: 5 },
    { type: "error", code: "x".repeat(1025), message: "m" },
    { type: "error", code: "x", message: "m".repeat(64 * 1024 + 1) },
    { type: "auth.ok", proof: "P".repeat(129) },
    { type: "relay.port", port: "23005" },
    { type: "relay.port", port: 70000 },
    { type: "tabs.list" },
    {},
  ]) {
    assert.equal(parseAppFrame(refused), null, JSON.stringify(refused));
  }
  // A command that is not one can still be answered: the error carries its id.
  assert.throws(
    () => parseAppFrame({ id: "9", method: "tabs.get", params: "5" }),
    (error) => error instanceof CommandError && error.code === "invalid_params" && /** @type {any} */ (error).id === "9",
  );
});

test("tab ids are non-negative safe integers", () => {
  assert.equal(requireTabId({ tabId: 5 }), 5);
  for (const bad of [-1, 1.5, "5", null, undefined, 2 ** 60, true]) {
    throwsCode(() => requireTabId({ tabId: bad }), "invalid_params");
  }
});

test("agents may open http, https and about:blank only", () => {
  const context = { relayPort: 23001 };
  assert.equal(checkNavigationUrl("https://example.com/", context), "https://example.com/");
  assert.equal(checkNavigationUrl("http://127.0.0.1:8080/page", context), "http://127.0.0.1:8080/page");
  assert.equal(checkNavigationUrl("about:blank", context), "about:blank");
  for (const url of ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "view-source:https://a.b", "chrome://settings", `chrome-extension://${"a".repeat(32)}/options.html`]) {
    throwsCode(() => checkNavigationUrl(url, context), "restricted_url");
  }
  throwsCode(() => checkNavigationUrl("not a url", context), "invalid_params");
  throwsCode(() => checkNavigationUrl(42, context), "invalid_params");
});

test("agents may not open the web stores or the relay itself", () => {
  const context = { relayPort: 23001 };
  throwsCode(() => checkNavigationUrl("https://chromewebstore.google.com/detail/x", context), "restricted_url");
  throwsCode(() => checkNavigationUrl("https://chrome.google.com/webstore/category", context), "restricted_url");
  for (const url of ["http://127.0.0.1:23001/api/browser-relay/config", "http://localhost:23001/", "http://[::1]:23001/", "http://127.1.2.3:23001/"]) {
    throwsCode(() => checkNavigationUrl(url, context), "restricted_url");
  }
  assert.equal(checkNavigationUrl("http://127.0.0.1:23002/", context), "http://127.0.0.1:23002/");
});

test("browser, extension, file and web store pages are restricted; web pages are not", () => {
  for (const url of ["chrome://newtab/", "chrome-extension://abc/popup.html", "edge://settings", "devtools://devtools/x", "about:settings", "file:///tmp/x.html", "https://chromewebstore.google.com/", "view-source:http://a.b/"]) {
    assert.equal(isRestrictedUrl(url), true, url);
  }
  for (const url of ["https://example.com/", "http://127.0.0.1:8000/", "about:blank", "", undefined, "https://chrome.google.com/search"]) {
    assert.equal(isRestrictedUrl(url), false, String(url));
  }
});

test("screenshot parameters default to png and bound the quality", () => {
  assert.deepEqual(screenshotParams({}), { windowId: undefined, format: "png", quality: undefined });
  assert.deepEqual(screenshotParams({ format: "jpeg", quality: 80, windowId: 3 }), { windowId: 3, format: "jpeg", quality: 80 });
  throwsCode(() => screenshotParams({ format: "gif" }), "invalid_params");
  throwsCode(() => screenshotParams({ quality: 101 }), "invalid_params");
});

test("cdp.send needs a method name and object params", () => {
  assert.deepEqual(cdpParams({ method: "Runtime.evaluate", params: { expression: "1" } }), {
    method: "Runtime.evaluate",
    commandParams: { expression: "1" },
    sessionId: undefined,
    withTab: false,
  });
  assert.equal(cdpParams({ method: "Runtime.evaluate", tab: true }).withTab, true);
  throwsCode(() => cdpParams({ method: "Runtime.evaluate", tab: "true" }), "invalid_params");
  throwsCode(() => cdpParams({ method: 5 }), "invalid_params");
  throwsCode(() => cdpParams({ method: "Runtime.evaluate", params: "x" }), "invalid_params");
});

test("tabs.group needs tab ids and defaults its title", () => {
  assert.deepEqual(groupParams({ tabIds: [1, 2] }, "Tabrelay"), { tabIds: [1, 2], title: "Tabrelay" });
  throwsCode(() => groupParams({ tabIds: [] }, "Tabrelay"), "invalid_params");
  throwsCode(() => groupParams({ tabIds: ["1"] }, "Tabrelay"), "invalid_params");
  throwsCode(() => groupParams({ tabIds: [1], title: "" }, "Tabrelay"), "invalid_params");
});

test("the options page accepts ports 1 to 65535 only", () => {
  assert.equal(parsePort("23001"), 23001);
  assert.equal(parsePort(" 8080 "), 8080);
  assert.equal(parsePort(65535), 65535);
  for (const bad of ["0", "65536", "80a", "", "1e3", "-1", null, "ws://evil.test:23001"]) {
    assert.equal(parsePort(bad), null, String(bad));
  }
});

test("a pasted token is trimmed; blanks and spaces inside are refused", () => {
  assert.equal(parseToken("  abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE \n"), "abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE");
  assert.equal(parseToken("short"), null);
  assert.equal(parseToken("abcdefghij klmnopqrstuvwxyz"), null);
  assert.equal(parseToken(undefined), null);
});

test("handshake nonces must look like base64url of enough random bytes", () => {
  assert.equal(isValidNonce("A".repeat(43)), true);
  assert.equal(isValidNonce("A".repeat(21)), false);
  assert.equal(isValidNonce("A".repeat(129)), false);
  assert.equal(isValidNonce("A".repeat(42) + "="), false);
  assert.equal(isValidNonce(undefined), false);
});
