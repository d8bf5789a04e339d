// @ts-check
/**
 * The challenge–response of DESIGN §4.4 / docs/protocol.md, with WebCrypto.
 *
 * P_role = base64url_nopad(HMAC-SHA256(key = UTF-8(token),
 *                                      msg = UTF-8("tabrelay/1 <role> <port> <A> <E>")))
 * The token itself never leaves the extension; a proof is bound to the role, the port and both
 * nonces, so it is useless anywhere else. Pure (crypto is injected), tested against the app's
 * handshake.py by tests/unit/test_extension_protocol.py.
 */

import {
  NONCE_BYTES,
  PAIRING_CODE_ALPHABET,
  PAIRING_CODE_LENGTH,
  PROTOCOL_VERSION,
  ROLE_APP,
  ROLE_EXTENSION,
} from "./protocol.js";

const encoder = new TextEncoder();

/**
 * @param {Uint8Array} bytes
 * @returns {string} base64url without padding
 */
export function base64url(bytes) {
  let binary = "";
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * A fresh random nonce (32 bytes, base64url).
 * @param {Crypto} [cryptoImpl]
 * @returns {string}
 */
export function newNonce(cryptoImpl = globalThis.crypto) {
  return base64url(cryptoImpl.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

/**
 * A fresh pairing code: PAIRING_CODE_LENGTH letters and digits that cannot be mistaken for one
 * another (32 symbols, so each is 5 random bits, no bias).
 * @param {Crypto} [cryptoImpl]
 * @returns {string}
 */
export function newPairingCode(cryptoImpl = globalThis.crypto) {
  const bytes = cryptoImpl.getRandomValues(new Uint8Array(PAIRING_CODE_LENGTH));
  return Array.from(bytes, (b) => PAIRING_CODE_ALPHABET[b % PAIRING_CODE_ALPHABET.length]).join("");
}

/**
 * The proof that `role` knows `token` for one connection.
 *
 * @param {string} token
 * @param {{role: string, port: number, appNonce: string, extensionNonce: string}} binding
 * @param {SubtleCrypto} [subtle]
 * @returns {Promise<string>}
 */
export async function proof(token, { role, port, appNonce, extensionNonce }, subtle = globalThis.crypto.subtle) {
  const key = await subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const message = `tabrelay/${PROTOCOL_VERSION} ${role} ${port} ${appNonce} ${extensionNonce}`;
  const digest = await subtle.sign("HMAC", key, encoder.encode(message));
  return base64url(new Uint8Array(digest));
}

/**
 * @param {string} token
 * @param {{port: number, appNonce: string, extensionNonce: string}} binding
 * @param {SubtleCrypto} [subtle]
 */
export function extensionProof(token, binding, subtle) {
  return proof(token, { role: ROLE_EXTENSION, ...binding }, subtle);
}

/**
 * @param {string} token
 * @param {{port: number, appNonce: string, extensionNonce: string}} binding
 * @param {SubtleCrypto} [subtle]
 */
export function appProof(token, binding, subtle) {
  return proof(token, { role: ROLE_APP, ...binding }, subtle);
}

/**
 * Constant-time comparison of two proofs on their UTF-8 bytes; anything but a string is unequal.
 *
 * @param {string} expected
 * @param {unknown} given
 * @returns {boolean}
 */
export function proofsMatch(expected, given) {
  if (typeof given !== "string") {
    return false;
  }
  const a = encoder.encode(expected);
  const b = encoder.encode(given);
  // Length is not secret (every proof is 43 characters); the content comparison does not
  // stop at the first difference.
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i += 1) {
    difference |= a[i] ^ (b[i % Math.max(b.length, 1)] ?? 0);
  }
  return difference === 0;
}
