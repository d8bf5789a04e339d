// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import {
  CloseCode,
  DEFAULT_RELAY_PORT,
  EXTENDED_METHODS,
  exceedsFrameLimit,
  KEEPALIVE_INTERVAL_MS,
  MessageType,
  RELAY_HOST,
  SEED_METHODS,
} from "../src/shared/protocol.js";

test("the relay host is the loopback literal", () => {
  assert.equal(RELAY_HOST, "127.0.0.1");
  assert.equal(DEFAULT_RELAY_PORT, 23001);
});

test("the extension pings well within the 30-second service-worker idle limit", () => {
  assert.ok(KEEPALIVE_INTERVAL_MS <= 20_000);
});

test("seed and extended methods do not overlap", () => {
  assert.deepEqual(SEED_METHODS.filter((m) => EXTENDED_METHODS.includes(m)), []);
});

test("close codes are distinct and in the private range", () => {
  const codes = Object.values(CloseCode);
  assert.equal(new Set(codes).size, codes.length);
  assert.ok(codes.every((c) => c >= 4000 && c <= 4999));
});

test("protocol constants cannot be changed at run time", () => {
  for (const frozen of [SEED_METHODS, EXTENDED_METHODS, MessageType, CloseCode]) {
    assert.ok(Object.isFrozen(frozen));
  }
});

test("a frame's size is its UTF-8 bytes, as the app counts them", () => {
  assert.equal(exceedsFrameLimit("a".repeat(10), 10), false);
  assert.equal(exceedsFrameLimit("a".repeat(11), 10), true);
  assert.equal(exceedsFrameLimit("\u20ac".repeat(3), 9), false); // 3 code units, 9 bytes
  assert.equal(exceedsFrameLimit("\u20ac".repeat(4), 9), true); // 4 code units, 12 bytes
  assert.equal(exceedsFrameLimit("\u{1F600}", 4), false); // 2 code units, 4 bytes
  assert.equal(exceedsFrameLimit("\u{1F600}a", 4), true);
});
