// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { ChromeFailure, CommandError, chromeFailure, describeChromeError } from "../src/shared/errors.js";
import { ErrorCode } from "../src/shared/protocol.js";

// Chrome's own messages, as chrome.tabs and chrome.debugger reject with them.
/** @type {Array<[string, symbol, string]>} */
const CHROME_MESSAGES = [
  ["No tab with id: 5.", ChromeFailure.NO_TAB, "no_tab"],
  ["Cannot access a chrome:// URL", ChromeFailure.RESTRICTED, "restricted_url"],
  ["Cannot attach to this target.", ChromeFailure.RESTRICTED, "restricted_url"],
  ["Debugger is not attached to the tab with id: 5.", ChromeFailure.NOT_ATTACHED, "detached"],
  ["Detached while handling command.", ChromeFailure.NOT_ATTACHED, "detached"],
  ["Another debugger is already attached to the tab with id: 5.", ChromeFailure.ALREADY_ATTACHED, "another_debugger"],
];

test("each failure Chrome reports by message gets its code, read in one place", () => {
  for (const [message, failure, code] of CHROME_MESSAGES) {
    assert.equal(chromeFailure(new Error(message)), failure, message);
    const described = describeChromeError(new Error(message), { tabId: 5 });
    assert.equal(described.code, code, message);
  }
});

test("any other failure keeps Chrome's sentence and has no code", () => {
  assert.equal(chromeFailure(new Error("Something odd happened")), undefined);
  const described = describeChromeError("Something odd happened");
  assert.ok(described instanceof CommandError);
  assert.equal(described.message, "Something odd happened");
  assert.equal(described.code, undefined);
});

test("an error that already has its code passes unchanged", () => {
  const error = new CommandError("Tab 5 was closed while Runtime.evaluate was running", "no_tab");
  assert.equal(describeChromeError(error), error);
});

test("Chrome's failures are their own kind, never mistaken for a protocol code", () => {
  const codes = new Set(Object.values(ErrorCode));
  for (const failure of Object.values(ChromeFailure)) {
    assert.equal(typeof failure, "symbol", String(failure));
    assert.ok(!codes.has(/** @type {any} */ (failure)));
  }
  assert.equal(chromeFailure(new Error("no_tab")), undefined, "a code is not a Chrome message");
});
