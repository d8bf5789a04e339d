// @ts-check
// The extension's stored settings against Chrome's storage (the fake refuses what Chrome refuses).
import assert from "node:assert/strict";
import test from "node:test";

import { bindChromeApi } from "../src/background/chrome_api.js";
import { SessionKeys, SettingsStore } from "../src/background/settings.js";
import { fakeChrome } from "./fake_chrome.js";

test("a port the person sets forgets the remembered ports and a 'no' heard on the old one", async () => {
  const fake = fakeChrome();
  const settings = new SettingsStore(bindChromeApi(fake.chrome));
  await settings.setDeclinedUntil(Date.now() + 60_000);
  await settings.forgetPorts();
  assert.equal(await settings.declinedUntil(), undefined);
  assert.equal(fake.session[SessionKeys.DECLINED_UNTIL], null);
});
