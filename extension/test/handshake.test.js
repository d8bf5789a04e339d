// @ts-check
import assert from "node:assert/strict";
import test from "node:test";

import { appProof, base64url, extensionProof, newNonce, newPairingCode, proofsMatch } from "../src/shared/handshake.js";

// Computed with the app's desktop/tabrelay/protocol/handshake.py (the Python drift test checks
// many more inputs against it).
const TOKEN = "kQ1x0Zt8mWlq3yJ7vXH2n4Rr9sPp6cAeFgBd5uTiLoM";
const APP_NONCE = "Qm9ndXNBcHBOb25jZUZvclRlc3RzT25seTEyMzQ1Njc";
const EXTENSION_NONCE = "RXh0ZW5zaW9uTm9uY2VGb3JUZXN0c09ubHk5ODc2NTQ";
const binding = { port: 23001, appNonce: APP_NONCE, extensionNonce: EXTENSION_NONCE };

test("the extension's proof is the one the app computes", async () => {
  assert.equal(await extensionProof(TOKEN, binding), "fdArDj85AykCGuxsi1Mzxaa8c0JgqNXGlfwIOiE3V-o");
});

test("the app's proof the extension expects is the one the app sends", async () => {
  assert.equal(await appProof(TOKEN, binding), "mjgNTyAc9KuX8M-dyew1TVafszzTHxRBvRLek2J9e4I");
});

test("a non-ASCII token is hashed as UTF-8, like the app does", async () => {
  const proof = await extensionProof("ü".repeat(43), { ...binding, port: 1 });
  assert.equal(proof, "VDS65R6YksH3qYgoOtl1dBiqauPEH8MvW_uWqSAi-Yg");
});

test("a proof for one role, port or nonce is useless for another", async () => {
  const original = await extensionProof(TOKEN, binding);
  assert.notEqual(await appProof(TOKEN, binding), original);
  assert.notEqual(await extensionProof(TOKEN, { ...binding, port: 23002 }), original);
  assert.notEqual(await extensionProof(TOKEN, { ...binding, appNonce: EXTENSION_NONCE }), original);
});

test("nonces are 32 random bytes in unpadded base64url", () => {
  const nonces = new Set(Array.from({ length: 50 }, () => newNonce()));
  assert.equal(nonces.size, 50);
  for (const nonce of nonces) {
    assert.match(nonce, /^[A-Za-z0-9_-]{43}$/);
  }
});

test("base64url has no padding and uses - and _", () => {
  assert.equal(base64url(new Uint8Array([0xfb, 0xff])), "-_8");
});

test("proofs compare equal only when identical, and never throw on odd input", () => {
  assert.equal(proofsMatch("abc", "abc"), true);
  assert.equal(proofsMatch("abc", "abd"), false);
  assert.equal(proofsMatch("abc", "ab"), false);
  assert.equal(proofsMatch("abc", ""), false);
  assert.equal(proofsMatch("abc", undefined), false);
  assert.equal(proofsMatch("abc", 42), false);
  assert.equal(proofsMatch("abc", "abcd"), false);
});

test("a pairing code is six unambiguous letters and digits, fresh each time", () => {
  const codes = new Set(Array.from({ length: 200 }, () => newPairingCode()));
  assert.ok(codes.size > 190, "random");
  for (const code of codes) {
    assert.match(code, /^[A-HJ-NP-Z2-9]{6}$/);
  }
});
