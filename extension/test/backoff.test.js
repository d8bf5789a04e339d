// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import {
  Backoff,
  PAIRING_POLL_MS,
  PAIRING_SLOW_POLL_MS,
  PAIRING_WINDOW_MS,
  askingPollDelay,
  pairingPollDelay,
} from "../src/shared/backoff.js";

test("reconnect delays start near half a second and double up to thirty seconds", () => {
  const backoff = new Backoff({ random: () => 0.5 });
  const delays = Array.from({ length: 10 }, () => backoff.next());
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
});

test("jitter spreads each delay by at most a fifth and never beyond the maximum", () => {
  const low = new Backoff({ random: () => 0 });
  const high = new Backoff({ random: () => 0.999999 });
  assert.equal(low.next(), 400);
  assert.equal(high.next(), 600);
  for (let i = 0; i < 20; i += 1) {
    assert.ok(high.next() <= 30_000);
  }
  assert.ok(low.atMaximum() >= 24_000);
});

test("a success resets the delay to the initial one", () => {
  const backoff = new Backoff({ random: () => 0.5 });
  backoff.next();
  backoff.next();
  backoff.next();
  backoff.reset();
  assert.equal(backoff.next(), 500);
});

test("a rate-limit answer waits the maximum, and so do the failures after it", () => {
  const backoff = new Backoff({ random: () => 0.5 });
  assert.equal(backoff.atMaximum(), 30_000);
  assert.equal(backoff.next(), 30_000);
});

test("pairing asks again every three to four seconds while the person may still approve", () => {
  for (const waited of [0, 1_000, 60_000, PAIRING_WINDOW_MS - 1]) {
    const delay = pairingPollDelay(waited, () => 0.5);
    assert.ok(delay !== null && delay >= 3_000 && delay <= 4_000, `waited ${waited}: ${delay}`);
  }
});

test("pairing stops asking on its own after two minutes", () => {
  assert.equal(pairingPollDelay(PAIRING_WINDOW_MS), null);
  assert.equal(pairingPollDelay(PAIRING_WINDOW_MS * 5), null);
});

test("while the app asks the person, polling never ends and slows down after the window", () => {
  assert.equal(askingPollDelay(0, () => 0), PAIRING_POLL_MS);
  assert.equal(askingPollDelay(PAIRING_WINDOW_MS - 1, () => 0), PAIRING_POLL_MS);
  assert.equal(askingPollDelay(PAIRING_WINDOW_MS, () => 0), PAIRING_SLOW_POLL_MS);
  assert.equal(askingPollDelay(24 * 3600_000, () => 1), Math.round(PAIRING_SLOW_POLL_MS * 1.3));
});
