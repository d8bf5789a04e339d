// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { BLOCKED_CDP_DOMAINS, BLOCKED_CDP_METHODS, cdpBlockReason } from "../src/shared/denylist.js";

test("cookie dumps and credential tampering are refused", () => {
  for (const method of ["Network.getAllCookies", "Storage.getCookies", "Network.getCookies", "Fetch.continueWithAuth", "Page.setDownloadBehavior"]) {
    assert.match(/** @type {string} */ (cdpBlockReason(method)), /blocked by Tabrelay/, method);
  }
});

test("whole domains that escape the tab are refused", () => {
  for (const method of ["Target.createTarget", "Target.attachToTarget", "Browser.close", "WebAuthn.addVirtualAuthenticator", "Extensions.loadUnpacked"]) {
    assert.match(/** @type {string} */ (cdpBlockReason(method)), /domain .* is blocked/, method);
  }
});

test("ordinary page automation is allowed", () => {
  for (const method of ["Runtime.evaluate", "Page.navigate", "Page.captureScreenshot", "DOM.getDocument", "Input.dispatchMouseEvent", "Network.enable"]) {
    assert.equal(cdpBlockReason(method), null, method);
  }
});

test("names that are not Domain.method are refused, including a trailing newline", () => {
  for (const method of ["", "evaluate", "runtime.evaluate", "Runtime.Evaluate", "Network.getAllCookies\n", "A.b.c", "Runtime.evaluate ", 42, null]) {
    assert.notEqual(cdpBlockReason(method), null, JSON.stringify(method));
  }
});

test("the lists cannot be changed at run time", () => {
  assert.throws(() => /** @type {string[]} */ (/** @type {unknown} */ (BLOCKED_CDP_METHODS)).push("X.y"));
  assert.throws(() => /** @type {string[]} */ (/** @type {unknown} */ (BLOCKED_CDP_DOMAINS)).pop());
});
